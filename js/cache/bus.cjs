'use strict';
/*
 * cache/bus.cjs - how the L1 tiers of the processes of one cache hear of
 * each other's changes: a Redis pub/sub channel per cache, subscribed on
 * a connection made by the user's client's own duplicate() (node-redis or
 * ioredis, single node or cluster), published on the client itself.
 *
 * A message is JSON: { o: origin, k: [Redis keys] } (changed or deleted),
 * { o, t: [tags], p: prefix } (deleteByTag), { o, p: prefix } (clear), or
 * { o, h: 1 } (a heartbeat); each with s, the sender's sequence number. A process ignores its own invalidations: it
 * applied them when it made them.
 *
 * Whether the bus works is known end to end, not from connection events
 * (which differ per client and per cluster, and miss a quick reconnect):
 * each process publishes a heartbeat every `window / 3` ms, and the bus is
 * up while some message came in within the last `window` ms. Every
 * message carries its sender's sequence number (s), so a message lost
 * while the subscriber reconnected shows as a gap when that sender's next
 * one (at the latest its next heartbeat) arrives. After a gap, or when the
 * bus comes back up, the L1 is dropped (onUp).
 *
 * Plain pub/sub, also on a cluster: one channel per cache hashes to one
 * slot, so sharded pub/sub would carry it through one master only and
 * lose it with that master, where plain pub/sub reaches every node.
 */

/*
 * createBus({ redis, channel, origin, window, publish, onMessage, onUp,
 * log }) -> { up(), send(message), close() }. redis is the client's
 * adapter (clients.cjs), whose duplicate() makes the subscriber;
 * publish(text) sends PUBLISH through the cache's command() (bounded by
 * its timeout, not counted by its breaker); log(level, message).
 */
function createBus({ redis, channel, origin, window, publish, onMessage, onUp, log }) {
  let lastSeen = 0;
  let upSince = 0;
  let closed = false;
  let sub = null;
  let sent = 0;
  /* origin -> { s: its last sequence number seen, at: when } */
  const senders = new Map();

  const up = () => Date.now() - lastSeen < window;

  function receive(text) {
    if (closed) return;
    const now = Date.now();
    const wasUp = up();
    lastSeen = now;
    let msg;
    try {
      msg = JSON.parse(String(text));
    } catch {
      msg = null;
    }
    if (msg === null || typeof msg !== 'object' || typeof msg.o !== 'string' || typeof msg.s !== 'number') {
      log('warn', `a message on ${channel} that is not the cache's`);
      return;
    }
    const last = senders.get(msg.o);
    senders.set(msg.o, { s: msg.s, at: now });
    if (!wasUp) {
      upSince = now;
      log('debug', 'the invalidation bus is up: the L1 is dropped (messages may have been missed)');
      onUp();
    } else if (last === undefined ? msg.s > 1 && now - upSince >= window : msg.s > last.s + 1) {
      // A sender first heard after a whole window of heartbeats was up all
      // along: its earlier messages were missed. One first heard sooner may
      // just have been up before this subscriber was.
      log('debug', `a message of the invalidation bus was lost (${msg.o === origin ? 'this process\'s' : `process ${msg.o.slice(0, 8)}'s`} ${last === undefined ? 'first heard' : `after ${last.s}`}: ${msg.s}): the L1 is dropped`);
      onUp();
    }
    if (senders.size > 1000) {
      for (const [o, v] of senders) if (now - v.at > 10 * window) senders.delete(o);
    }
    if (msg.o === origin || msg.h !== undefined) return;
    onMessage(msg);
  }

  function down() {
    if (closed) return;
    if (lastSeen !== 0) log('warn', 'the invalidation bus is down: L1 entries are served for l1.ttl at most');
    lastSeen = 0;
  }

  async function subscribe() {
    // This attempt's connection: close() may drop it (sub = null) while it connects.
    const s = redis.duplicate();
    sub = s;
    const ioredis = typeof s.getBuffer === 'function';
    s.on('error', (err) => log('debug', `invalidation bus: ${err && err.message}`));
    for (const e of ['reconnecting', 'end', 'close']) s.on(e, down);
    if (ioredis) {
      s.on('message', (ch, text) => { if (ch === channel) receive(text); });
      await s.subscribe(channel);
    } else {
      await s.connect();
      if (closed) {
        quit(s); // close() could not end a connection still being made
        return;
      }
      await s.subscribe(channel, (text) => receive(text));
    }
    if (closed) quit(s);
    // The first heartbeat this subscriber can hear: the bus is up once it comes back.
    else beat();
  }

  function send(message) {
    message.o = origin;
    message.s = ++sent;
    return publish(JSON.stringify(message));
  }

  let tries = 0;
  const start = () => subscribe().catch((err) => {
    if (closed) return; // close() ended this attempt
    log('warn', `invalidation bus: could not subscribe: ${err && err.message}`);
    if (sub !== null) quit(sub);
    sub = null;
    if (!closed) setTimeout(start, Math.min(5000, 100 * 2 ** tries++)).unref();
  });
  start();

  const beat = () => send({ h: 1 }).catch(() => {});
  const heartbeat = setInterval(beat, Math.max(20, Math.floor(window / 3)));
  heartbeat.unref();
  beat();

  function close() {
    closed = true;
    clearInterval(heartbeat);
    if (sub !== null) quit(sub);
    sub = null;
    lastSeen = 0;
  }

  return { up, send, close };
}

/* Closes a subscriber connection without waiting for anything. */
function quit(sub) {
  try {
    const p = typeof sub.getBuffer === 'function' ? sub.disconnect()
      : typeof sub.destroy === 'function' ? sub.destroy() : sub.disconnect();
    if (p && typeof p.catch === 'function') p.catch(() => {});
  } catch {
    // closed already
  }
}

module.exports = { createBus };
