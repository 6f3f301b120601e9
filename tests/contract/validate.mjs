// SPDX-License-Identifier: Apache-2.0
// validate.mjs - check sluice's slurmrestd request bodies and response
// fixtures against Slurm's OpenAPI documents.
//
// Usage: node validate.mjs <spec-dir> <allowlist.json> <file-or-dir>...
// Each file is named <version>/<kind>_<case>.json; <kind> picks the schema
// (see SCHEMAS).  A request body must also declare nothing its schema does
// not (keyword "undeclared", see undeclared()).  One line per file: "ok",
// "allowed" (every error matched an allow-list entry) or "INVALID" with the
// errors.  Exit 0 only when no file
// is INVALID; exit 2 on usage or setup errors.
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const [specDir, allowPath, ...inputs] = process.argv.slice(2);
if (!specDir || !allowPath || inputs.length === 0) {
  console.error('usage: node validate.mjs <spec-dir> <allowlist.json> <file-or-dir>...');
  process.exit(2);
}

// kind -> [document suffix, schema name without the version prefix]
const V38 = {
  body: ['slurm', 'v0.0.38_job_submission'],
  submit: ['slurm', 'v0.0.38_job_submission_response'],
  job: ['slurm', 'v0.0.38_jobs_response'],
  jobs: ['slurm', 'v0.0.38_jobs_response'],
  error: ['slurm', 'v0.0.38_jobs_response'],
  acct: ['slurmdb', 'dbv0.0.38_job_info'],
  diag: ['slurm', 'v0.0.38_diag'],
  nodes: ['slurm', 'v0.0.38_nodes_response'],
  ping: ['slurm', 'v0.0.38_pings'],
};
const NEWER = {
  body: 'job_submit_req',
  submit: 'openapi_job_submit_response',
  job: 'openapi_job_info_resp',
  jobs: 'openapi_job_info_resp',
  state: 'openapi_job_info_resp', // what the documents claim; see the allow-list
  error: 'openapi_resp',
  acct: 'openapi_slurmdbd_jobs_resp',
  diag: 'openapi_diag_resp',
  nodes: 'openapi_nodes_resp',
  ping: 'openapi_ping_array_resp',
  cancel: 'openapi_kill_job_resp',
};
// Where a version's document names a kind's schema otherwise: v0.0.40 and
// v0.0.41 answer DELETE /slurm/vX/job/{job_id} with the plain openapi_resp
// (openapi_kill_jobs_resp is DELETE /jobs/; openapi_kill_job_resp is v0.0.42+).
const BY_VERSION = {
  'v0.0.40': { cancel: 'openapi_resp' },
  'v0.0.41': { cancel: 'openapi_resp' },
};

// An entry may narrow itself further with "params": {name: regex}, matched
// against ajv's error params (e.g. missingProperty of a "required" error).
const allow = JSON.parse(fs.readFileSync(allowPath, 'utf8')).entries.map((e) => ({
  ...e,
  fileRe: new RegExp(e.file),
  pathRe: new RegExp(e.instancePath),
  paramRes: Object.entries(e.params ?? {}).map(([k, re]) => [k, new RegExp(re)]),
}));

function paramsMatch(a, err) {
  return a.paramRes.every(([k, re]) => err.params?.[k] !== undefined && re.test(String(err.params[k])));
}

const ajvs = new Map();
const components = new Map();
function validator(version, kind) {
  let doc;
  let schema;
  if (version === 'v0.0.38') {
    if (!V38[kind]) return null;
    doc = `v0.0.38-${V38[kind][0]}.json`;
    schema = V38[kind][1];
  } else {
    const name = BY_VERSION[version]?.[kind] ?? NEWER[kind];
    if (!name) return null;
    doc = `${version}.json`;
    schema = `${version}_${name}`;
  }
  let ajv = ajvs.get(doc);
  if (!ajv) {
    const spec = JSON.parse(fs.readFileSync(path.join(specDir, doc), 'utf8'));
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: doc, components: spec.components });
    ajvs.set(doc, ajv);
    components.set(doc, spec.components);
  }
  const fn = ajv.getSchema(`${doc}#/components/schemas/${schema}`);
  if (!fn) throw new Error(`${doc}: no schema ${schema}`);
  return { fn, name: `${doc}#${schema}`, doc, schema };
}

// Members of a request body that its schema does not declare.  slurmrestd
// ignores an unknown member of a request with a warning ("Ignoring unknown
// field"), so a field renamed or removed between versions (v0.0.46 renamed
// job_desc_msg's container_type to runtime) would be dropped without an
// error; the documents do not say additionalProperties: false, so ajv alone
// accepts it.  Objects without "properties" (free-form maps) are not walked.
function resolve(comps, s) {
  let out = s;
  for (let hops = 0; out?.$ref && hops < 32; hops++) {
    out = comps.schemas[out.$ref.replace('#/components/schemas/', '')];
  }
  return out;
}

function undeclared(comps, schema, data, ptr, out) {
  const s = resolve(comps, schema);
  if (!s || data === null || typeof data !== 'object') return out;
  if (Array.isArray(data)) {
    if (s.items) data.forEach((d, i) => undeclared(comps, s.items, d, `${ptr}/${i}`, out));
    return out;
  }
  if (!s.properties) return out;
  for (const [k, v] of Object.entries(data)) {
    if (Object.hasOwn(s.properties, k)) {
      undeclared(comps, s.properties[k], v, `${ptr}/${k}`, out);
    } else {
      out.push({
        instancePath: `${ptr}/${k}`,
        keyword: 'undeclared',
        message: 'member not declared by the schema (slurmrestd would ignore it)',
        params: { member: k },
      });
    }
  }
  return out;
}

function collect(p, out) {
  if (fs.statSync(p).isDirectory()) {
    for (const e of fs.readdirSync(p).sort()) collect(path.join(p, e), out);
  } else if (p.endsWith('.json')) {
    out.push(p);
  }
}

const files = [];
for (const i of inputs) collect(i, files);
let invalid = 0;
for (const file of files) {
  const version = path.basename(path.dirname(file));
  const base = path.basename(file, '.json');
  const kind = base.split('_')[0];
  const id = `${version}/${path.basename(file)}`;
  let v;
  try {
    v = validator(version, kind);
  } catch (e) {
    console.log(`INVALID ${id}: ${e.message}`);
    invalid++;
    continue;
  }
  if (!v) {
    console.log(`INVALID ${id}: no schema for kind "${kind}" in ${version}`);
    invalid++;
    continue;
  }
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  const errors = v.fn(data) ? [] : [...v.fn.errors];
  if (kind === 'body') {
    const comps = components.get(v.doc);
    undeclared(comps, comps.schemas[v.schema], data, '', errors);
  }
  if (errors.length === 0) {
    console.log(`ok ${id} (${v.name})`);
    continue;
  }
  const used = new Set();
  const left = errors.filter((err) => {
    const hit = allow.find(
      (a) =>
        a.fileRe.test(id) &&
        a.pathRe.test(err.instancePath) &&
        a.keyword === err.keyword &&
        paramsMatch(a, err),
    );
    if (hit) used.add(hit.id);
    return !hit;
  });
  if (left.length === 0) {
    console.log(`allowed ${id} (${v.name}) by ${[...used].sort().join(',')}`);
  } else {
    invalid++;
    const text = left
      .map((e) => `${e.instancePath || '/'} ${e.keyword}: ${e.message}`)
      .join('; ');
    console.log(`INVALID ${id} (${v.name}): ${text}`);
  }
}
console.log(`summary: ${files.length} files, ${invalid} invalid`);
process.exit(invalid === 0 ? 0 : 1);
