'use strict';
/*
 * What the docs tell Cloudflare Workers users is what the runtime matrix
 * (test/runtimes/matrix.mjs) tested: workerd compiles no WebAssembly from
 * bytes, so darmok/inline cannot work there and the way in is init(wasm).
 */
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert/strict');

const ROOT = path.join(__dirname, '..', '..', '..');

/* README.md, docs/*.md and the examples' READMEs, as [path, text]. */
function userDocs() {
  const files = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const dir of fs.readdirSync(path.join(ROOT, 'examples'))) {
    if (fs.existsSync(path.join(ROOT, 'examples', dir, 'README.md'))) files.push(`examples/${dir}/README.md`);
  }
  return files.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]);
}

test('no doc offers darmok/inline to a worker without pointing at init(wasm)', () => {
  let seen = 0;
  const wrong = [];
  for (const [file, text] of userDocs()) {
    // Paragraphs and list items, each read as a whole; tables name features, not advice.
    const prose = text.replace(/^[ \t]*\|.*$/gm, '');
    for (const part of prose.split(/\n[ \t]*\n|\n(?=[ \t]*[-*] )/)) {
      if (!part.includes('darmok/inline') || !/worker/i.test(part)) continue;
      seen++;
      if (!part.includes('init(wasm)')) wrong.push(`${file}: ${part.trim()}`);
    }
  }
  assert.ok(seen > 0, 'no doc speaks of darmok/inline and workers at all');
  assert.deepEqual(wrong, [], 'these mention darmok/inline and workers without init(wasm)');
});
