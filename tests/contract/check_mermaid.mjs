// check_mermaid.mjs SOURCE_DIR - parse every ```mermaid block in the
// repository's Markdown (README.md, docs/, src/, deploy/, clients/) with
// Mermaid's own parser, the one GitHub renders with, and fail on a block
// that does not parse.  It also checks that the diagrams the docs promise
// are there: a doc that lost its diagram fails as surely as a broken one.
//
// Mermaid needs a DOM even to parse, so it runs in jsdom.  Both are pinned
// in package.json beside this file (installed by `npm ci` in test-all.sh).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { JSDOM } from 'jsdom';

const root = process.argv[2] || '.';

// The diagrams the docs promise: file, then the diagram kinds it must hold
// (Mermaid's diagramType names), each at least once.
const REQUIRED = {
  'docs/state-machine.md': ['stateDiagram'],
  'docs/operations.md': ['sequence'],
  'docs/deployment.md': ['flowchart-v2'],
  'docs/architecture.md': ['flowchart-v2'],
};

function markdownFiles(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name === 'node_modules' || name.startsWith('.') || name.startsWith('build')) continue;
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) markdownFiles(path, out);
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

// Each fenced ```mermaid block: its first line number and its text.
function blocks(text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```mermaid') continue;
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i]);
    if (i >= lines.length) found.push({ line: start, text: null });
    else found.push({ line: start, text: body.join('\n') + '\n' });
  }
  return found;
}

const dom = new JSDOM('<!doctype html><html><body></body></html>', { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });

const files = [join(root, 'README.md')];
for (const d of ['docs', 'src', 'deploy', 'clients']) markdownFiles(join(root, d), files);

let passed = 0;
let failed = 0;
const kinds = {};
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  const rel = relative(root, file);
  for (const b of blocks(text)) {
    if (b.text === null) {
      console.log(`check-mermaid: ${rel}:${b.line}: the mermaid block is never closed`);
      failed++;
      continue;
    }
    try {
      const r = await mermaid.parse(b.text);
      (kinds[rel] ||= new Set()).add(r.diagramType);
      passed++;
    } catch (e) {
      const msg = String(e && e.message ? e.message : e).split('\n').slice(0, 3).join(' | ');
      console.log(`check-mermaid: ${rel}:${b.line}: does not parse: ${msg}`);
      failed++;
    }
  }
}
for (const [file, want] of Object.entries(REQUIRED)) {
  for (const kind of want) {
    if (kinds[file] && kinds[file].has(kind)) {
      passed++;
    } else {
      console.log(`check-mermaid: ${file}: has no ${kind} diagram (the docs promise one)`);
      failed++;
    }
  }
}
console.log(`check-mermaid: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
