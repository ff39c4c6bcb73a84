'use strict';
/*
 * clients.cjs - one small adapter per Redis client, so the cache
 * (cache.cjs) speaks one interface to node-redis 4, node-redis 5/6 and
 * ioredis 5/6, single node or cluster.
 *
 * Clients are recognised by the methods they have, never by instanceof:
 * the user's copy of a client package is not ours (two copies of one
 * package make two classes), and BentoCache's `instanceof` check is how a
 * Cluster passed to it silently became a new default connection.
 *
 * Every adapter returns promises of:
 *   get(key, binary)         -> string | Buffer | null
 *   mget(keys, binary, withinMs)
 *                            -> array in the order of keys; on a cluster,
 *                               one MGET per hash slot (cache/slots.cjs's
 *                               readPerSlot): a slot that failed, or did
 *                               not answer within withinMs, gives each of
 *                               its keys an Error while the other slots'
 *                               values are kept
 *   set(key, value, px)      -> SET key value PX px
 *   setNx(key, value, px)    -> true when SET key value NX PX px set it
 *   del(keys, withinMs)      -> DEL
 *   unlink(keys, withinMs)   -> UNLINK
 *   setMany(pairs, withinMs) -> MSET of the [key, value] pairs (no expiry)
 *                               del, unlink and setMany resolve to
 *                               { n, error, failed }: n the count (of keys
 *                               that existed; set); on a cluster, one
 *                               command per slot (writePerSlot): error, the
 *                               failed slots' Error (else undefined), and
 *                               failed, the indexes of their keys
 *   delIf(key, value)        -> deletes key only while it holds value (Lua)
 *   ready()                  -> false when the client says it is not
 *                               connected (its commands would only queue)
 *   evictionPolicy()         -> CONFIG GET maxmemory-policy: the policy
 *                               (on a cluster, the first master's that
 *                               can evict the lock, else noeviction), or
 *                               null when CONFIG is refused (managed
 *                               Redis, ACL, rename-command); never rejects
 *   setString(key, value, px)
 *                            -> SET key value PX px only while key holds a
 *                               string or nothing (Lua); 1 or 0
 *   setIf(key, holds, value, px)
 *                            -> SET key value PX px only while key holds
 *                               `holds` (Lua); 1 or 0
 *   publish(channel, message)-> PUBLISH; on a cluster, always to the master
 *                               of the channel's slot (which forwards it to
 *                               every node), so one process's messages
 *                               keep their order
 *   masters()                -> a client per master (the client itself on
 *                               a single node), or the Error of one that
 *                               could not be had
 *   scan(node, cursor, match, n)
 *                            -> [cursor, keys] of SCAN on one node
 *   duplicate()              -> a new connection like the client's, for
 *                               the subscriber (cache/bus.cjs); a
 *                               node-redis Sentinel has none, and
 *                               subscribes on its own pub/sub connection
 *                               (sentinelSubscriber)
 * binary: read the reply as raw bytes through the client's own buffer API
 * (node-redis 5/6 type mapping, node-redis 4 returnBuffers, ioredis
 * getBuffer/mgetBuffer), never through a string.
 */

const { DarmokError } = require('../core/errors.cjs');
const { readPerSlot, writePerSlot } = require('./slots.cjs');

/* RESP's type byte of a bulk string, `$`: node-redis 5+'s RESP_TYPES.BLOB_STRING. */
const BLOB_STRING = 36;
const AS_BUFFER_5 = { typeMapping: { [BLOB_STRING]: Buffer } };
const AS_BUFFER_4 = { returnBuffers: true };

/* Deletes KEYS[1] only while its value is ARGV[1]: releasing a lock we still hold. */
const DEL_IF = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/*
 * SET KEYS[1] ARGV[1] PX ARGV[2] only while KEYS[1] holds a string or
 * nothing: another application's hash or list is never written over, even
 * one made after the cache last read the key. 1 or 0.
 */
const SET_STRING = "local t = redis.call('TYPE', KEYS[1]).ok if t ~= 'string' and t ~= 'none' then return 0 end " +
  "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1";

/* SET KEYS[1] ARGV[2] PX ARGV[3] only while KEYS[1] holds ARGV[1]: a compare-and-set. */
const SET_IF = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 else return 0 end";

/*
 * PUBLISH ARGV[1] ARGV[2], sent as a script with the channel as its key:
 * the cluster clients send a PUBLISH to any node (ioredis; node-redis 6
 * even when given a key), and one process's messages through two nodes
 * may arrive out of order (cache/bus.cjs numbers them).
 */
const PUBLISH_BY_KEY = "return redis.call('PUBLISH', ARGV[1], ARGV[2])";

/*
 * Whether err is Redis's WRONGTYPE reply: the key holds a hash, list or
 * other non-string. An error reply's first word is its code (RESP).
 */
function isWrongType(err) {
  return err !== null && typeof err === 'object' && typeof err.message === 'string' && err.message.startsWith('WRONGTYPE');
}

/*
 * A node-redis Sentinel (createSentinel) has no duplicate(): it keeps a
 * pub/sub connection of its own to the primary, followed over failovers.
 * This stands for the subscriber connection the bus would make: it
 * subscribes there, and "closing" it unsubscribes this listener only.
 * Connection events are not taken from the user's client (an 'error'
 * listener there would hide its errors from the user).
 */
function sentinelSubscriber(c) {
  let channel = null;
  let listener = null;
  return {
    on() {},
    connect: async () => {},
    subscribe(ch, fn) {
      channel = ch;
      listener = fn;
      return c.subscribe(ch, fn);
    },
    destroy: () => (channel === null ? undefined : c.unsubscribe(channel, listener))
  };
}

/*
 * Whether maxmemory-policy can evict the lock key: allkeys-* evict any key
 * and volatile-* any key with a TTL, which the lock has (SET NX PX);
 * noeviction keeps it. null (unknown) is false: nothing to warn about.
 */
function evictsLock(policy) {
  return typeof policy === 'string' && /^(allkeys|volatile)-/.test(policy);
}

/* The value of CONFIG GET <name>'s reply: [name, value] (RESP2), a Map or an object (RESP3). */
function configValue(reply, name) {
  if (Array.isArray(reply)) return reply.length >= 2 ? String(reply[1]) : null;
  if (reply instanceof Map) return reply.has(name) ? String(reply.get(name)) : null;
  if (reply !== null && typeof reply === 'object' && Object.hasOwn(reply, name)) return String(reply[name]);
  return null;
}

/* The policies of every master -> the first that evicts the lock, else the first; null when none answered. */
async function worstPolicy(asks) {
  const policies = (await Promise.all(asks.map((ask) => ask().catch(() => null)))).filter((p) => p !== null);
  return policies.find(evictsLock) || (policies.length > 0 ? policies[0] : null);
}

/* A single node's answer to a write of many keys, in writePerSlot's form: its reply is the count. */
function whole(reply) {
  return reply.then((n) => ({ n: Number(n), error: undefined, failed: [] }));
}

/*
 * The reads and writes of many keys, from a client's command for the keys
 * of one slot: on a cluster, one per slot, each slot failing alone.
 * mgetOne(keys, binary) resolves to the values; msetOne(pairs) to how many
 * it set.
 */
function manyKeys(cluster, mgetOne, delOne, unlinkOne, msetOne) {
  if (!cluster) {
    return {
      mget: mgetOne,
      del: (keys) => whole(delOne(keys)),
      unlink: (keys) => whole(unlinkOne(keys)),
      setMany: (pairs) => whole(msetOne(pairs))
    };
  }
  return {
    mget: (keys, binary, withinMs) => readPerSlot(keys, (ks) => mgetOne(ks, binary), withinMs),
    del: (keys, withinMs) => writePerSlot(keys, delOne, withinMs),
    unlink: (keys, withinMs) => writePerSlot(keys, unlinkOne, withinMs),
    setMany: (pairs, withinMs) => writePerSlot(pairs.map((p) => p[0]), (ks, indexes) => msetOne(indexes.map((i) => pairs[i])), withinMs)
  };
}

/* node-redis (the `redis` package, @redis/client) 4, 5 and 6; client, cluster or Sentinel (5+). */
function nodeRedis(c) {
  const v4 = typeof c.withTypeMapping !== 'function';
  const asBuffer = v4 ? AS_BUFFER_4 : AS_BUFFER_5;
  // A cluster's sendCommand takes the key that routes it and whether it
  // only reads, before the arguments; a Sentinel's (createSentinel) takes
  // whether it only reads (a read may go to a replica when the user gave
  // it replicaPoolSize).
  const cluster = Array.isArray(c.masters);
  const sentinel = !cluster && typeof c.getMasterNode === 'function' && typeof c.getSentinelNode === 'function';
  const send = cluster
    ? (key, readonly, args, options) => c.sendCommand(key, readonly, args, options)
    : sentinel
      ? (key, readonly, args, options) => c.sendCommand(readonly, args, options)
      : (key, readonly, args, options) => c.sendCommand(args, options);
  const mgetOne = (keys, binary) => send(keys[0], true, ['MGET', ...keys], binary ? asBuffer : undefined);
  const delOne = (keys) => send(keys[0], false, ['DEL', ...keys]);
  const unlinkOne = (keys) => send(keys[0], false, ['UNLINK', ...keys]);
  const msetOne = (pairs) => send(pairs[0][0], false, ['MSET', ...pairs.flat()]).then(() => pairs.length);
  return {
    name: v4 ? 'node-redis 4' : sentinel ? 'node-redis Sentinel' : 'node-redis',
    cluster,
    // node-redis queues a command while it is disconnected, without bound;
    // its cluster (before 6) has no isReady.
    ready: () => c.isReady !== false,
    get: (key, binary) => send(key, true, ['GET', key], binary ? asBuffer : undefined),
    set: (key, value, px) => send(key, false, ['SET', key, value, 'PX', String(px)]),
    setNx: (key, value, px) => send(key, false, ['SET', key, value, 'NX', 'PX', String(px)]).then((r) => r !== null),
    ...manyKeys(cluster, mgetOne, delOne, unlinkOne, msetOne),
    delIf: (key, value) => send(key, false, ['EVAL', DEL_IF, '1', key, value]),
    evictionPolicy: () => {
      const config = ['CONFIG', 'GET', 'maxmemory-policy'];
      const ask = (client) => client.sendCommand(config).then((r) => configValue(r, 'maxmemory-policy'));
      if (cluster) return worstPolicy(c.masters.map((m) => async () => ask(await c.nodeClient(m))));
      return worstPolicy([() => send(undefined, false, config).then((r) => configValue(r, 'maxmemory-policy'))]);
    },
    setString: (key, value, px) => send(key, false, ['EVAL', SET_STRING, '1', key, value, String(px)]),
    setIf: (key, holds, value, px) => send(key, false, ['EVAL', SET_IF, '1', key, holds, value, String(px)]),
    publish: cluster
      ? (channel, message) => send(channel, false, ['EVAL', PUBLISH_BY_KEY, '1', channel, channel, message])
      : (channel, message) => send(channel, false, ['PUBLISH', channel, message]),
    // A master whose client cannot be had is its Error, so that clear() goes on with the others.
    masters: async () => (cluster ? Promise.all(c.masters.map((m) => Promise.resolve().then(() => c.nodeClient(m)).catch((err) => err))) : [c]),
    scan: async (node, cursor, match, count) => {
      const args = ['SCAN', String(cursor), 'MATCH', match, 'COUNT', String(count)];
      // A cluster's node is a plain client; otherwise the node is c itself (a Sentinel's takes other arguments).
      const [next, keys] = await (node === c ? send(undefined, true, args) : node.sendCommand(args));
      return [String(next), keys.map(String)];
    },
    duplicate: () => (sentinel ? sentinelSubscriber(c) : c.duplicate())
  };
}


/* ioredis 5 and 6: Redis or Cluster. */
function ioredis(c) {
  const cluster = c.isCluster === true;
  const mgetOne = (keys, binary) => (binary ? c.mgetBuffer(keys) : c.mget(keys));
  const delOne = (keys) => c.del(keys);
  const unlinkOne = (keys) => c.unlink(keys);
  const msetOne = (pairs) => c.mset(pairs.flat()).then(() => pairs.length);
  return {
    name: 'ioredis',
    cluster,
    // ioredis queues commands while it reconnects (enableOfflineQueue).
    ready: () => c.status === 'ready',
    get: (key, binary) => (binary ? c.getBuffer(key) : c.get(key)),
    set: (key, value, px) => c.set(key, value, 'PX', px),
    setNx: (key, value, px) => c.set(key, value, 'PX', px, 'NX').then((r) => r !== null),
    ...manyKeys(cluster, mgetOne, delOne, unlinkOne, msetOne),
    delIf: (key, value) => c.eval(DEL_IF, 1, key, value),
    evictionPolicy: () => {
      const ask = (node) => () => node.config('GET', 'maxmemory-policy').then((r) => configValue(r, 'maxmemory-policy'));
      return worstPolicy(cluster ? c.nodes('master').map(ask) : [ask(c)]);
    },
    setString: (key, value, px) => c.eval(SET_STRING, 1, key, value, String(px)),
    setIf: (key, holds, value, px) => c.eval(SET_IF, 1, key, holds, value, String(px)),
    publish: cluster
      ? (channel, message) => c.eval(PUBLISH_BY_KEY, 1, channel, channel, message)
      : (channel, message) => c.publish(channel, message),
    masters: async () => (cluster ? c.nodes('master') : [c]),
    scan: (node, cursor, match, count) => node.scan(cursor, 'MATCH', match, 'COUNT', count),
    duplicate: () => c.duplicate()
  };
}

/* The adapter for a client, recognised by shape. */
function adapt(client) {
  if (client !== null && typeof client === 'object') {
    if (typeof client.getBuffer === 'function' && typeof client.mgetBuffer === 'function' &&
        typeof client.isCluster === 'boolean') {
      // Through Sentinel, role 'slave' connects to a replica: every write fails.
      if (client.options !== null && typeof client.options === 'object' && client.options.role === 'slave') {
        throw new DarmokError('ERR_INVALID_OPTION',
          "createCache: this ioredis client connects to a replica (Sentinel role: 'slave'), where entries cannot be written: give the cache one to the primary");
      }
      return ioredis(client);
    }
    if (typeof client.sendCommand === 'function' && typeof client.isOpen === 'boolean') {
      return nodeRedis(client);
    }
  }
  throw new DarmokError('ERR_INVALID_OPTION',
    'createCache: client must be a node-redis (redis 4-6) or ioredis (5-6) client or cluster');
}

module.exports = { adapt, evictsLock, isWrongType };
