// darmok/serializer in the cache libraries' real packages, on a real
// redis-server through their Redis stores: Keyv (@keyv/redis),
// cache-manager 7 (a Keyv store) and BentoCache (its redis driver, L2 only,
// so every get reads Redis); with bytes: true there and in BentoCache's
// memory driver, the stores that take bytes. A Post with a Date, a Map, a BigInt, a Buffer
// and a shared reference comes back whole with darmok; each library's own
// default serializer loses them (asserted too).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import Keyv from 'keyv';
import KeyvRedis from '@keyv/redis';
import { createCache } from 'cache-manager';
import { BentoCache, bentostore } from 'bentocache';
import { redisDriver } from 'bentocache/drivers/redis';
import { createClient } from '@redis/client';
import { serializable } from '../../../js/index.mjs';
import { keyvSerializer, bentoSerializer, createSerializer } from '../../../js/serializer.mjs';

const require = createRequire(import.meta.url);
const { startRedis } = require('../redis-servers.cjs');
const { createRegistry } = require('../../../js/index.cjs');

class Post {
  constructor(title, at, views, likes, thumb, author) {
    this.title = title;
    this.at = at;
    this.views = views;
    this.likes = likes;
    this.thumb = thumb;
    this.author = author;
    this.editor = author;
  }

  age(now) {
    return now - this.at.getTime();
  }
}
serializable(Post, { key: 'test.Post' });

const makePost = ({ bigint = true } = {}) => {
  const p = new Post('hello', new Date(Date.UTC(2024, 0, 2)), new Map([['mon', 3], ['tue', 5]]),
    bigint ? 12345678901234567890n : 0, Buffer.from([0, 1, 2, 255]), { name: 'ann' });
  return p;
};

function assertWhole(back) {
  assert.ok(back instanceof Post, 'prototype kept');
  assert.equal(back.age(Date.UTC(2024, 0, 3)), 86400000);
  assert.ok(back.at instanceof Date);
  assert.ok(back.views instanceof Map);
  assert.deepStrictEqual([...back.views], [['mon', 3], ['tue', 5]]);
  assert.equal(back.likes, 12345678901234567890n);
  assert.ok(Buffer.isBuffer(back.thumb));
  assert.deepStrictEqual([...back.thumb], [0, 1, 2, 255]);
  assert.strictEqual(back.editor, back.author, 'shared reference kept');
}

/* What the libraries' own serializers do with the same Post (but the BigInt, which they throw on). */
function assertLost(back, { bufferKept }) {
  assert.ok(!(back instanceof Post), 'prototype lost');
  assert.equal(typeof back.at, 'string', 'Date became a string');
  assert.ok(!(back.views instanceof Map) && Object.keys(back.views).length === 0, 'Map became {}');
  assert.notStrictEqual(back.editor, back.author, 'shared reference split in two');
  assert.equal(Buffer.isBuffer(back.thumb), bufferKept);
}

let redis;
let raw;

before(async () => {
  redis = await startRedis();
  raw = createClient({ url: redis.url });
  await raw.connect();
});

after(async () => {
  if (raw) await raw.close();
  if (redis) await redis.stop();
});

/* The one key Redis holds whose name contains `part`, and its raw value. */
async function stored(part) {
  const keys = (await raw.keys('*')).filter((k) => k.includes(part));
  assert.equal(keys.length, 1, `one key with ${part}: ${keys}`);
  return raw.get(keys[0]);
}

const keyv = (namespace, options = {}) => new Keyv({ store: new KeyvRedis(redis.url), namespace, ...options });

/*
 * One cache with darmok's serializer and one with the library's default,
 * through the same calls: set(cache, key, value), get(cache, key),
 * close(cache); `part` names the darmok cache's Redis keys.
 */
async function compare({ withDarmok, plain, set, get, close, part, bufferKept }) {
  try {
    await set(withDarmok, 'post', makePost());
    assertWhole(await get(withDarmok, 'post'));
    const text = await stored(part);
    assert.match(text, /\{"\$":"test\.Post"/);

    await set(plain, 'post', makePost({ bigint: false }));
    assertLost(await get(plain, 'post'), { bufferKept });
    await assert.rejects(set(plain, 'big', makePost()), /BigInt/);
    return text;
  } finally {
    await close(withDarmok);
    await close(plain);
  }
}

test('Keyv + @keyv/redis: keyvSerializer round-trips the Post; Keyv\'s default loses it', async () => {
  const text = await compare({
    withDarmok: keyv('kd', keyvSerializer), plain: keyv('kp'), part: 'kd', bufferKept: true,
    set: (c, k, v) => c.set(k, v, 60000), get: (c, k) => c.get(k), close: (c) => c.disconnect()
  });
  // Keyv hands the serializer its whole entry.
  assert.match(text, /^\{"value":\{"\$":"test\.Post".*,"expires":\d+\}$/);
});

test('cache-manager 7 over a Keyv Redis store: keyvSerializer round-trips the Post; the default loses it', async () => {
  await compare({
    withDarmok: createCache({ stores: [keyv('cd', keyvSerializer)] }), plain: createCache({ stores: [keyv('cp')] }),
    part: 'cd', bufferKept: true,
    set: (c, k, v) => c.set(k, v, 60000), get: (c, k) => c.get(k), close: (c) => c.disconnect()
  });
});

test('BentoCache with its redis driver: bentoSerializer round-trips the Post; its default loses it', async () => {
  const bento = (prefix, serializer) => new BentoCache({
    default: 'redis',
    ...(serializer ? { serializer } : {}),
    stores: { redis: bentostore().useL2Layer(redisDriver({ connection: { host: redis.host, port: redis.port }, prefix })) }
  });
  await compare({
    withDarmok: bento('bd', bentoSerializer), plain: bento('bp'), part: 'bd', bufferKept: false,
    set: (c, key, value) => c.set({ key, value }), get: (c, key) => c.get({ key }), close: (c) => c.disconnectAll()
  });
});

test('createSerializer({ bytes: true }) in @keyv/redis, cache-manager and BentoCache (redis and memory drivers): Redis holds the same text', async () => {
  const bytes = createSerializer({ bytes: true });
  const { memoryDriver } = await import('bentocache/drivers/memory');
  const viaKeyv = keyv('kb', bytes);
  const viaCm = createCache({ stores: [keyv('cb', bytes)] });
  const viaBento = new BentoCache({
    default: 'redis', serializer: bytes,
    stores: { redis: bentostore().useL2Layer(redisDriver({ connection: { host: redis.host, port: redis.port }, prefix: 'bb' })) }
  });
  const bentoMemory = new BentoCache({
    default: 'memory', serializer: bytes, stores: { memory: bentostore().useL1Layer(memoryDriver({ maxSize: 1 << 20 })) }
  });
  try {
    await viaKeyv.set('post', makePost(), 60000);
    assertWhole(await viaKeyv.get('post'));
    await viaCm.set('post', makePost(), 60000);
    assertWhole(await viaCm.get('post'));
    await viaBento.set({ key: 'post', value: makePost() });
    assertWhole(await viaBento.get({ key: 'post' }));
    await bentoMemory.set({ key: 'post', value: makePost() });
    assertWhole(await bentoMemory.get({ key: 'post' }));
    // The text the string serializer writes for the same entry.
    const text = await stored('kb');
    const { expires } = JSON.parse(text);
    assert.strictEqual(text, keyvSerializer.serialize({ value: makePost(), expires }));
    assert.match(await stored('bb'), /\{"\$":"test\.Post"/);
  } finally {
    await viaKeyv.disconnect();
    await viaCm.disconnect();
    await viaBento.disconnectAll();
    await bentoMemory.disconnectAll();
  }
});

test('createSerializer: its own registry and decode options', () => {
  class Note { constructor(t) { this.t = t; } }
  const registry = createRegistry();
  registry.serializable(Note, { key: 'Note' });
  const own = createSerializer({ registry });
  const back = own.deserialize(own.serialize({ value: new Note('x') }));
  assert.ok(back.value instanceof Note);
  // The default registry does not know Note: it throws, or reads plain data when told to.
  assert.throws(() => keyvSerializer.deserialize(own.serialize(new Note('x'))), { code: 'ERR_UNKNOWN_CLASS' });
  const lenient = createSerializer({ decode: { unknownClass: 'plain' } });
  assert.deepStrictEqual(lenient.deserialize('{"$":"Note","t":"x"}'), { t: 'x' });
});
