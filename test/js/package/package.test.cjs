'use strict';
/*
 * The package as a user gets it: `npm pack` ships the .wasm, and an app
 * that installs the tarball can `require('darmok')`, `import 'darmok'` and
 * use `darmok/json`, with one registry behind both module systems.
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..', '..', '..');

test('npm pack ships the core; an installed copy works from require and import', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-pkg-'));
  try {
    // --ignore-scripts: `make test` has just built build/darmok.wasm.
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
      { cwd: root, encoding: 'utf8' }));
    const files = packed[0].files.map((f) => f.path);
    for (const f of ['build/darmok.wasm', 'js/core/dk_abi.cjs', 'js/index.cjs', 'js/index.mjs', 'js/json.cjs', 'js/index.d.ts', 'package.json',
      'js/protobuf.cjs', 'js/protobuf.mjs', 'js/protobuf.d.ts', 'build/protobuf-c/LICENSE',
      'proto/darmok.proto', 'docs/FORMAT.md']) { // the schema FORMAT.md specifies the protobuf format by
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('wasm/') || f.startsWith('bench/')), 'no sources or tests shipped');

    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
    // --prefer-offline, not --offline: npm ci caches the tarball of the
    // runtime dependency but not its registry entry, which a fresh
    // machine's cache lacks.
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(dir, packed[0].filename)],
      { cwd: app, stdio: 'ignore' });

    // The .d.ts default export, as TypeScript's CommonJS output without
    // esModuleInterop reads it: require('darmok').default.
    fs.writeFileSync(path.join(app, 'ts-default.cjs'), `
      const darmok = require('darmok').default;
      const pb = require('darmok/protobuf').default;
      console.log(JSON.stringify([darmok.encodeEntity({ a: 1 }), pb.decodeEntity(pb.encodeEntity([1])).length]));
    `);
    assert.deepStrictEqual(JSON.parse(execFileSync(process.execPath, ['ts-default.cjs'], { cwd: app, encoding: 'utf8' })), ['{"a":1}', 1]);

    fs.writeFileSync(path.join(app, 'model.cjs'), `
      const { serializable } = require('darmok');
      class Point { constructor(x, y) { this.x = x; this.y = y; } len() { return Math.hypot(this.x, this.y); } }
      module.exports = serializable(Point);
    `);
    fs.writeFileSync(path.join(app, 'main.mjs'), `
      import { encodeEntity } from 'darmok';
      import json from 'darmok/json';
      import { encodeEntity as pbEncode, decodeEntity as pbDecode } from 'darmok/protobuf';
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const Point = require('./model.cjs');
      const text = encodeEntity({ p: new Point(3, 4), at: new Date(0) });
      const back = json.decodeEntity(text);
      const pbBack = pbDecode(pbEncode({ p: new Point(3, 4) }));
      console.log(JSON.stringify([text, back.p instanceof Point, back.p.len(), back.at.getTime(), pbBack.p instanceof Point]));
    `);
    const out = JSON.parse(execFileSync(process.execPath, ['main.mjs'], { cwd: app, encoding: 'utf8' }));
    assert.deepStrictEqual(out, ['{"p":{"$":"Point","x":3,"y":4},"at":{"$Date":"1970-01-01T00:00:00.000Z"}}', true, 5, 0, true]);

    // The entries of issue 27 from the installed copy: darmok/inline, darmok/serializer, and the bin.
    fs.writeFileSync(path.join(app, 'more.cjs'), `
      const inline = require('darmok/inline');
      const { keyvSerializer } = require('darmok/serializer');
      console.log(JSON.stringify([inline.encodeEntity(new Map([[1, 2]])), keyvSerializer.deserialize(keyvSerializer.serialize({ value: 5n })).value === 5n]));
    `);
    assert.deepStrictEqual(JSON.parse(execFileSync(process.execPath, ['more.cjs'], { cwd: app, encoding: 'utf8' })), ['{"$Map":[[1,2]]}', true]);
    const bin = execFileSync(path.join(app, 'node_modules', '.bin', 'darmok'), ['convert', '--to', 'json'],
      { cwd: app, input: require('../../../js/protobuf.cjs').encodeEntity([1n]), encoding: 'utf8' });
    assert.equal(bin, '[{"$BigInt":"1"}]\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/* What `npm pack` may ship: the code that runs, the core, its embedded copy, the schema, the docs, the licenses. */
const SHIPPED = [/^js\/[\w/-]+\.(cjs|mjs|d\.ts)$/, /^build\/darmok\.wasm$/, /^build\/darmok-inline\.cjs$/,
  /^build\/protobuf-c\/LICENSE$/, /^docs\/[\w-]+\.md$/, /^proto\/darmok\.proto$/, /^README\.md$/, /^LICENSE$/, /^package\.json$/];

test('npm pack --dry-run lists only what runs, and everything the entries need', () => {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }));
  const files = packed.files.map((f) => f.path);
  for (const f of files) assert.ok(SHIPPED.some((re) => re.test(f)), `${f} should not be in the tarball`);
  assert.ok(!files.includes('js/internal.cjs'), 'the test hooks (js/internal.cjs) are not shipped');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const needed = [pkg.bin.darmok, 'build/darmok-inline.cjs', 'js/core/dk_abi.cjs', 'LICENSE'];
  for (const entry of Object.values(pkg.exports)) {
    if (typeof entry === 'string') continue;
    needed.push(entry.types, entry.import, entry.require);
  }
  for (const list of Object.values(pkg.typesVersions['*'])) needed.push(...list);
  for (const f of needed) assert.ok(files.includes(f.replace(/^\.\//, '')), `${f} is in the tarball`);
  // One small runtime dependency, for darmok/redis on a cluster; the rest
  // of the package needs none, and no other file requires it.
  assert.deepStrictEqual(Object.keys(pkg.dependencies || {}), ['cluster-key-slot']);
  const requirers = files.filter((f) => f.endsWith('.cjs') && fs.readFileSync(path.join(root, f), 'utf8').includes("require('cluster-key-slot')"));
  assert.deepStrictEqual(requirers, ['js/cache/slots.cjs']);
});

test(`engines states the Node floor this run meets (tested on Node ${process.versions.node})`, () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const floor = /^>=(\d+)$/.exec(pkg.engines.node);
  assert.ok(floor, `engines.node is a plain floor: ${pkg.engines.node}`);
  assert.ok(Number(process.versions.node.split('.')[0]) >= Number(floor[1]));
  assert.equal(floor[1], '20');
});
