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

/*
 * Each fenced block of docs/ECOSYSTEM.md's "Cloudflare Workers" is a file
 * of examples/cloudflare-worker, the Worker the matrix serves with workerd,
 * named by the comment above it: as [file, language, text].
 */
function workerBlocks() {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/ECOSYSTEM.md'), 'utf8');
  const start = doc.indexOf('\n## Cloudflare Workers\n');
  assert.ok(start >= 0, 'docs/ECOSYSTEM.md has no "Cloudflare Workers" section');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? doc.length : end);
  return [...section.matchAll(/(?:<!-- verbatim: (\S+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => [m[1], m[2], m[3]]);
}

test("docs/ECOSYSTEM.md's Cloudflare Worker is examples/cloudflare-worker's files, verbatim", () => {
  const blocks = workerBlocks();
  for (const [file, lang, text] of blocks) {
    assert.ok(file, `a \`\`\`${lang} block in "Cloudflare Workers" is not marked <!-- verbatim: FILE -->:\n${text}`);
    assert.equal(text, fs.readFileSync(path.join(ROOT, file), 'utf8'), `docs/ECOSYSTEM.md's copy of ${file} differs from the file`);
  }
  const shown = blocks.map(([file]) => file);
  const example = 'examples/cloudflare-worker';
  for (const file of ['src/worker.mjs', 'wrangler.toml', 'config.capnp']) {
    assert.ok(fs.existsSync(path.join(ROOT, example, file)), `${example}/${file} is missing`);
    assert.ok(shown.includes(`${example}/${file}`), `docs/ECOSYSTEM.md does not show ${example}/${file}`);
  }
});

test("examples/cloudflare-worker's wrangler.toml runs the Worker workerd serves, on the same date", () => {
  const dir = path.join(ROOT, 'examples/cloudflare-worker');
  const toml = fs.readFileSync(path.join(dir, 'wrangler.toml'), 'utf8');
  const capnp = fs.readFileSync(path.join(dir, 'config.capnp'), 'utf8');
  const main = /^main = "([^"]+)"$/m.exec(toml);
  assert.ok(main, 'wrangler.toml has no main');
  assert.ok(fs.existsSync(path.join(dir, main[1])), `wrangler.toml's main ${main[1]} is missing`);
  assert.equal(main[1], 'src/worker.mjs', 'wrangler.toml runs another Worker than the matrix serves');
  const date = /^compatibility_date = "([^"]+)"$/m.exec(toml);
  const capnpDate = /compatibilityDate = "([^"]+)"/.exec(capnp);
  assert.ok(date && capnpDate, 'a compatibility date is missing');
  assert.equal(date[1], capnpDate[1], 'wrangler.toml and config.capnp name different compatibility dates');
});
