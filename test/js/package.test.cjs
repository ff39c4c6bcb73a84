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

const root = path.join(__dirname, '..', '..');

test('npm pack ships the core; an installed copy works from require and import', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-pkg-'));
  try {
    // --ignore-scripts: `make test` has just built build/darmok.wasm.
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
      { cwd: root, encoding: 'utf8' }));
    const files = packed[0].files.map((f) => f.path);
    for (const f of ['build/darmok.wasm', 'js/index.cjs', 'js/index.mjs', 'js/json.cjs', 'js/index.d.ts', 'package.json',
      'js/protobuf.cjs', 'js/protobuf.mjs', 'js/protobuf.d.ts', 'build/protobuf-c/LICENSE',
      'proto/darmok.proto', 'docs/FORMAT.md']) { // the schema FORMAT.md specifies the protobuf format by
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('wasm/') || f.startsWith('bench/')), 'no sources or tests shipped');

    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(dir, packed[0].filename)],
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
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
