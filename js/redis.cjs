'use strict';
/*
 * redis.cjs - darmok/redis: createCache(options), a cache of class
 * instances on Redis or Redis Cluster through the user's own node-redis
 * (4, 5, 6) or ioredis (5, 6) client. docs/CACHE.md is the reference;
 * redis-entry.cjs the bytes of an entry; redis-clients.cjs the clients.
 *
 * The rules the code keeps:
 *   - The Redis key of an entry is exactly prefix + key; one key per entry,
 *     written by one SET ... PX (ttl + grace).
 *   - Every Redis command is bounded by `timeout`. A failed or late one is
 *     reported and, with failOpen (the default), taken as a miss: get
 *     answers null and getOrSet calls the loader. With failOpen: false the
 *     caller gets ERR_REDIS with the client's error as its cause.
 *   - An entry that does not decode is a miss, reported as
 *     ERR_CACHE_ENTRY. A corrupt one is deleted (only while it still holds
 *     those bytes) or overwritten by the reload; one this process cannot
 *     read (another application's, a newer writer's) is left as it is. A
 *     wrong Class (ERR_UNEXPECTED_CLASS) is thrown: the caller's bug.
 *   - Concurrent getOrSet calls of one key and Class in this process share
 *     one read and one loader call, until the loader settles; with `lock`,
 *     processes share one loader call through SET NX PX and a
 *     compare-and-delete release once the load has settled.
 */

const { randomUUID } = require('node:crypto');
const { createCodec } = require('./codec.cjs');
const { DarmokError } = require('./errors.cjs');
const { adapt } = require('./redis-clients.cjs');
const { pack, unpack, isRevision1 } = require('./redis-entry.cjs');

const DEFAULTS = Object.freeze({
  prefix: '',
  ttl: 60, //           seconds an entry is fresh
  grace: 0, //          seconds a stale entry may still be served by getOrSet
  timeout: 250, //      ms for one Redis command
  softTimeout: 0, //    ms a stale hit waits for its refresh before answering stale
  hardTimeout: 0, //    ms a miss waits for its loader (0: no bound)
  lockTtl: 10000, //    ms the cross-process lock lives unless released
  lockWait: 5000, //    ms a process waits for the lock holder's value, then loads itself
  lockPoll: 20 //       ms between two looks at the value while waiting
});

/* The suffix of a lock's Redis key: prefix + key + LOCK_SUFFIX. */
const LOCK_SUFFIX = ':darmok-lock';

const EVENTS = ['hit', 'miss', 'stale', 'load', 'lockWait', 'error'];

/*
 * What reading an entry that is there but not usable gives. A CORRUPT entry
 * (a darmok/1 header or document that does not parse) is deleted and a
 * reload overwrites it; an UNREADABLE one (no darmok envelope: someone
 * else's value; a newer envelope, class version or class; the other
 * format) is left as it is, for the process that can read it.
 */
const CORRUPT = Symbol('corrupt entry');
const UNREADABLE = Symbol('unreadable entry');
/* What a read gives when there is no fresh value (absent, stale, unusable, Redis failed). */
const NONE = Symbol('no fresh value');
/* What a refresh resolves to when it gave no new value. */
const NO_VALUE = Symbol('no value');
/* What withLock resolves to when another process holds the lock. */
const NOT_LOCKED = Symbol('not locked');

function invalid(message) {
  return new DarmokError('ERR_INVALID_OPTION', `createCache: ${message}`);
}

function number(options, name, fallback, min) {
  const v = options === undefined || options === null ? undefined : options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw invalid(`${name} must be a finite number >= ${min}`);
  return v;
}

function redisError(cause, what) {
  const err = new DarmokError('ERR_REDIS', `Redis ${what} failed: ${cause && cause.message}`);
  err.cause = cause;
  return err;
}

function timeoutCause(ms) {
  const err = new Error(`no answer from Redis within ${ms} ms`);
  err.name = 'TimeoutError';
  return err;
}

function loadTimeout(key, ms) {
  return new DarmokError('ERR_LOAD_TIMEOUT', `the loader of ${JSON.stringify(key)} took longer than hardTimeout (${ms} ms)`);
}

function badEntry(reason, cause) {
  const err = new DarmokError('ERR_CACHE_ENTRY', `unusable cache entry: ${reason}`);
  if (cause !== undefined) err.cause = cause;
  return err;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/*
 * createCache({ client, format?, codec?, registry?, prefix?, ttl?, nullTtl?,
 * grace?, timeout?, softTimeout?, hardTimeout?, failOpen?, lock?, onError? })
 * -> the cache. Durations: ttl, nullTtl and grace in seconds (fractions
 * allowed); the timeouts and lock times in milliseconds.
 */
function createCache(options) {
  if (options === null || typeof options !== 'object') throw invalid('takes { client, ... }');
  const redis = adapt(options.client);
  let codec = options.codec;
  if (codec === undefined) {
    codec = createCodec({ format: options.format === undefined ? 'json' : options.format, registry: options.registry });
  } else if (codec === null || typeof codec.encodeEntity !== 'function' || typeof codec.decodeEntity !== 'function') {
    throw invalid('codec must come from createCodec()');
  } else if (options.format !== undefined && options.format !== codec.format) {
    throw invalid(`format ${JSON.stringify(options.format)} differs from the codec's (${codec.format})`);
  }
  const format = codec.format;
  const prefix = options.prefix === undefined ? DEFAULTS.prefix : options.prefix;
  if (typeof prefix !== 'string') throw invalid('prefix must be a string');
  const base = {
    ttl: number(options, 'ttl', DEFAULTS.ttl, 0.001),
    grace: number(options, 'grace', DEFAULTS.grace, 0),
    softTimeout: number(options, 'softTimeout', DEFAULTS.softTimeout, 0),
    hardTimeout: number(options, 'hardTimeout', DEFAULTS.hardTimeout, 0),
    lock: false
  };
  base.nullTtl = number(options, 'nullTtl', base.ttl, 0.001);
  const timeout = number(options, 'timeout', DEFAULTS.timeout, 1);
  const failOpen = options.failOpen === undefined ? true : options.failOpen;
  if (typeof failOpen !== 'boolean') throw invalid('failOpen must be true or false');
  const onError = options.onError;
  if (onError !== undefined && typeof onError !== 'function') throw invalid('onError must be a function');
  let lockTtl = DEFAULTS.lockTtl;
  let lockWait = DEFAULTS.lockWait;
  let lockPoll = DEFAULTS.lockPoll;
  const lock = options.lock;
  if (lock === true) {
    base.lock = true;
  } else if (lock !== undefined && lock !== false) {
    if (lock === null || typeof lock !== 'object') throw invalid('lock must be true, false or { ttl, wait, poll }');
    base.lock = true;
    lockTtl = number(lock, 'ttl', lockTtl, 1);
    lockWait = number(lock, 'wait', lockWait, 0);
    lockPoll = number(lock, 'poll', lockPoll, 1);
  }

  const counts = { hits: 0, staleHits: 0, misses: 0, loads: 0, loadErrors: 0, lockWaits: 0, errors: 0 };
  const listeners = Object.create(null);
  for (const e of EVENTS) listeners[e] = [];
  /* key -> Class -> a getOrSet in progress (its read and its load): { promise, ... }. */
  const flights = new Map();
  /* key -> Class -> a background refresh in progress: { promise }. */
  const refreshes = new Map();

  function emit(name, a, b) {
    const list = listeners[name];
    for (let i = 0; i < list.length; i++) {
      try {
        list[i](a, b);
      } catch (err) {
        process.emitWarning(`darmok/redis: a '${name}' listener threw: ${err && err.message}`);
      }
    }
  }

  /* Every problem that is not the caller's to handle goes here. */
  function report(err, key) {
    counts.errors++;
    if (onError !== undefined) {
      try {
        onError(err, key);
      } catch (e) {
        process.emitWarning(`darmok/redis: onError threw: ${e && e.message}`);
      }
    }
    emit('error', err, key);
  }

  /*
   * The commands in flight, oldest first. Every command of a cache has the
   * same timeout, so deadlines come in the order commands were sent, and
   * one timer, armed for the oldest, serves them all: a timer per command
   * would start and stop libuv's timer on every call of the hot path.
   * Answered commands are trimmed from both ends of the queue.
   */
  const inFlight = [];
  let oldest = 0;
  let timer = null;

  function arm() {
    while (oldest < inFlight.length && inFlight[oldest].done) oldest++;
    if (oldest === inFlight.length) {
      inFlight.length = 0;
      oldest = 0;
      timer = null;
      return;
    }
    timer = setTimeout(expire, Math.max(1, inFlight[oldest].deadline - Date.now()));
    // The cache never keeps a process alive; the client's socket does while it is open.
    timer.unref();
  }

  function expire() {
    const now = Date.now();
    while (oldest < inFlight.length) {
      const op = inFlight[oldest];
      if (!op.done) {
        if (op.deadline > now) break;
        op.done = true;
        op.reject(redisError(timeoutCause(timeout), op.what));
      }
      oldest++;
    }
    arm();
  }

  function answered(op) {
    op.done = true;
    let n = inFlight.length;
    while (n > oldest && inFlight[n - 1].done) n--;
    inFlight.length = n;
    while (oldest < n && inFlight[oldest].done) oldest++;
    if (oldest === n) {
      inFlight.length = 0;
      oldest = 0;
    }
  }

  /*
   * One Redis command, bounded by `timeout`: send() makes it. Rejects with
   * ERR_REDIS; a client that says it is disconnected is not sent anything,
   * so nothing piles up in its offline queue.
   */
  function command(what, send) {
    if (!redis.ready()) return Promise.reject(redisError(new Error(`the ${redis.name} client is not connected`), what));
    let sent;
    try {
      sent = send();
    } catch (err) {
      return Promise.reject(redisError(err, what));
    }
    return new Promise((resolve, reject) => {
      const op = { deadline: Date.now() + timeout, done: false, reject, what };
      inFlight.push(op);
      if (timer === null) arm();
      sent.then((v) => {
        if (op.done) return;
        answered(op);
        resolve(v);
      }, (err) => {
        if (op.done) return;
        answered(op);
        reject(redisError(err, what));
      });
    });
  }

  /* A Redis failure: reported, then a miss (failOpen) or thrown. */
  function failed(err, key) {
    report(err, key);
    if (!failOpen) throw err;
  }

  function checkKey(key) {
    if (typeof key !== 'string') throw invalid(`a key must be a string, not ${typeof key}`);
    return prefix + key;
  }

  function checkClass(Class) {
    if (Class !== undefined && Class !== null && typeof Class !== 'function') throw invalid('Class must be a class');
    return Class === null ? undefined : Class;
  }

  /* Reported, then CORRUPT (deleted while the key still holds raw) or UNREADABLE (left as it is). */
  function unusable(key, full, raw, kind, why, cause) {
    report(badEntry(why, cause), key);
    if (kind === CORRUPT) command('DEL (compare-and-delete)', () => redis.delIf(full, raw)).catch((err) => report(err, key));
    return kind;
  }

  /* The bytes of one entry (raw, read at full) -> its envelope { format, staleAt, doc }, CORRUPT or UNREADABLE. */
  function envelope(key, full, raw) {
    const e = unpack(raw);
    if (typeof e === 'string') return unusable(key, full, raw, isRevision1(raw) ? CORRUPT : UNREADABLE, e);
    if (e.format !== format) {
      return unusable(key, full, raw, UNREADABLE, `written in the ${e.format} format, this cache reads ${format}`);
    }
    return e;
  }

  /*
   * The value in envelope e -> the value, CORRUPT or UNREADABLE. A wrong
   * Class (ERR_UNEXPECTED_CLASS) is the caller's bug, not the entry's: it
   * is thrown.
   */
  function valueOf(key, full, raw, e, Class) {
    try {
      return codec.decodeEntity(e.doc, Class);
    } catch (err) {
      const code = err instanceof DarmokError ? err.code : undefined;
      if (code === 'ERR_UNEXPECTED_CLASS') throw err;
      const kind = code === 'ERR_SYNTAX' || code === 'ERR_FORMAT' ? CORRUPT : UNREADABLE;
      return unusable(key, full, raw, kind, `${code || err.name}: ${err.message}`, err);
    }
  }

  /* raw (null: absent) -> the value if the entry is fresh, else NONE; a stale entry is not decoded. */
  function freshValue(key, full, raw, Class) {
    if (raw === null || raw === undefined) return NONE;
    const e = envelope(key, full, raw);
    if (typeof e === 'symbol' || Date.now() >= e.staleAt) return NONE;
    const v = valueOf(key, full, raw, e, Class);
    return typeof v === 'symbol' ? NONE : v;
  }

  function readRaw(full) {
    return command('GET', () => redis.get(full, true));
  }

  /* GET -> the fresh value or NONE; a Redis failure is failed(): NONE, or thrown without failOpen. */
  async function readFresh(key, full, Class) {
    let raw;
    try {
      raw = await readRaw(full);
    } catch (err) {
      failed(err, key);
      return NONE;
    }
    return freshValue(key, full, raw, Class);
  }

  function ttlOf(value, o) {
    return value === null ? o.nullTtl : o.ttl;
  }

  /* SET full <envelope + document> PX (ttl + grace). */
  function write(full, value, ttl, grace) {
    const staleAt = Date.now() + Math.round(ttl * 1000);
    const entry = pack(format, staleAt, codec.encodeEntity(value));
    const px = Math.max(1, Math.round((ttl + grace) * 1000));
    return command('SET', () => redis.set(full, entry, px));
  }

  /* Per-call options over the cache's. */
  function callOptions(o) {
    if (o === undefined || o === null) return base;
    if (typeof o !== 'object') throw invalid('options must be an object');
    const ttl = number(o, 'ttl', base.ttl, 0.001);
    const lockOption = o.lock === undefined ? base.lock : o.lock;
    if (typeof lockOption !== 'boolean') throw invalid('the per-call lock option must be true or false');
    return {
      ttl,
      nullTtl: number(o, 'nullTtl', o.ttl !== undefined && options.nullTtl === undefined ? ttl : base.nullTtl, 0.001),
      grace: number(o, 'grace', base.grace, 0),
      softTimeout: number(o, 'softTimeout', base.softTimeout, 0),
      hardTimeout: number(o, 'hardTimeout', base.hardTimeout, 0),
      lock: lockOption
    };
  }

  /* ---- get, set, mget, mset, del ----------------------------------------- */

  function counted(key, v) {
    if (v === NONE) {
      counts.misses++;
      emit('miss', key);
      return null;
    }
    counts.hits++;
    emit('hit', key);
    return v;
  }

  async function get(key, Class) {
    const full = checkKey(key);
    Class = checkClass(Class);
    return counted(key, await readFresh(key, full, Class));
  }

  async function set(key, value, o) {
    const full = checkKey(key);
    const opts = callOptions(o);
    if (value === undefined) return false;
    try {
      await write(full, value, ttlOf(value, opts), opts.grace);
      return true;
    } catch (err) {
      if (!(err instanceof DarmokError) || err.code !== 'ERR_REDIS') throw err; // the value did not encode
      failed(err, key);
      return false;
    }
  }

  async function mget(keys, Class) {
    if (!Array.isArray(keys)) throw invalid('mget takes an array of keys');
    const full = keys.map(checkKey);
    Class = checkClass(Class);
    if (keys.length === 0) return [];
    let raws;
    try {
      raws = await command('MGET', () => redis.mget(full, true));
    } catch (err) {
      failed(err, keys.join(' '));
      raws = new Array(keys.length).fill(null);
    }
    const out = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) out[i] = counted(keys[i], freshValue(keys[i], full[i], raws[i], Class));
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
    const written = await Promise.all(list.map(([key, value]) => set(key, value, o)));
    return written.filter(Boolean).length;
  }

  /* del(key) or del([keys]) -> how many existed. */
  async function del(keys) {
    const list = typeof keys === 'string' ? [keys] : keys;
    if (!Array.isArray(list)) throw invalid('del takes a key or an array of keys');
    const full = list.map(checkKey);
    if (full.length === 0) return 0;
    try {
      return Number(await command('DEL', () => redis.del(full)));
    } catch (err) {
      failed(err, list.join(' '));
      return 0;
    }
  }

  /* ---- getOrSet ------------------------------------------------------------ */

  /*
   * Calls the loader and, with store, stores its value once it arrives.
   * Settles when the loader and the write have: callers that gave up at
   * their hardTimeout do not shorten it. undefined is returned, not stored.
   */
  async function loadAndStore(key, full, loader, o, store = true) {
    counts.loads++;
    emit('load', key);
    let value;
    try {
      value = await loader();
    } catch (err) {
      counts.loadErrors++;
      throw err;
    }
    if (value === undefined || !store) return value;
    try {
      await write(full, value, ttlOf(value, o), o.grace);
    } catch (err) {
      if (err instanceof DarmokError && err.code === 'ERR_REDIS') failed(err, key);
      else report(err, key); // the loader's value did not encode: served, not cached
    }
    return value;
  }

  /*
   * Runs fn(locked) holding the cross-process lock of key (SET NX PX, then
   * a compare-and-delete of our token once fn has settled) and resolves to
   * what fn does; NOT_LOCKED when another process holds the lock. When
   * Redis fails to answer the SET NX, fn(false) runs without the lock (or,
   * without failOpen, the error is thrown): no release is sent for a lock
   * never taken.
   */
  async function withLock(key, full, fn) {
    const lockKey = full + LOCK_SUFFIX;
    const token = randomUUID();
    let got;
    try {
      got = await command('SET NX', () => redis.setNx(lockKey, token, lockTtl));
    } catch (err) {
      failed(err, key);
      return fn(false);
    }
    if (!got) return NOT_LOCKED;
    try {
      return await fn(true);
    } finally {
      command('EVAL (release lock)', () => redis.delIf(lockKey, token)).catch((err) => report(err, key));
    }
  }

  /*
   * The lock holder's part: another process may have stored the value and
   * released the lock between our read and our lock, so look once more.
   */
  async function loadUnlessFresh(key, full, Class, loader, o, locked) {
    if (locked) {
      const v = await readFresh(key, full, Class);
      if (v !== NONE) return v;
    }
    return loadAndStore(key, full, loader, o);
  }

  /* Loads under the cross-process lock: one process loads, the others wait for its value. */
  async function loadLocked(key, full, Class, loader, o) {
    const asHolder = (locked) => loadUnlessFresh(key, full, Class, loader, o, locked);
    let v = await withLock(key, full, asHolder);
    if (v !== NOT_LOCKED) return v;
    counts.lockWaits++;
    emit('lockWait', key);
    const deadline = Date.now() + lockWait;
    while (Date.now() < deadline) {
      await sleep(lockPoll);
      v = await readFresh(key, full, Class);
      if (v !== NONE) return v;
      // The holder is gone without storing a value (its loader failed or
      // gave undefined, or it died and the lock expired): take over.
      v = await withLock(key, full, asHolder);
      if (v !== NOT_LOCKED) return v;
    }
    return loadAndStore(key, full, loader, o);
  }

  /*
   * Calls in progress, by key and then by Class: callers of one key with
   * another Class must not get the first one's instance.
   */
  function joinable(map, key, Class) {
    const byClass = map.get(key);
    return byClass === undefined ? undefined : byClass.get(Class);
  }

  /* Puts f in map until f.promise settles; then done(err) with its rejection, if any. */
  function track(map, key, Class, f, done) {
    let byClass = map.get(key);
    if (byClass === undefined) map.set(key, byClass = new Map());
    byClass.set(Class, f);
    const untrack = (err) => {
      if (byClass.get(Class) === f) byClass.delete(Class);
      if (byClass.size === 0 && map.get(key) === byClass) map.delete(key);
      if (done !== undefined) done(err);
    };
    f.promise.then(() => untrack(undefined), untrack);
  }

  /* One background refresh per key and Class; resolves to the new value or NO_VALUE, never rejects. */
  function refresh(key, full, Class, loader, o) {
    let f = joinable(refreshes, key, Class);
    if (f !== undefined) return f.promise;
    const run = async () => {
      try {
        const v = o.lock
          ? await withLock(key, full, (locked) => loadUnlessFresh(key, full, Class, loader, o, locked))
          : await loadAndStore(key, full, loader, o);
        return v === undefined || v === NOT_LOCKED ? NO_VALUE : v; // NOT_LOCKED: another process refreshes it
      } catch (err) {
        report(err, key);
        return NO_VALUE;
      }
    };
    f = { promise: run() };
    track(refreshes, key, Class, f);
    return f.promise;
  }

  /*
   * The read and, on a miss, the load of one flight f. f.loading is set,
   * and f.onLoad called, when the load starts: each caller's hardTimeout
   * counts from there.
   */
  async function resolve(key, full, Class, loader, o, f) {
    let raw = null;
    let redisDown = false;
    try {
      raw = await readRaw(full);
    } catch (err) {
      failed(err, key);
      redisDown = true;
    }
    let kind = null;
    if (raw !== null && raw !== undefined) {
      const e = envelope(key, full, raw);
      const now = Date.now();
      if (typeof e === 'symbol') {
        kind = e;
      } else if (now < e.staleAt || (o.grace > 0 && now < e.staleAt + o.grace * 1000)) {
        const v = valueOf(key, full, raw, e, Class);
        if (typeof v === 'symbol') {
          kind = v;
        } else if (now < e.staleAt) {
          counts.hits++;
          emit('hit', key);
          return v;
        } else {
          counts.staleHits++;
          emit('stale', key);
          const refreshing = refresh(key, full, Class, loader, o);
          if (o.softTimeout > 0) {
            let timer;
            const waited = await Promise.race([
              refreshing,
              new Promise((r) => { timer = setTimeout(r, o.softTimeout, NO_VALUE); })
            ]);
            clearTimeout(timer);
            if (waited !== NO_VALUE) return waited;
          }
          return v;
        }
      }
    }
    counts.misses++;
    emit('miss', key);
    // An entry this process cannot read is left for the processes that can:
    // the loader's value is served, not written over it, and with nothing
    // to be written the lock has nothing to guard.
    const loading = kind === UNREADABLE ? loadAndStore(key, full, loader, o, false)
      : o.lock && !redisDown ? loadLocked(key, full, Class, loader, o)
        : loadAndStore(key, full, loader, o);
    f.loading = true;
    for (const started of f.onLoad) started();
    f.onLoad = null;
    return loading;
  }

  /* p, or ERR_LOAD_TIMEOUT once ms have passed. */
  function bounded(p, key, ms, f) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => {
        f.timedOut = true;
        reject(loadTimeout(key, ms));
      }, ms);
    });
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  }

  /* What one caller of flight f gets: its result, the load bounded by the caller's hardTimeout. */
  function answer(f, key, ms) {
    if (ms === 0) return f.promise;
    if (f.loading) return bounded(f.promise, key, ms, f);
    return new Promise((resolveAnswer, reject) => {
      f.promise.then(resolveAnswer, reject);
      f.onLoad.push(() => bounded(f.promise, key, ms, f).then(resolveAnswer, reject));
    });
  }

  /*
   * getOrSet(key, Class, loader, { ttl, nullTtl, grace, softTimeout,
   * hardTimeout, lock }) -> the cached value, or the loader's (cached).
   * Callers of one key and Class while a call is in progress share it, until
   * its loader has settled: also those that come after a caller gave up at
   * its hardTimeout.
   */
  function getOrSet(key, Class, loader, o) {
    let full;
    try {
      full = checkKey(key);
      Class = checkClass(Class);
      if (typeof loader !== 'function') throw invalid('getOrSet(key, Class, loader, options?): loader must be a function');
      o = callOptions(o);
    } catch (err) {
      return Promise.reject(err);
    }
    let f = joinable(flights, key, Class);
    if (f === undefined) {
      f = { promise: null, loading: false, onLoad: [], timedOut: false };
      f.promise = resolve(key, full, Class, loader, o, f);
      // A load that fails after a caller gave up is still reported.
      track(flights, key, Class, f, (err) => {
        if (err !== undefined && f.timedOut) report(err, key);
      });
    }
    return answer(f, key, o.hardTimeout);
  }

  function stats() {
    const looked = counts.hits + counts.staleHits + counts.misses;
    return { ...counts, hitRate: looked === 0 ? 0 : (counts.hits + counts.staleHits) / looked };
  }

  function on(event, listener) {
    if (!EVENTS.includes(event)) throw invalid(`unknown event ${JSON.stringify(event)}: one of ${EVENTS.join(', ')}`);
    if (typeof listener !== 'function') throw invalid('a listener must be a function');
    listeners[event].push(listener);
    return cache;
  }

  function off(event, listener) {
    if (!EVENTS.includes(event)) throw invalid(`unknown event ${JSON.stringify(event)}`);
    const list = listeners[event];
    const i = list.lastIndexOf(listener);
    if (i >= 0) list.splice(i, 1);
    return cache;
  }

  const cache = Object.freeze({
    format, prefix, codec, get, set, mget, mset, del, getOrSet, stats, on, off,
    /* The Redis key of an entry: exactly prefix + key. */
    redisKey: (key) => checkKey(key)
  });
  return cache;
}

// As the other entry points (json.cjs): names a static reader of CommonJS
// sees, and default for TypeScript's CommonJS output without esModuleInterop.
module.exports = { createCache, LOCK_SUFFIX, DEFAULTS };
module.exports.default = module.exports;
