'use strict';
/*
 * The real `darmok` binary (js/cli.cjs through node): inspect on fixture
 * files, standard input and keys in a real redis-server; convert both ways;
 * bad input exits 1 with the DarmokError's code, offset and path; usage
 * errors exit 2; colour only on a terminal.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync, spawn } = require('node:child_process');
const darmok = require('../../../js/index.cjs');
const pb = require('../../../js/protobuf.cjs');
const { makeFoo } = require('../package/browser/graph.cjs');
const { startRedis } = require('../redis-servers.cjs');

const root = path.join(__dirname, '..', '..', '..');
const cli = path.join(root, 'js', 'cli.cjs');
const fixture = (name) => path.join(__dirname, '..', 'fixtures', name);
const JSON_FILE = fixture('foo.darmok.json');
const PB_FILE = fixture('foo.darmok.pb');
const jsonText = fs.readFileSync(JSON_FILE, 'utf8');
const pbBytes = fs.readFileSync(PB_FILE);

function darmokCli(args, input) {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  const res = spawnSync(process.execPath, [cli, ...args], { input, env, encoding: input instanceof Buffer ? 'buffer' : 'utf8' });
  return { ...res, stderr: res.stderr.toString() };
}

const TREE = `Foo v1
  title: "article"
  count: 0
  bars: Array(2)
    [0]: Bar v1
      name: "first"
      when: Date 2019-03-01T10:00:00.000Z
      baz: Baz v1 #4
        label: "shared"
        counts: Map(2)
          "x" => 1
          "y" => 2
    [1]: Bar v1
      name: "second"
      when: Date 2021-07-15T18:30:00.000Z
      baz: Baz v1
        label: "own"
        counts: Map(1)
          "z" => 3
  bazById: Map(3)
    "a" => → #4
    "b" => Baz v1
      label: "b"
      counts: Map(2)
        "p" => 10
        "q" => 20
    "c" => Baz v1
      label: "c"
      counts: Map(0)
`;

test('the fixtures are what darmok writes for the Foo graph today', () => {
  assert.equal(jsonText, darmok.encodeEntity(makeFoo()));
  assert.deepStrictEqual(pbBytes, pb.encodeEntity(makeFoo()));
});

test('inspect FILE: the tree, its size and format', () => {
  const res = darmokCli(['inspect', JSON_FILE]);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stdout, `${JSON_FILE}: darmok json document, ${Buffer.byteLength(jsonText)} bytes\n${TREE}`);
  assert.doesNotMatch(res.stdout, /\u001b/, 'no colour when piped');
});

test('inspect - (stdin), protobuf detected: the same tree', () => {
  const res = darmokCli(['inspect', '-'], pbBytes);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stdout.toString(), `stdin: darmok protobuf document, ${pbBytes.length} bytes\n${TREE}`);
});

test('inspect: versions, Sets, BigInts, binary sizes, holes, cycles', () => {
  class Doc { constructor() { this.self = this; } }
  const reg = darmok.createRegistry();
  reg.serializable(Doc, { key: 'app.Doc', version: 3, migrate: { 1: (d) => d, 2: (d) => d } });
  const doc = new Doc();
  // eslint-disable-next-line no-sparse-arrays
  doc.list = [1, , , 2];
  doc.tags = new Set(['a', 7n]);
  doc.bin = Buffer.alloc(300);
  doc.neg = -0;
  const text = darmok.createCodec({ registry: reg }).encodeEntity(doc);
  const res = darmokCli(['inspect', '--format', 'json'], text);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stdout.split('\n').slice(1).join('\n'), `app.Doc v3 #0
  self: → #0
  list: Array(4)
    [0]: 1
    [1]: <2 empty items>
    [3]: 2
  tags: Set(2)
    - "a"
    - 7n
  bin: Buffer (300 bytes)
  neg: -0
`);
});

test('inspect --json: the document as darmok JSON, from either format', () => {
  for (const input of [jsonText, pbBytes]) {
    const res = darmokCli(['inspect', '--json'], input);
    assert.equal(res.status, 0);
    assert.equal(res.stdout.toString(), jsonText + '\n');
  }
});

test('convert: JSON to protobuf and back, byte for byte; files and stdin', () => {
  const toPb = darmokCli(['convert', '--to', 'protobuf', JSON_FILE], Buffer.alloc(0));
  assert.equal(toPb.status, 0, toPb.stderr);
  assert.deepStrictEqual(toPb.stdout, pbBytes);
  const toJson = darmokCli(['convert', '--to', 'json', '-'], pbBytes);
  assert.equal(toJson.stdout.toString(), jsonText + '\n');
  const same = darmokCli(['convert', '--to', 'json'], jsonText);
  assert.equal(same.stdout, jsonText + '\n');
});

test('convert and inspect --json write the UTF-8 of the text byte for byte: non-ASCII, a document over 128 KiB', () => {
  const value = { body: Array.from({ length: 9000 }, (_, i) => `na\u00efve \u6771\u4eac \ud83d\ude80 ${i}`).join(' '), lone: '\ud800', m: new Map([['\u00e9', 1n]]) };
  const doc = darmok.encodeEntity(value, { bytes: true });
  const text = Buffer.concat([doc, Buffer.from('\n')]);
  const blob = pb.encodeEntity(value);
  assert.ok(doc.length > 128 * 1024);
  for (const [args, input] of [[['convert', '--to', 'json'], blob], [['convert', '--to', 'json'], doc],
    [['inspect', '--json'], blob], [['inspect', '--json'], doc]]) {
    const res = darmokCli(args, input);
    assert.equal(res.status, 0, String(res.stderr));
    assert.ok(res.stdout.equals(text), args.join(' '));
  }
  assert.deepStrictEqual(darmokCli(['convert', '--to', 'protobuf'], doc).stdout, blob);
});

test('bad input: exit 1, the DarmokError code, offset and path on stderr', () => {
  const bad = darmokCli(['inspect'], jsonText.slice(0, 120));
  assert.equal(bad.status, 1);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /^darmok inspect: ERR_SYNTAX: /);
  assert.match(bad.stderr, /\n {2}offset: 120\n/);
  assert.match(bad.stderr, /\n {2}path: \$\.bars\[0\]\n/);

  const wrongFormat = darmokCli(['inspect', '--format', 'json', PB_FILE]);
  assert.equal(wrongFormat.status, 1);
  assert.match(wrongFormat.stderr, /ERR_SYNTAX[\s\S]*offset: 0/);

  const truncated = darmokCli(['convert', '--to', 'json'], pbBytes.subarray(0, pbBytes.length - 3));
  assert.equal(truncated.status, 1);
  assert.match(truncated.stderr, /^darmok convert: ERR_FORMAT: [\s\S]*offset: \d+/);

  const missing = darmokCli(['inspect', path.join(__dirname, '..', 'fixtures', 'no-such-file')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /ENOENT/);
});

test('auto format: darmok protobuf by its signature (08 01, then 12, 1a or 22), not by a first byte of 08', () => {
  // Another application's protobuf message (field 1 = 150) is not taken for a darmok document.
  const other = darmokCli(['inspect'], Buffer.from([0x08, 0x96, 0x01]));
  assert.equal(other.status, 1);
  assert.match(other.stderr, /^darmok inspect: ERR_SYNTAX: /);
  assert.doesNotMatch(other.stderr, /protobuf/);
  const converted = darmokCli(['convert', '--to', 'protobuf'], Buffer.from([0x08, 0x96, 0x01]));
  assert.equal(converted.status, 1);
  assert.match(converted.stderr, /^darmok convert: ERR_SYNTAX: /);
  assert.equal(darmokCli(['inspect'], pbBytes).status, 0);
});

test('usage errors exit 2 with the usage; --help per command exits 0', () => {
  for (const args of [['inspect', '--bogus'], ['inspect', 'a', 'b'], ['inspect', '--format', 'xml', JSON_FILE],
    ['convert', JSON_FILE], ['convert', '--to', 'yaml'], ['frobnicate'], []]) {
    const res = darmokCli(args, '');
    assert.equal(res.status, 2, args.join(' '));
    assert.match(res.stderr + res.stdout, /Usage: darmok/);
  }
  for (const command of ['inspect', 'convert']) {
    const res = darmokCli([command, '--help']);
    assert.equal(res.status, 0);
    assert.match(res.stdout, new RegExp(`^Usage: darmok ${command}`));
  }
  assert.match(darmokCli(['--help']).stdout, /Commands:\n {2}inspect/);
});

test('colour on a terminal only', () => {
  // script(1) runs the binary on a pseudo-terminal.
  const res = spawnSync('script', ['-qec', `${process.execPath} ${cli} inspect ${JSON_FILE}`, '/dev/null'], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  assert.match(res.stdout, /\u001b\[36mFoo\u001b\[0m/);
  assert.match(res.stdout, /\u001b\[32m"article"\u001b\[0m/);
});

let redis;

before(async () => {
  redis = await startRedis();
  const set = (key, value) => new Promise((resolve, reject) => {
    // redis-cli -x takes the value from stdin as it is (binary safe).
    const child = spawn('redis-cli', ['-h', redis.host, '-p', String(redis.port), '-x', 'SET', key]);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`redis-cli SET ${key}: ${code}`))));
    child.stdin.end(value);
  });
  await set('app:foo:json', jsonText);
  await set('app:foo:pb', pbBytes);
  await set('app:broken', jsonText.slice(0, 120));
});

after(async () => {
  if (redis) await redis.stop();
});

function cliAsync(args, { env = {}, preload = [] } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...preload, cli, ...args], { env: { ...process.env, FORCE_COLOR: '0', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

test('inspect --redis: a key in either format, with --prefix', async () => {
  const json = await cliAsync(['inspect', '--redis', redis.url, 'foo:json', '--prefix', 'app:']);
  assert.equal(json.status, 0, json.stderr);
  assert.equal(json.stdout, `key "app:foo:json": darmok json document, ${Buffer.byteLength(jsonText)} bytes\n${TREE}`);
  const bin = await cliAsync(['inspect', '--redis', redis.url, 'app:foo:pb']);
  assert.equal(bin.status, 0, bin.stderr);
  assert.equal(bin.stdout, `key "app:foo:pb": darmok protobuf document, ${pbBytes.length} bytes\n${TREE}`);
  const asJson = await cliAsync(['inspect', '--redis', redis.url, 'app:foo:pb', '--json']);
  assert.equal(asJson.stdout, jsonText + '\n');
});

test('inspect --redis with every node-redis darmok/redis supports (4, 5, 6)', async () => {
  // The node-redis packages of redis-matrix.cjs, found by the CLI in place of @redis/client.
  for (const pkg of ['redis4', 'redis', 'redis6']) {
    const env = { DARMOK_TEST_NODE_REDIS: pkg };
    const preload = ['--require', path.join(__dirname, 'node-redis.cjs')];
    const bin = await cliAsync(['inspect', '--redis', redis.url, 'app:foo:pb'], { env, preload });
    assert.equal(bin.status, 0, `${pkg}: ${bin.stderr}`);
    assert.equal(bin.stdout, `key "app:foo:pb": darmok protobuf document, ${pbBytes.length} bytes\n${TREE}`, pkg);
    const missing = await cliAsync(['inspect', '--redis', redis.url, 'nope'], { env, preload });
    assert.equal(missing.status, 1, pkg);
    assert.match(missing.stderr, /no key "nope"/, pkg);
  }
});

test('inspect --redis: a missing key, a broken value, no server', async () => {
  const missing = await cliAsync(['inspect', '--redis', redis.url, 'nope']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no key "nope"/);
  const broken = await cliAsync(['inspect', '--redis', redis.url, 'app:broken']);
  assert.equal(broken.status, 1);
  assert.match(broken.stderr, /ERR_SYNTAX[\s\S]*offset: 120/);
  const noKey = await cliAsync(['inspect', '--redis', redis.url]);
  assert.equal(noKey.status, 2);
});

test('inspect --redis: a darmok/redis cache entry shows its envelope, in both formats', async () => {
  const { createClient } = require('redis');
  const { createCache } = require('../../../js/redis.cjs');
  const client = await createClient({ url: redis.url }).connect();
  try {
    for (const format of ['json', 'protobuf']) {
      const cache = createCache({ client, prefix: `cache:${format}:`, ttl: 60, format });
      await cache.set('foo', makeFoo());
      const res = await cliAsync(['inspect', '--redis', redis.url, `cache:${format}:foo`]);
      assert.equal(res.status, 0, res.stderr);
      const size = format === 'json' ? Buffer.byteLength(jsonText) : pbBytes.length;
      assert.equal(res.stdout, `key "cache:${format}:foo": darmok ${format} document, ${size} bytes\n` +
        `envelope:\n  revision: darmok/1\n  format: ${format}\n  staleAt: ${res.stdout.match(/staleAt: (\S+)/)[1]}\n` +
        `document:\n${TREE}`);
      assert.ok(Math.abs(Date.parse(res.stdout.match(/staleAt: (\S+)/)[1]) - (Date.now() + 60000)) < 10000);
    }
    await client.set('cache:bad', 'darmok/9 json 1\n{}');
    const bad = await cliAsync(['inspect', '--redis', redis.url, 'cache:bad']);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /ERR_FORMAT[\s\S]*envelope revision this process does not read \(darmok\/9\)/);
  } finally {
    await client.quit();
  }
});
