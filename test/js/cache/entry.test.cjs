'use strict';
/*
 * darmok/redis without a server: the entry envelope (docs/CACHE.md "The
 * stored entry"), the entry points (require, import, the package export
 * "./redis"), and what createCache refuses.
 */
const { test } = require('node:test');
const { assert, throwsCode } = require('../helpers.cjs');
const { pack, unpack } = require('../../../js/internal.cjs').entry;
const redis = require('darmok/redis');
const { createCodec } = require('../../../js/index.cjs');

test('pack writes the envelope and the document; unpack reads both back', () => {
  assert.strictEqual(pack('json', 1767225600000, '{"a":1}'), 'darmok/1 json 1767225600000\n{"a":1}');
  const bytes = Buffer.from([0, 10, 255, 13]);
  const entry = pack('protobuf', 42, bytes);
  assert.ok(entry.equals(Buffer.concat([Buffer.from('darmok/1 protobuf 42\n'), bytes])));
  const back = unpack(entry);
  assert.strictEqual(back.format, 'protobuf');
  assert.strictEqual(back.staleAt, 42);
  assert.ok(Buffer.from(back.doc).equals(bytes), 'a newline inside the document is the document\'s');
  assert.deepStrictEqual(unpack('darmok/1 json 7\n{"a":"\n"}'), { format: 'json', staleAt: 7, doc: '{"a":"\n"}', createdAt: 0, tags: null });
  const asBytes = unpack(Buffer.from('darmok/1 json 7 later-field\n[1]'));
  assert.deepStrictEqual([asBytes.format, asBytes.staleAt, asBytes.doc.toString()], ['json', 7, '[1]'],
    'fields after staleAt are ignored');
  // Tags: two name=value fields after staleAt, in text and in bytes.
  const tagged = pack('json', 9, '[2]', ' c=5 t=user:42,caf\u00e9');
  assert.strictEqual(tagged, 'darmok/1 json 9 c=5 t=user:42,caf\u00e9\n[2]');
  for (const form of [tagged, Buffer.from(tagged)]) {
    const e = unpack(form);
    assert.deepStrictEqual([e.staleAt, e.createdAt, e.tags, String(e.doc)], [9, 5, ['user:42', 'caf\u00e9'], '[2]']);
  }
  const pb = unpack(pack('protobuf', 9, Buffer.from([1, 2]), ' c=5 t=a'));
  assert.deepStrictEqual([pb.createdAt, pb.tags, [...pb.doc]], [5, ['a'], [1, 2]]);
});

test('unpack names what is wrong with an entry that is not revision 1', () => {
  for (const [raw, why] of [
    ['{"a":1}', /no darmok\/redis header/],
    [`darmok/1 json ${'9'.repeat(200)}\n{}`, /malformed/],
    [`darmok/1 json 1 ${'x'.repeat(1100)}\n{}`, /no darmok\/redis header/],
    ['darmok/2 json 1\n{}', /envelope revision .*darmok\/2/],
    ['darmok/1 xml 1\n<a/>', /malformed/],
    ['darmok/1 json -1\n{}', /malformed/],
    ['darmok/1 json\n{}', /malformed/],
    [Buffer.from([0xff, 0xfe, 0x0a]), /no darmok\/redis header/]
  ]) {
    assert.match(unpack(raw), why, String(raw));
  }
});

test('darmok/redis from require and import is one module; .default for TypeScript', async () => {
  const esm = await import('darmok/redis');
  assert.strictEqual(esm.createCache, redis.createCache);
  assert.strictEqual(esm.default, redis);
  assert.strictEqual(redis.default, redis);
  assert.strictEqual(redis.LOCK_SUFFIX, ':darmok-lock');
});

test('createCache refuses what it cannot use, with ERR_INVALID_OPTION', () => {
  const { createCache } = redis;
  // The shape of an ioredis client is enough (no instanceof); a plain object is not a client.
  const fakeIoredis = { getBuffer() {}, mgetBuffer() {}, isCluster: false, status: 'ready' };
  throwsCode(() => createCache({ client: {} }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache(), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, format: 'xml' }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, ttl: 0 }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, timeout: -1 }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, failOpen: 'no' }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, lock: 'yes' }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, prefix: 1 }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCache({ client: fakeIoredis, codec: createCodec({ format: 'json' }), format: 'protobuf' }), 'ERR_INVALID_OPTION');
  const cache = createCache({ client: fakeIoredis, codec: createCodec({ format: 'protobuf' }), prefix: 'p:' });
  assert.strictEqual(cache.format, 'protobuf');
  assert.strictEqual(cache.redisKey('k'), 'p:k');
  throwsCode(() => cache.on('nope', () => {}), 'ERR_INVALID_OPTION');
  return Promise.all([
    assert.rejects(cache.get(1), (e) => e.code === 'ERR_INVALID_OPTION'),
    assert.rejects(cache.getOrSet('k', null, 'not a function'), (e) => e.code === 'ERR_INVALID_OPTION'),
    assert.rejects(cache.mget('k'), (e) => e.code === 'ERR_INVALID_OPTION'),
    assert.rejects(cache.set('k', 1, { ttl: -5 }), (e) => e.code === 'ERR_INVALID_OPTION')
  ]);
});
