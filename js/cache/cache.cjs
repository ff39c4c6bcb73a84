'use strict';
/*
 * cache.cjs - darmok/redis: createCache(options), a cache of class
 * instances on Redis or Redis Cluster through the user's own node-redis
 * (4, 5, 6) or ioredis (5, 6) client, with an optional in-process tier.
 * docs/CACHE.md is the reference. The parts:
 *   options.cjs     every option: name, unit, default, check
 *   clients.cjs     every Redis command of the cache, per client
 *   slots.cjs       multi-key commands on a cluster, one per hash slot
 *   entry.cjs       the bytes of an entry (envelope + document)
 *   l1.cjs          the in-process LRU tier
 *   bus.cjs         invalidations between processes (pub/sub)
 *   tags.cjs        tags, invalidated lazily
 *   get-or-set.cjs  getOrSet: flights, the lock, grace, hardTimeout
 *   outcomes.cjs    the kinds of unusable entries; the cache's errors
 *   deadlines.cjs   the timeout of every command
 *   observe.cjs     counters, events, onError, logger
 *
 * The rules the code keeps:
 *   - The Redis key of an entry is exactly prefix + key; one key per entry,
 *     written by one SET ... PX (ttl + grace).
 *   - Every Redis command goes through command(): bounded by `timeout`. A
 *     failed or late one is reported and, with failOpen (the default),
 *     taken as a miss. Errors that are not Redis failures (no core, a
 *     value that does not encode, a loader's value of the wrong class, a
 *     wrong Class asked of get) are thrown to the caller.
 *   - An entry that does not decode is a miss, reported as
 *     ERR_CACHE_ENTRY. A corrupt one is deleted (only while it still holds
 *     those bytes) or overwritten by the reload; one this process cannot
 *     read (another application's value, a hash or list (WRONGTYPE), a
 *     newer writer's) is left as it is; one of another class is replaced
 *     by getOrSet with a compare-and-set.
 *   - Concurrent getOrSet calls of one key and Class in this process share
 *     one read and one loader call, until the loader settles or a caller's
 *     hardTimeout detaches it; with `lock`, processes share one loader
 *     call through SET NX PX and a compare-and-delete release.
 *   - With `l1`, every write, delete, clear and deleteByTag invalidates
 *     the key in this process's L1 and publishes it on the bus; an L1
 *     entry is served while the bus is up, or for l1.ttl at most.
 */

const { randomUUID } = require('node:crypto');
const { createCodec, keptTapes } = require('../api.cjs');
const { DarmokError } = require('../core/errors.cjs');
const { registryOf } = require('../codec/registry.cjs');
const { adapt, evictsLock, isWrongType } = require('./clients.cjs');
const { createBreaker } = require('./breaker.cjs');
const { pack, unpack, isRevision1 } = require('./entry.cjs');
const { CACHE, SET, DEFAULTS, read, invalid, tagsOption } = require('./options.cjs');
const { createDeadlines } = require('./deadlines.cjs');
const { createObserver } = require('./observe.cjs');
const { L1 } = require('./l1.cjs');
const { createBus } = require('./bus.cjs');
const { tagFields, tagKey, invalidatedBy } = require('./tags.cjs');
const { createGetOrSet, LOCK_SUFFIX } = require('./get-or-set.cjs');
const {
  CORRUPT, UNREADABLE, WRONG_CLASS, NONE, THROWN, redisError, timeoutCause, breakerOpen, breakerOpened, isRefused, badEntry, unexpectedClass, isRedisFailure
} = require('./outcomes.cjs');

/* The bus channel of a cache: BUS_PREFIX + its prefix. */
const BUS_PREFIX = 'darmok:bus:';

/*
 * encodeEntity's options for an entry: its bytes, which the client sends
 * as they are, with no JS string of the document made on the way.
 */
const AS_BYTES = Object.freeze({ bytes: true });

/* The longest tag fields an entry header takes (cache/entry.cjs reads headers up to 1024 bytes). */
const TAG_FIELDS_MAX = 900;


/*
 * createCache(options) -> the cache (docs/CACHE.md; the options are
 * cache/options.cjs's CACHE table). Durations of entries in seconds, the
 * timeouts and lock times in milliseconds.
 */
function createCache(options) {
  if (options === null || typeof options !== 'object') throw invalid('takes { client, ... }');
  const opts = read(CACHE, options, 'createCache');
  const redis = adapt(opts.client);
  let codec = opts.codec;
  if (codec === undefined) {
    codec = createCodec({ format: opts.format === undefined ? 'json' : opts.format, registry: opts.registry });
  } else if (codec === null || typeof codec.encodeEntity !== 'function' || typeof codec.decodeEntity !== 'function') {
    throw invalid('codec must come from createCodec()');
  } else if (opts.format !== undefined && opts.format !== codec.format) {
    throw invalid(`format ${JSON.stringify(opts.format)} differs from the codec's (${codec.format})`);
  }
  const format = codec.format;
  const registry = registryOf(codec.registry);
  /* ERR_UNEXPECTED_CLASS for value, not a Class, named in the codec's registry. */
  const wrongClass = (Class, value, what) => unexpectedClass(registry, Class, value, what);
  // The lock's times, for calls that ask for the lock when the cache does not.
  const lockTimes = opts.lock === false ? CACHE.lock.check(true, 'lock') : opts.lock;
  const base = {
    ttl: opts.ttl,
    nullTtl: opts.nullTtl === undefined ? opts.ttl : opts.nullTtl,
    grace: opts.grace,
    jitter: opts.jitter,
    refreshAhead: opts.refreshAhead,
    softTimeout: opts.softTimeout,
    hardTimeout: opts.hardTimeout,
    lock: opts.lock !== false,
    tags: undefined
  };
  const timeout = opts.timeout;
  // On a cluster the adapter answers for the slots that did a little
  // before command()'s timeout, so one slow node does not fail them all.
  const slotTime = timeout * 0.9;
  const failOpen = opts.failOpen;
  const obs = createObserver({ onError: opts.onError, logger: opts.logger });
  const { counts, emit } = obs;
  // The failure that the breaker last heard of, and its state before the change it tells.
  let lastFailure;
  let breakerWas = 'closed';
  const breaker = createBreaker(opts.breaker, {
    onChange(state) {
      // onError hears of the opening, once; a probe that failed, or half-opening, is the breaker at work.
      if (state === 'open' && breakerWas === 'closed') obs.report(breakerOpened(lastFailure));
      else if (state === 'closed') obs.log('warn', 'darmok/redis: the circuit breaker closed: Redis answered its probe');
      else obs.log('debug', `darmok/redis: the circuit breaker is ${state}`);
      breakerWas = state;
      emit('breaker', state);
    }
  });

  /* Every problem not thrown at a caller, but a command the open breaker refused: counted instead. */
  function report(err, key) {
    if (!isRefused(err)) obs.report(err, key);
  }
  const bound = createDeadlines(timeout, () => timeoutCause(timeout));
  /* The breaker of the bus's commands: none, so that a failing bus cannot stop the cache's own commands. */
  const unwatched = createBreaker(false);

  /*
   * One Redis command, bounded by `timeout`: send() makes it. Rejects with
   * ERR_REDIS; a client that says it is disconnected is not sent anything,
   * so nothing piles up in its offline queue, and while the breaker is
   * open nothing is sent either. Every outcome is told to the breaker
   * (the cache's, or `unwatched` for the bus): an error reply (WRONGTYPE)
   * is an answer, not a failure of Redis.
   */
  function command(what, send, watch = breaker) {
    if (!watch.allow()) {
      counts.breakerRefusals++;
      return Promise.reject(redisError(breakerOpen(), what));
    }
    const failure = (err) => {
      if (isWrongType(err)) {
        watch.success();
      } else {
        if (watch === breaker) lastFailure = err;
        watch.failure();
      }
      return redisError(err, what);
    };
    if (!redis.ready()) return Promise.reject(failure(new Error(`the ${redis.name} client is not connected`)));
    let sent;
    try {
      sent = send();
    } catch (err) {
      return Promise.reject(failure(err));
    }
    return bound(sent, failure, watch.success);
  }

  /* A Redis failure: reported, then a miss (failOpen) or thrown. */
  function failed(err, key) {
    report(err, key);
    if (!failOpen) throw err;
  }

  /*
   * A write of many keys (list, the caller's) whose result r has failed
   * cluster slots: failed() once, as mget's are, naming their keys.
   */
  function partlyFailed(r, what, list) {
    if (r.error !== undefined) failed(redisError(r.error, what), r.failed.map((i) => list[i]).join(' '));
  }

  /* The items of list whose keys were written in r (a result of del, unlink, setMany). */
  function written(r, list) {
    if (r.failed.length === 0) return list;
    const lost = new Set(r.failed);
    return list.filter((_, i) => !lost.has(i));
  }

  /* ---- the L1 tier and the bus ------------------------------------------ */

  const l1 = opts.l1 === false ? null : new L1(opts.l1);
  const l1TtlMs = opts.l1 === false ? 0 : opts.l1.ttl * 1000;
  const bus = l1 === null ? null : createBus({
    redis,
    channel: BUS_PREFIX + opts.prefix,
    origin: randomUUID(),
    window: Math.max(300, l1TtlMs),
    publish: (text) => command('PUBLISH', () => redis.publish(BUS_PREFIX + opts.prefix, text), unwatched),
    onUp: () => l1.invalidateAll(),
    onMessage: applyMessage,
    log: obs.log
  });

  /* An invalidation from another process. */
  function applyMessage(msg) {
    counts.busMessages++;
    if (Array.isArray(msg.k)) {
      for (const full of msg.k) if (typeof full === 'string') l1.invalidate(full);
    } else if (Array.isArray(msg.t) && typeof msg.p === 'string') {
      const tags = new Set(msg.t);
      l1.invalidateWhere((full, e) => full.startsWith(msg.p) && e.tags !== null && e.tags.some((t) => tags.has(t)));
    } else if (typeof msg.p === 'string') {
      l1.invalidateWhere((full) => full.startsWith(msg.p));
    } else {
      return;
    }
    emit('invalidate', msg);
  }

  /* Tells the other processes; a failure to is reported (their L1 then serves for l1.ttl at most). */
  function publish(message, key) {
    if (bus !== null) bus.send(message).catch((err) => report(err, key));
  }

  /* The L1 entry of full to serve now, or undefined. */
  function l1Entry(full, now) {
    const e = l1.get(full);
    if (e === undefined) return undefined;
    if (now >= e.staleAt || (now - e.at > l1TtlMs && !bus.up())) {
      l1.drop(full);
      return undefined;
    }
    return e;
  }

  /* The codec's kept tapes; undefined for a codec createCodec did not make, whose decodeEntity then decodes every hit. */
  const tapes = keptTapes(codec);

  /*
   * The document of L1 entry e. JSON decodes faster from a string, whose
   * strings it takes as slices: made once, at the entry's first hit (the
   * document was valid UTF-8).
   */
  function l1Doc(e) {
    if (format === 'json' && typeof e.doc !== 'string') e.doc = e.doc.toString('utf8');
    return e.doc;
  }

  /*
   * A new value of L1 entry e as a Class, rebuilt from the tape kept at
   * its first hit in place of its document: every hit then rebuilds
   * without the core's parse. The L1 counts the tape's bytes, with the
   * strings its first rebuild keeps, instead of the document's.
   */
  function l1Rebuild(full, e, Class) {
    if (e.tape !== null) return tapes.rebuild(e.tape, Class);
    const tape = tapes.keep(l1Doc(e));
    e.tape = tape;
    e.doc = null;
    try {
      return tapes.rebuild(tape, Class);
    } finally {
      l1.resize(full, e, tape.bytes);
    }
  }

  /* The value of L1 entry e as a Class, or NONE (then the caller reads Redis, which decides). */
  function l1Value(full, e, Class) {
    if (l1.shared && e.Class === Class && e.value !== undefined) return e.value;
    let v;
    try {
      // A shared instance is decoded once per Class: no tape kept for it.
      v = tapes === undefined || l1.shared ? codec.decodeEntity(l1Doc(e), Class) : l1Rebuild(full, e, Class);
      if (Class !== undefined && v !== null && !(v instanceof Class)) return NONE;
    } catch (err) {
      if (err instanceof DarmokError && THROWN.has(err.code)) throw err;
      l1.drop(full);
      return NONE;
    }
    if (l1.shared) {
      e.value = v;
      e.Class = Class;
    }
    return v;
  }

  /* ---- reading entries ---------------------------------------------------- */

  function checkClass(Class) {
    if (Class !== undefined && Class !== null && typeof Class !== 'function') throw invalid('Class must be a class');
    return Class === null ? undefined : Class;
  }

  /* Reported, then CORRUPT (deleted while the key still holds raw) or the kind given. */
  function unusable(key, full, raw, kind, why, cause) {
    report(badEntry(why, cause), key);
    if (kind === CORRUPT) command('DEL (compare-and-delete)', () => redis.delIf(full, raw)).catch((err) => report(err, key));
    return kind;
  }

  /* The bytes of one entry (raw, read at full) -> its envelope, CORRUPT or UNREADABLE. */
  function envelope(key, full, raw) {
    const e = unpack(raw);
    if (typeof e === 'string') return unusable(key, full, raw, isRevision1(raw) ? CORRUPT : UNREADABLE, e);
    if (e.format !== format) {
      return unusable(key, full, raw, UNREADABLE, `written in the ${e.format} format, this cache reads ${format}`);
    }
    return e;
  }

  /*
   * The value in envelope e -> the value, CORRUPT, UNREADABLE or
   * WRONG_CLASS. An instance of another class than Class is thrown as
   * ERR_UNEXPECTED_CLASS (get, mget: the caller asked for the wrong
   * entry), or with classUnusable (getOrSet) a WRONG_CLASS entry to
   * replace. The Class check is made here too, so that it holds for plain
   * values whatever decodeEntity checks.
   */
  function valueOf(key, full, raw, e, Class, classUnusable) {
    let v;
    let problem;
    try {
      v = codec.decodeEntity(e.doc, Class);
      if (Class === undefined || v === null || v instanceof Class) return v;
      problem = wrongClass(Class, v, `the entry of ${JSON.stringify(key)}`);
    } catch (err) {
      problem = err;
    }
    const code = problem instanceof DarmokError ? problem.code : undefined;
    if (code === 'ERR_UNEXPECTED_CLASS') {
      if (!classUnusable) throw problem;
      return unusable(key, full, raw, WRONG_CLASS, `an entry of another class: ${problem.message}`, problem);
    }
    if (THROWN.has(code)) throw problem;
    const kind = code === 'ERR_SYNTAX' || code === 'ERR_FORMAT' ? CORRUPT : UNREADABLE;
    return unusable(key, full, raw, kind, `${code || problem.name}: ${problem.message}`, problem);
  }

  /* GET full as bytes (a promise). */
  function readRaw(full) {
    return command('GET', () => redis.get(full, true));
  }

  /* What a GET that rejected with err reads as: UNREADABLE (reported) for WRONGTYPE; any other failure rethrown. */
  function foreignType(key, err) {
    if (!isWrongType(err.cause)) throw err;
    report(badEntry('the key holds another type than a string: another application\'s value', err.cause), key);
    return UNREADABLE;
  }

  /* Whether the entry in envelope e (with tags) was not invalidated by one of them (read from Redis). */
  async function untagged(prefix, e) {
    const times = await command('MGET (tags)', () => redis.mget(e.tags.map((t) => tagKey(prefix, t)), false, slotTime));
    const lost = times.find((t) => t instanceof Error);
    if (lost !== undefined) throw redisError(lost, 'MGET (tags)');
    return !invalidatedBy(e.createdAt, times);
  }

  /*
   * What raw (GET's answer for full) holds for a call of view prefix:
   * { kind: NONE | CORRUPT | UNREADABLE | WRONG_CLASS } or { kind: 'fresh'
   * | 'stale', value, e } (raw too for WRONG_CLASS, to compare-and-set). A stale entry is decoded only within `grace` ms
   * (getOrSet's), and put in the L1 only when fresh and when no
   * invalidation came since ticket. A Redis failure of the tag lookup is
   * a rejection with ERR_REDIS. Synchronous (no promise on the hot path)
   * unless the entry has tags to look up.
   */
  function examine(prefix, key, full, raw, Class, graceMs, classUnusable, ticket) {
    if (raw === null || raw === undefined) return { kind: NONE };
    if (typeof raw === 'symbol') return { kind: raw };
    const e = envelope(key, full, raw);
    if (typeof e === 'symbol') return { kind: e };
    const now = Date.now();
    if (now >= e.staleAt + graceMs) return { kind: NONE };
    if (e.tags === null) return decoded(key, full, raw, e, Class, classUnusable, ticket, now);
    return untagged(prefix, e).then((ok) => (ok ? decoded(key, full, raw, e, Class, classUnusable, ticket, now) : { kind: NONE }));
  }

  /* examine()'s last step, for an entry that is there, in time and not invalidated by a tag. */
  function decoded(key, full, raw, e, Class, classUnusable, ticket, now) {
    const value = valueOf(key, full, raw, e, Class, classUnusable);
    if (typeof value === 'symbol') return { kind: value, raw };
    if (now >= e.staleAt) return { kind: 'stale', value, e };
    if (l1 !== null) {
      // A copy: the reply's Buffer may be a view of a larger socket buffer, which the L1 would keep.
      if (typeof e.doc !== 'string') e.doc = Buffer.from(e.doc);
      if (l1.put(full, e, ticket) && l1.shared) {
        e.value = value;
        e.Class = Class;
      }
    }
    return { kind: 'fresh', value, e };
  }

  /*
   * GET + examine: what the entry of full is now (examine's result); a
   * Redis failure rejects with ERR_REDIS.
   */
  async function readExamined(prefix, key, full, Class, graceMs, classUnusable) {
    const ticket = l1 === null ? 0 : l1.ticket();
    let raw;
    try {
      raw = await readRaw(full);
    } catch (err) {
      raw = foreignType(key, err);
    }
    return examine(prefix, key, full, raw, Class, graceMs, classUnusable, ticket);
  }

  /* GET + examine, for get() and a lock waiter: the fresh value, or NONE; a Redis failure is failed(). */
  async function readFresh(prefix, key, full, Class, classUnusable) {
    try {
      const r = await readExamined(prefix, key, full, Class, 0, classUnusable);
      return r.kind === 'fresh' ? r.value : NONE;
    } catch (err) {
      if (!isRedisFailure(err)) throw err;
      failed(err, key);
      return NONE;
    }
  }

  /* ---- writing entries ---------------------------------------------------- */

  function ttlOf(value, o) {
    return value === null ? o.nullTtl : o.ttl;
  }

  /*
   * Writes value under full for ttl seconds (less up to jitter of it) and
   * grace more. ifHolds: undefined, whatever the key holds (set, mset: the
   * caller's own writes); null, only while it holds a string or nothing
   * (getOrSet's store: another application's hash, even one made while the
   * loader ran, is reported and left); bytes, only while the key still
   * holds those bytes. Encodes first: a value darmok cannot encode throws,
   * and nothing is sent. Resolves to whether it was written; a Redis
   * failure rejects with ERR_REDIS. With the L1, the key is invalidated
   * here and on the bus.
   */
  async function write(key, full, value, ttl, o, tags, ifHolds) {
    const now = Date.now();
    const ttlMs = Math.max(1, Math.round(ttl * 1000 * (1 - o.jitter * Math.random())));
    const staleAt = now + ttlMs;
    const doc = codec.encodeEntity(value, AS_BYTES);
    const extra = tagFields(tags, now);
    if (extra.length > TAG_FIELDS_MAX) throw invalid(`the tags of ${JSON.stringify(key)} take more than ${TAG_FIELDS_MAX} bytes`);
    const entry = pack(format, staleAt, doc, extra);
    const px = ttlMs + Math.round(o.grace * 1000);
    let ticket = 0;
    if (l1 !== null) {
      l1.invalidate(full);
      ticket = l1.ticket();
    }
    let written;
    if (ifHolds === undefined) written = await command('SET', () => redis.set(full, entry, px));
    else if (ifHolds === null) {
      written = Number(await command('EVAL (SET over a string)', () => redis.setString(full, entry, px))) === 1;
      if (!written) report(badEntry('the key holds another type than a string: another application\'s value, not written over'), key);
    } else written = Number(await command('EVAL (compare-and-set)', () => redis.setIf(full, ifHolds, entry, px))) === 1;
    if (l1 !== null && written) {
      l1.put(full, { doc, staleAt, createdAt: now, tags: tags === undefined || tags.length === 0 ? null : tags }, ticket);
      publish({ k: [full] }, key);
    }
    return Boolean(written);
  }

  /* Per-call options (table: SET or GET_OR_SET) over the cache's. */
  function callOptions(table, o, what) {
    if (o === undefined || o === null) return base;
    const given = read(table, o, what);
    const out = { ...base };
    for (const name of Object.keys(table)) if (o[name] !== undefined) out[name] = given[name];
    if (o.nullTtl === undefined && o.ttl !== undefined && opts.nullTtl === undefined) out.nullTtl = given.ttl;
    return out;
  }

  /*
   * At the first lock, once: a maxmemory-policy that can evict the lock key
   * (a lock evicted under memory pressure lets a second process load) is
   * a process warning. Not a command(): its failure (CONFIG refused) is no
   * Redis failure, and nobody waits for it.
   */
  let evictionProbed = false;
  function beforeLock() {
    if (evictionProbed) return;
    evictionProbed = true;
    Promise.resolve().then(() => redis.evictionPolicy()).then((policy) => {
      if (!evictsLock(policy)) return;
      const message = `darmok/redis: maxmemory-policy is ${policy}, so Redis may evict the lock keys of getOrSet ` +
        `(prefix + key + '${LOCK_SUFFIX}') when memory is full, and then two processes may load one key. noeviction keeps them.`;
      obs.log('warn', message);
      process.emitWarning(message, { code: 'DARMOK_LOCK_EVICTABLE' });
    }, () => {});
  }

  const getOrSetOf = createGetOrSet({
    counts, emit, report, failed, command, redis, lockTimes, l1, l1Entry, l1Value, checkClass, callOptions,
    readFresh, readExamined, write, ttlOf, beforeLock, wrongClass
  });

  function makeView(prefix) {
    const views = new Map();

    function checkKey(key) {
      if (typeof key !== 'string') throw invalid(`a key must be a string, not ${typeof key}`);
      return prefix + key;
    }

    function hit(key, tier) {
      counts.hits++;
      if (tier === 'l1') counts.l1Hits++;
      else counts.redisHits++;
      emit('hit', key);
    }

    function miss(key) {
      counts.misses++;
      emit('miss', key);
      return null;
    }

    /* ---- get, set, mget, mset, del, deleteByTag, clear ---------------------- */

    async function get(key, Class) {
      const full = checkKey(key);
      Class = checkClass(Class);
      if (l1 !== null) {
        const e = l1Entry(full, Date.now());
        if (e !== undefined) {
          const v = l1Value(full, e, Class);
          if (v !== NONE) {
            hit(key, 'l1');
            return v;
          }
        }
      }
      const v = await readFresh(prefix, key, full, Class, false);
      if (v === NONE) return miss(key);
      hit(key, 'redis');
      return v;
    }

    async function set(key, value, o) {
      const full = checkKey(key);
      const opts2 = callOptions(SET, o, 'set');
      if (value === undefined) return false;
      try {
        return await write(key, full, value, ttlOf(value, opts2), opts2, opts2.tags);
      } catch (err) {
        if (!isRedisFailure(err)) throw err; // the value did not encode
        failed(err, key);
        return false;
      }
    }

    async function mget(keys, Class) {
      if (!Array.isArray(keys)) throw invalid('mget takes an array of keys');
      const full = keys.map(checkKey);
      Class = checkClass(Class);
      if (keys.length === 0) return [];
      const out = new Array(keys.length);
      const todo = [];
      const now = Date.now();
      for (let i = 0; i < keys.length; i++) {
        const e = l1 === null ? undefined : l1Entry(full[i], now);
        const v = e === undefined ? NONE : l1Value(full[i], e, Class);
        if (v === NONE) {
          todo.push(i);
        } else {
          hit(keys[i], 'l1');
          out[i] = v;
        }
      }
      if (todo.length === 0) return out;
      const ticket = l1 === null ? 0 : l1.ticket();
      let raws;
      try {
        const asked = todo.length === keys.length ? full : todo.map((i) => full[i]);
        raws = await command('MGET', () => redis.mget(asked, true, slotTime));
      } catch (err) {
        failed(err, todo.map((i) => keys[i]).join(' '));
        raws = new Array(todo.length).fill(null);
      }
      // The keys of cluster slots that failed hold the (one) Error: reported once, misses.
      const lost = raws.find((r) => r instanceof Error);
      if (lost !== undefined) {
        failed(redisError(lost, 'MGET'), todo.filter((_, j) => raws[j] === lost).map((i) => keys[i]).join(' '));
        for (let j = 0; j < raws.length; j++) if (raws[j] === lost) raws[j] = null;
      }
      const settle = (i, r) => {
        if (r.kind === 'fresh') {
          hit(keys[i], 'redis');
          out[i] = r.value;
        } else {
          out[i] = miss(keys[i]);
        }
      };
      // Entries are examined in turn; only tagged ones wait for their tags' lookup.
      const tagged = [];
      for (let j = 0; j < todo.length; j++) {
        const i = todo[j];
        const r = examine(prefix, keys[i], full[i], raws[j], Class, 0, false, ticket);
        if (!(r instanceof Promise)) {
          settle(i, r);
          continue;
        }
        tagged.push(r.then((found) => settle(i, found), (err) => {
          if (!isRedisFailure(err)) throw err;
          failed(err, keys[i]);
          settle(i, { kind: NONE });
        }));
      }
      if (tagged.length > 0) await Promise.all(tagged);
      return out;
    }

    /* entries: a Map or an iterable of [key, value]. Resolves to how many were written. */
    async function mset(entries, o) {
      if (entries === null || typeof entries !== 'object' || typeof entries[Symbol.iterator] !== 'function') {
        throw invalid('mset takes a Map or an array of [key, value]');
      }
      const list = [...entries];
      for (const pair of list) {
        if (!Array.isArray(pair)) throw invalid('mset takes a Map or an array of [key, value]');
        checkKey(pair[0]);
      }
      callOptions(SET, o, 'mset');
      const written = await Promise.all(list.map(([key, value]) => set(key, value, o)));
      return written.filter(Boolean).length;
    }

    /* del(key) or del([keys]) -> how many existed. */
    async function del(keys) {
      const list = typeof keys === 'string' ? [keys] : keys;
      if (!Array.isArray(list)) throw invalid('del takes a key or an array of keys');
      const full = list.map(checkKey);
      if (full.length === 0) return 0;
      if (l1 !== null) for (const f of full) l1.invalidate(f);
      let r;
      try {
        r = await command('DEL', () => redis.del(full, slotTime));
      } catch (err) {
        failed(err, list.join(' '));
        return 0;
      }
      publish({ k: written(r, full) }, list.join(' '));
      partlyFailed(r, 'DEL', list);
      return r.n;
    }

    /*
     * deleteByTag(tag | tags) -> true once every entry of this cache (or
     * namespace) with one of the tags is a miss, in every process: the
     * tags' deletion times written (cache/tags.cjs), the L1s told.
     */
    async function deleteByTag(tags) {
      const list = tagsOption(tags, 'deleteByTag');
      if (list.length === 0) return true;
      const wanted = new Set(list);
      if (l1 !== null) l1.invalidateWhere((full, e) => full.startsWith(prefix) && e.tags !== null && e.tags.some((t) => wanted.has(t)));
      const now = String(Date.now());
      let r;
      try {
        r = await command('MSET (tags)', () => redis.setMany(list.map((t) => [tagKey(prefix, t), now]), slotTime));
      } catch (err) {
        failed(err, list.join(' '));
        return false;
      }
      publish({ t: written(r, list), p: prefix }, list.join(' '));
      partlyFailed(r, 'MSET (tags)', list);
      return r.error === undefined;
    }

    /*
     * clear() -> how many keys were removed: every key under this cache's
     * (or namespace's) prefix, entries, locks and tags, on every master
     * of a cluster, by SCAN MATCH and UNLINK (never KEYS or FLUSHDB).
     */
    async function clear() {
      if (prefix === '') {
        throw invalid('clear() needs a prefix: with prefix \'\' it would remove every key of the database');
      }
      if (l1 !== null) l1.invalidateWhere((full) => full.startsWith(prefix));
      const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      let removed = 0;
      let nodes;
      try {
        nodes = await command('CLUSTER NODES', () => redis.masters());
      } catch (err) {
        failed(err, prefix);
        return 0;
      }
      // Each master alone: one that fails leaves the others' keys removed.
      const problems = [];
      await Promise.all(nodes.map(async (node) => {
        if (node instanceof Error) {
          problems.push(redisError(node, 'CLUSTER NODES'));
          return;
        }
        let cursor = '0';
        try {
          do {
            const [next, keys] = await command('SCAN', () => redis.scan(node, cursor, match, 1000));
            if (keys.length > 0) {
              const r = await command('UNLINK', () => redis.unlink(keys, slotTime));
              removed += r.n;
              if (r.error !== undefined) problems.push(redisError(r.error, 'UNLINK'));
            }
            cursor = String(next);
          } while (cursor !== '0');
        } catch (err) {
          problems.push(err);
        }
      }));
      publish({ p: prefix }, prefix);
      for (const err of problems) report(err, prefix);
      if (!failOpen && problems.length > 0) throw problems[0];
      return removed;
    }

    const getOrSet = getOrSetOf(prefix, checkKey, hit, miss);

    function namespace(name) {
      if (typeof name !== 'string' || name === '') throw invalid('namespace(name): name must be a non-empty string');
      let v = views.get(name);
      if (v === undefined) views.set(name, v = makeView(`${prefix}${name}:`));
      return v;
    }

    const view = Object.freeze({
      format, prefix, codec, get, set, mget, mset, del, getOrSet, deleteByTag, clear, namespace, stats, close,
      on(event, listener) {
        obs.on(event, listener);
        return view;
      },
      off(event, listener) {
        obs.off(event, listener);
        return view;
      },
      /* The Redis key of an entry: exactly prefix + key. */
      redisKey: (key) => checkKey(key)
    });
    return view;
  }

  function stats() {
    return obs.stats({ bus: bus === null ? 'off' : bus.up() ? 'up' : 'down', breaker: breaker.state, l1Entries: l1 === null ? 0 : l1.size });
  }

  /* Closes what the cache opened: the bus's subscriber connection. The client stays the user's. */
  async function close() {
    if (bus !== null) bus.close();
    if (l1 !== null) l1.invalidateAll();
  }

  return makeView(opts.prefix);
}

module.exports = { createCache, LOCK_SUFFIX, DEFAULTS };

