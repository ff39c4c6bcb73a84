'use strict';
/*
 * cache/commands.cjs - the Redis commands of the cache's newer parts
 * (the bus, clear, tags, replacing an entry of another class), for
 * node-redis 4-6 and ioredis 5-6, single node or cluster, taking the raw
 * client. The reads and writes of entries go through redis-clients.cjs.
 *
 *   publish(channel, message)      -> PUBLISH; on a cluster, always to the
 *                                     master of the channel's slot (which
 *                                     forwards it to every node), so one
 *                                     process's messages keep their order
 *   masters()                      -> a client per master (the client
 *                                     itself on a single node)
 *   scan(node, cursor, match, n)   -> [cursor, keys] of SCAN on one node
 *   unlink(keys)                   -> UNLINK: one command on a single
 *                                     node, one per key on a cluster
 *                                     (keys of a SCAN page span slots)
 *   setIf(key, holds, value, px)   -> SET key value PX px only while key
 *                                     holds `holds` (Lua); 1 or 0
 *   setMany(pairs)                 -> SET of each [key, value], together
 *   mgetText(keys)                 -> values as strings, in order
 *   duplicate()                    -> a new connection like the client's,
 *                                     for the subscriber (cache/bus.cjs);
 *                                     a node-redis Sentinel has none, and
 *                                     subscribes on its own pub/sub
 *                                     connection (sentinelSubscriber)
 */

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

function ioredis(c) {
  const cluster = c.isCluster === true;
  return {
    publish: cluster
      ? (channel, message) => c.eval(PUBLISH_BY_KEY, 1, channel, channel, message)
      : (channel, message) => c.publish(channel, message),
    masters: async () => (cluster ? c.nodes('master') : [c]),
    scan: (node, cursor, match, count) => node.scan(cursor, 'MATCH', match, 'COUNT', count),
    unlink: (keys) => (cluster ? Promise.all(keys.map((k) => c.unlink(k))) : c.unlink(keys)),
    setIf: (key, holds, value, px) => c.eval(SET_IF, 1, key, holds, value, String(px)),
    setMany: (pairs) => Promise.all(pairs.map(([k, v]) => c.set(k, v))),
    mgetText: (keys) => (cluster ? Promise.all(keys.map((k) => c.get(k))) : c.mget(keys)),
    duplicate: () => c.duplicate()
  };
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

function nodeRedis(c, adapter) {
  const cluster = Array.isArray(c.masters);
  const send = (key, args) => adapter.send(key, false, args);
  const text = (v) => (v === null || v === undefined ? null : String(v));
  return {
    publish: cluster
      ? (channel, message) => send(channel, ['EVAL', PUBLISH_BY_KEY, '1', channel, channel, message])
      : (channel, message) => send(channel, ['PUBLISH', channel, message]),
    masters: async () => (cluster ? Promise.all(c.masters.map((m) => c.nodeClient(m))) : [c]),
    scan: async (node, cursor, match, count) => {
      const args = ['SCAN', String(cursor), 'MATCH', match, 'COUNT', String(count)];
      // A cluster's node is a plain client; otherwise the node is c itself (a Sentinel's takes other arguments).
      const [next, keys] = await (node === c ? adapter.send(undefined, true, args) : node.sendCommand(args));
      return [String(next), keys.map(String)];
    },
    unlink: (keys) => (cluster ? Promise.all(keys.map((k) => send(k, ['UNLINK', k]))) : send(keys[0], ['UNLINK', ...keys])),
    setIf: (key, holds, value, px) => send(key, ['EVAL', SET_IF, '1', key, holds, value, String(px)]),
    setMany: (pairs) => Promise.all(pairs.map(([k, v]) => send(k, ['SET', k, v]))),
    mgetText: async (keys) => (cluster
      ? Promise.all(keys.map(async (k) => text(await send(k, ['GET', k]))))
      : (await send(keys[0], ['MGET', ...keys])).map(text)),
    duplicate: () => (adapter.sentinel ? sentinelSubscriber(c) : c.duplicate())
  };
}

/* The commands for client, given its adapter (redis-clients.cjs's adapt()). */
function commandsFor(client, adapter) {
  return typeof client.getBuffer === 'function' ? ioredis(client) : nodeRedis(client, adapter);
}

module.exports = { commandsFor, isWrongType, SET_IF };
