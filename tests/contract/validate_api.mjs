// SPDX-License-Identifier: Apache-2.0
// validate_api.mjs - check recorded answers of sluice's own API against
// openapi/sluice-v1.yaml (JSON Schema 2020-12, ajv).
//
// Usage: node validate_api.mjs <sluice-v1.yaml> <exchanges.json> [<not-exercised.json>]
// exchanges.json is an array of {method, route, path, status, content_type,
// headers: {lower-case name: value}, body (JSON value or text), events
// (for text/event-stream: the parsed `data:` objects)}; `route` is the
// document's path template.  One line per exchange: "ok" or "INVALID" with
// the reasons:
// - the route, or the method on it, is not in the document;
// - the status is not listed for it (405 counts when any operation of the
//   route lists it: it answers methods the route does not have);
// - the content type is not the one documented for that status;
// - a documented response header is missing;
// - the body (or each SSE event) does not match the response schema.
// Then one "MISSING" line per documented (route, method, status) that no
// exchange exercised, unless not-exercised.json names it with a reason.
// Exit 0 only when nothing is INVALID or MISSING; 2 on usage errors.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import YAML from 'yaml';

const [specPath, exchangesPath, exemptPath] = process.argv.slice(2);
if (!specPath || !exchangesPath) {
  console.error('usage: node validate_api.mjs <sluice-v1.yaml> <exchanges.json> [<not-exercised.json>]');
  process.exit(2);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const mainId = pathToFileURL(path.resolve(specPath)).href;
const spec = YAML.parse(fs.readFileSync(specPath, 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

// The main document and every document it references by file name.
const docs = new Map([[mainId, spec]]);
function collectRefs(node, base) {
  if (Array.isArray(node)) {
    node.forEach((n) => collectRefs(n, base));
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) {
        const file = new URL(v.split('#')[0], base).href;
        if (!docs.has(file)) {
          const doc = YAML.parse(fs.readFileSync(new URL(file), 'utf8'));
          docs.set(file, doc);
          collectRefs(doc, file);
        }
      } else {
        collectRefs(v, base);
      }
    }
  }
}
collectRefs(spec, mainId);
for (const [id, doc] of docs) ajv.addSchema({ ...doc, $id: id });

const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (parts) => '/' + parts.map(esc).join('/');

// A response object, following a local $ref; returns [object, pointer].
function response(route, method, status) {
  let ptr = ['paths', route, method, 'responses', status];
  let obj = spec.paths[route][method].responses[status];
  while (obj && obj.$ref && obj.$ref.startsWith('#/')) {
    ptr = obj.$ref.slice(2).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    obj = ptr.reduce((o, p) => (o ? o[p] : undefined), spec);
  }
  return [obj, ptr];
}

const validators = new Map();
function validatorAt(ptr) {
  const key = pointer(ptr);
  if (!validators.has(key)) validators.set(key, ajv.getSchema(`${mainId}#${key}`));
  return validators.get(key);
}
const eventValidator = () => validatorAt(['components', 'schemas', 'Event']);

const errText = (errors) =>
  errors.map((e) => `${e.instancePath || '/'} ${e.keyword}: ${e.message}`).join('; ');

const exchanges = JSON.parse(fs.readFileSync(exchangesPath, 'utf8'));
const exempt = exemptPath ? JSON.parse(fs.readFileSync(exemptPath, 'utf8')).entries : [];
const seen = new Set();
let invalid = 0;

for (const x of exchanges) {
  const m = x.method.toLowerCase();
  const id = `${x.method} ${x.path} -> ${x.status}`;
  const problems = [];
  const item = spec.paths[x.route];
  let op = item ? item[m] : undefined;
  let opMethod = m;
  const status = String(x.status);
  if (!item) {
    problems.push(`route ${x.route} is not in the document`);
  } else if (status === '405' && !op) {
    // an unsupported method: any operation of the route that lists 405
    opMethod = METHODS.find((k) => item[k] && item[k].responses && item[k].responses['405']);
    op = opMethod ? item[opMethod] : undefined;
    if (!op) problems.push(`405 is not listed for ${x.route}`);
  } else if (!op) {
    problems.push(`${x.method} is not an operation of ${x.route}`);
  }
  if (op && problems.length === 0) {
    if (!op.responses[status]) {
      problems.push(`status ${status} is not listed for ${opMethod.toUpperCase()} ${x.route}`);
    } else {
      seen.add(`${opMethod.toUpperCase()} ${x.route} ${status}`);
      const [resp, ptr] = response(x.route, opMethod, status);
      for (const h of Object.keys(resp.headers || {})) {
        if (!(h.toLowerCase() in (x.headers || {}))) problems.push(`header ${h} is missing`);
      }
      const ctype = (x.content_type || '').split(';')[0].trim();
      const content = resp.content || {};
      if (Object.keys(content).length === 0) {
        if (x.body !== '' && x.body !== null) problems.push('a body where the document has none');
      } else if (!content[ctype]) {
        problems.push(`content type "${x.content_type}" is not one of ${Object.keys(content).join(', ')}`);
      } else {
        const v = validatorAt([...ptr, 'content', ctype, 'schema']);
        if (!v) {
          problems.push('no schema for this response');
        } else if (!v(x.body)) {
          problems.push(`body: ${errText(v.errors)}`);
        }
        if (ctype === 'text/event-stream') {
          const ev = eventValidator();
          (x.events || []).forEach((e, i) => {
            if (!ev(e)) problems.push(`event ${i}: ${errText(ev.errors)}`);
          });
        }
      }
    }
  }
  if (problems.length > 0) {
    invalid++;
    console.log(`INVALID ${id}: ${problems.join('; ')}`);
  } else {
    console.log(`ok ${id}`);
  }
}

let missing = 0;
for (const [route, item] of Object.entries(spec.paths)) {
  for (const m of METHODS) {
    if (!item[m]) continue;
    for (const status of Object.keys(item[m].responses)) {
      const key = `${m.toUpperCase()} ${route} ${status}`;
      if (seen.has(key)) continue;
      // 405 belongs to the route: exercised once for any of its operations
      if (status === '405' && [...seen].some((s) => s.endsWith(` ${route} 405`))) continue;
      const why = exempt.find((e) => e.operation === `${m.toUpperCase()} ${route}` && String(e.status) === status);
      if (why) {
        console.log(`not exercised ${key}: ${why.reason}`);
        continue;
      }
      missing++;
      console.log(`MISSING ${key}: documented, never answered by the test`);
    }
  }
}
console.log(`summary: ${exchanges.length} exchanges, ${invalid} invalid, ${missing} missing`);
process.exit(invalid === 0 && missing === 0 ? 0 : 1);
