'use strict';
/*
 * An app bundled with esbuild for Node runs from an empty folder, with no
 * node_modules: the default entry with build/darmok.wasm copied beside the
 * bundle (ESM and CommonJS bundles), darmok/inline from its one file alone.
 * Without the .wasm, the default bundle says where it looked and what to do.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..', '..', '..');
let dir;

// One small app, in three spellings of the import; it prints what it saw.
const BODY = `
class Point { constructor(x, y) { this.x = x; this.y = y; } len() { return Math.hypot(this.x, this.y); } }
serializable(Point, { key: 'Point' });
const value = { p: new Point(3, 4), at: new Date(0), m: new Map([[1n, new Uint8Array([7, 8])]]) };
value.self = value;
const text = encodeEntity(value);
const back = decodeEntity(text);
const bytes = pb.encodeEntity(value);
const pbBack = pb.decodeEntity(bytes);
console.log(JSON.stringify([text, back.p.len(), back.self === back, pbBack.p instanceof Point,
  Buffer.isBuffer(bytes), transcode(bytes, { from: 'protobuf', to: 'json' }) === text]));
`;
const APPS = {
  'esm.mjs': `import { encodeEntity, decodeEntity, serializable, transcode } from 'darmok';\nimport pb from 'darmok/protobuf';\n${BODY}`,
  'cjs.cjs': `const { encodeEntity, decodeEntity, serializable, transcode } = require('darmok');\nconst pb = require('darmok/protobuf');\n${BODY}`,
  'inline.mjs': `import { encodeEntity, decodeEntity, serializable, transcode, createCodec } from 'darmok/inline';\n` +
    `const pb = createCodec({ format: 'protobuf' });\n${BODY}`
};
const EXPECTED = ['{"p":{"$":"Point","x":3,"y":4},"at":{"$Date":"1970-01-01T00:00:00.000Z"},' +
  '"m":{"$Map":[[{"$BigInt":"1"},{"$Uint8Array":"Bwg="}]]},"self":{"$ref":0}}', 5, true, true, true, true];

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-bundle-'));
  const src = path.join(dir, 'src');
  fs.mkdirSync(path.join(src, 'node_modules'), { recursive: true });
  fs.symlinkSync(root, path.join(src, 'node_modules', 'darmok'), 'dir');
  for (const [name, text] of Object.entries(APPS)) fs.writeFileSync(path.join(src, name), text);
  await Promise.all(Object.keys(APPS).map((name) => esbuild.build({
    entryPoints: [path.join(src, name)], bundle: true, platform: 'node', target: 'node20',
    format: name.endsWith('.cjs') ? 'cjs' : 'esm', outfile: path.join(dir, 'out', name), logLevel: 'silent'
  })));
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

/* Copy the bundle (and the given extra files) into a new empty folder and run it there. */
function runAlone(name, extra = {}) {
  const empty = fs.mkdtempSync(path.join(dir, 'run-'));
  fs.copyFileSync(path.join(dir, 'out', name), path.join(empty, name));
  for (const [to, from] of Object.entries(extra)) fs.copyFileSync(from, path.join(empty, to));
  const res = spawnSync(process.execPath, [name], { cwd: empty, encoding: 'utf8', env: { PATH: process.env.PATH } });
  return { ...res, files: fs.readdirSync(empty).sort() };
}

const wasm = path.join(root, 'build', 'darmok.wasm');

for (const name of ['esm.mjs', 'cjs.cjs']) {
  test(`default entry, ${name} bundle: runs with darmok.wasm beside it`, () => {
    const res = runAlone(name, { 'darmok.wasm': wasm });
    assert.equal(res.status, 0, res.stderr);
    assert.deepStrictEqual(JSON.parse(res.stdout), EXPECTED);
    assert.ok(!res.files.includes('node_modules'));
  });

  test(`default entry, ${name} bundle: without darmok.wasm it says where it looked and what to do`, () => {
    const res = runAlone(name);
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /ERR_NOT_READY/);
    assert.match(res.stderr, /cannot find darmok\.wasm \(.*darmok\.wasm: ENOENT/);
    assert.match(res.stderr, /copy build\/darmok\.wasm beside your bundle, or use darmok\/inline/);
  });
}

test('darmok/inline bundle: one file, nothing beside it', () => {
  const res = runAlone('inline.mjs');
  assert.equal(res.status, 0, res.stderr);
  assert.deepStrictEqual(JSON.parse(res.stdout), EXPECTED);
  assert.deepStrictEqual(res.files, ['inline.mjs']);
  // The core travels inside the JavaScript: the bundle is bigger than the .wasm itself.
  assert.ok(fs.statSync(path.join(dir, 'out', 'inline.mjs')).size > fs.statSync(wasm).size);
});
