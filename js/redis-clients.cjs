'use strict';
/*
 * redis-clients.cjs - one small adapter per Redis client, so the cache
 * (redis.cjs) speaks one interface to node-redis 4, node-redis 5/6 and
 * ioredis 5/6, single node or cluster.
 *
 * Clients are recognised by the methods they have, never by instanceof:
 * the user's copy of a client package is not ours (two copies of one
 * package make two classes), and BentoCache's `instanceof` check is how a
 * Cluster passed to it silently became a new default connection.
 *
 * Every adapter returns promises of:
 *   get(key, binary)         -> string | Buffer | null
 *   mget(keys, binary)       -> array in the order of keys; on a cluster,
 *                               one MGET per hash slot, all sent at once
 *                               (each node's connection pipelines them)
 *   set(key, value, px)      -> SET key value PX px
 *   setNx(key, value, px)    -> true when SET key value NX PX px set it
 *   del(keys)                -> DEL, one per slot on a cluster
 *   delIf(key, value)        -> deletes key only while it holds value (Lua)
 *   ready()                  -> false when the client says it is not
 *                               connected (its commands would only queue)
 * binary: read the reply as raw bytes through the client's own buffer API
 * (node-redis 5/6 type mapping, node-redis 4 returnBuffers, ioredis
 * getBuffer/mgetBuffer), never through a string.
 */

const calculateSlot = require('cluster-key-slot');
const { DarmokError } = require('./errors.cjs');

/* RESP's type byte of a bulk string, `$`: node-redis 5+'s RESP_TYPES.BLOB_STRING. */
const BLOB_STRING = 36;
const AS_BUFFER_5 = { typeMapping: { [BLOB_STRING]: Buffer } };
const AS_BUFFER_4 = { returnBuffers: true };

/* Deletes KEYS[1] only while its value is ARGV[1]: releasing a lock we still hold. */
const DEL_IF = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/* keys grouped by hash slot: Map slot -> indexes into keys. */
function bySlot(keys) {
  const groups = new Map();
  for (let i = 0; i < keys.length; i++) {
    const slot = calculateSlot(keys[i]);
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [i]);
    else group.push(i);
  }
  return groups;
}

/* On a cluster: one MGET per slot, sent together, answers put back in order. */
function mgetPerSlot(keys, binary, mgetOne) {
  const groups = bySlot(keys);
  if (groups.size === 1) return mgetOne(keys, binary);
  const out = new Array(keys.length);
  const pending = [];
  for (const indexes of groups.values()) {
    const slotKeys = indexes.map((i) => keys[i]);
    pending.push(mgetOne(slotKeys, binary).then((values) => {
      for (let j = 0; j < indexes.length; j++) out[indexes[j]] = values[j];
    }));
  }
  return Promise.all(pending).then(() => out);
}

function delPerSlot(keys, delOne) {
  const pending = [];
  for (const indexes of bySlot(keys).values()) pending.push(delOne(indexes.map((i) => keys[i])));
  return Promise.all(pending).then((counts) => counts.reduce((a, b) => a + Number(b), 0));
}

/* node-redis (the `redis` package, @redis/client) 4, 5 and 6; client or cluster. */
function nodeRedis(c) {
  const v4 = typeof c.withTypeMapping !== 'function';
  const asBuffer = v4 ? AS_BUFFER_4 : AS_BUFFER_5;
  // A cluster's sendCommand takes the key that routes it and whether it
  // only reads, before the arguments.
  const cluster = Array.isArray(c.masters);
  const send = cluster
    ? (key, readonly, args, options) => c.sendCommand(key, readonly, args, options)
    : (key, readonly, args, options) => c.sendCommand(args, options);
  const mgetOne = (keys, binary) => send(keys[0], true, ['MGET', ...keys], binary ? asBuffer : undefined);
  const delOne = (keys) => send(keys[0], false, ['DEL', ...keys]);
  return {
    name: v4 ? 'node-redis 4' : 'node-redis',
    cluster,
    // node-redis queues a command while it is disconnected, without bound;
    // its cluster (before 6) has no isReady.
    ready: () => c.isReady !== false,
    get: (key, binary) => send(key, true, ['GET', key], binary ? asBuffer : undefined),
    mget: cluster ? (keys, binary) => mgetPerSlot(keys, binary, mgetOne) : mgetOne,
    set: (key, value, px) => send(key, false, ['SET', key, value, 'PX', String(px)]),
    setNx: (key, value, px) => send(key, false, ['SET', key, value, 'NX', 'PX', String(px)]).then((r) => r !== null),
    del: cluster ? (keys) => delPerSlot(keys, delOne) : delOne,
    delIf: (key, value) => send(key, false, ['EVAL', DEL_IF, '1', key, value])
  };
}

/* ioredis 5 and 6: Redis or Cluster. */
function ioredis(c) {
  const cluster = c.isCluster === true;
  const mgetOne = (keys, binary) => (binary ? c.mgetBuffer(keys) : c.mget(keys));
  const delOne = (keys) => c.del(keys);
  return {
    name: 'ioredis',
    cluster,
    // ioredis queues commands while it reconnects (enableOfflineQueue).
    ready: () => c.status === 'ready',
    get: (key, binary) => (binary ? c.getBuffer(key) : c.get(key)),
    mget: cluster ? (keys, binary) => mgetPerSlot(keys, binary, mgetOne) : mgetOne,
    set: (key, value, px) => c.set(key, value, 'PX', px),
    setNx: (key, value, px) => c.set(key, value, 'PX', px, 'NX').then((r) => r !== null),
    del: cluster ? (keys) => delPerSlot(keys, delOne) : delOne,
    delIf: (key, value) => c.eval(DEL_IF, 1, key, value)
  };
}

/* The adapter for a client, recognised by shape. */
function adapt(client) {
  if (client !== null && typeof client === 'object') {
    if (typeof client.getBuffer === 'function' && typeof client.mgetBuffer === 'function' &&
        typeof client.isCluster === 'boolean') {
      return ioredis(client);
    }
    if (typeof client.sendCommand === 'function' && typeof client.isOpen === 'boolean') {
      return nodeRedis(client);
    }
  }
  throw new DarmokError('ERR_INVALID_OPTION',
    'createCache: client must be a node-redis (redis 4-6) or ioredis (5-6) client or cluster');
}

module.exports = { adapt };
