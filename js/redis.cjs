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
 *   - An entry that does not decode is never thrown at a caller: it is a
 *     miss, reported as ERR_CACHE_ENTRY, and deleted (only while it still
 *     holds those bytes) or overwritten by the reload.
 *   - Concurrent getOrSet calls of one key in this process share one read
 *     and one loader call; with `lock`, processes share one loader call
 *     through SET NX PX and a compare-and-delete release.
 */

const { randomUUID } = require('node:crypto');
const { createCodec } = require('./codec.cjs');
const { DarmokError } = require('./errors.cjs');
const { adapt } = require('./redis-clients.cjs');
const { pack, unpack } = require('./redis-entry.cjs');

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

/* What readEntry returns for an entry that is there but not usable. */
const BAD = Symbol('bad entry');
/* What a refresh resolves to when it gave no new value. */
const NO_VALUE = Symbol('no value');

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
  /* key -> the promise of a getOrSet in progress (its read and its load). */
  const flights = new Map();
  /* key -> the promise of a background refresh in progress. */
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

  /*
   * The bytes of one entry (raw, as read) -> { value, staleAt, raw }, or BAD
   * after reporting why and deleting it while it still holds raw.
   */
  function decodeRaw(key, raw, Class) {
    const e = unpack(raw);
    let why;
    let cause;
    if (typeof e === 'string') {
      why = e;
    } else if (e.format !== format) {
      why = `written in the ${e.format} format, this cache reads ${format}`;
    } else {
      try {
        return { value: codec.decodeEntity(e.doc, Class), staleAt: e.staleAt, raw };
      } catch (err) {
        why = `${err.code || err.name}: ${err.message}`;
        cause = err;
      }
    }
    report(badEntry(why, cause), key);
    const full = prefix + key;
    command('DEL (compare-and-delete)', () => redis.delIf(full, raw)).catch((err) => report(err, key));
    return BAD;
  }

  /* GET one entry -> entry | BAD | null (absent); rejects with ERR_REDIS. */
  async function readEntry(key, Class) {
    const full = prefix + key;
    const raw = await command('GET', () => redis.get(full, true));
    if (raw === null || raw === undefined) return null;
    return decodeRaw(key, raw, Class);
  }

  function ttlOf(value, o) {
    return value === null ? o.nullTtl : o.ttl;
  }

  /* SET key <envelope + document> PX (ttl + grace). */
  function write(key, value, ttl, grace) {
    const staleAt = Date.now() + Math.round(ttl * 1000);
    const entry = pack(format, staleAt, codec.encodeEntity(value));
    const px = Math.max(1, Math.round((ttl + grace) * 1000));
    return command('SET', () => redis.set(prefix + key, entry, px));
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

  async function get(key, Class) {
    checkKey(key);
    Class = checkClass(Class);
    let e;
    try {
      e = await readEntry(key, Class);
    } catch (err) {
      failed(err, key);
      e = null;
    }
    if (e !== null && e !== BAD && Date.now() < e.staleAt) {
      counts.hits++;
      emit('hit', key);
      return e.value;
    }
    counts.misses++;
    emit('miss', key);
    return null;
  }

  async function set(key, value, o) {
    checkKey(key);
    const opts = callOptions(o);
    if (value === undefined) return false;
    try {
      await write(key, value, ttlOf(value, opts), opts.grace);
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
    const now = Date.now();
    const out = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const raw = raws[i];
      const e = raw === null || raw === undefined ? null : decodeRaw(keys[i], raw, Class);
      if (e !== null && e !== BAD && now < e.staleAt) {
        counts.hits++;
        emit('hit', keys[i]);
        out[i] = e.value;
      } else {
        counts.misses++;
        emit('miss', keys[i]);
        out[i] = null;
      }
    }
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
   * Calls the loader (bounded by hardTimeout) and stores its value. A value
   * that arrives after the hard timeout is still stored. undefined is
   * returned, not stored.
   */
  async function loadAndStore(key, loader, o) {
    counts.loads++;
    emit('load', key);
    let loading;
    try {
      loading = Promise.resolve(loader());
    } catch (err) {
      loading = Promise.reject(err);
    }
    const store = async (value) => {
      if (value === undefined) return value;
      try {
        await write(key, value, ttlOf(value, o), o.grace);
      } catch (err) {
        if (err instanceof DarmokError && err.code === 'ERR_REDIS') failed(err, key);
        else report(err, key); // the loader's value did not encode: served, not cached
      }
      return value;
    };
    loading.catch(() => {
      counts.loadErrors++;
    });
    if (o.hardTimeout > 0) {
      let timer;
      const late = new Promise((resolve, reject) => {
        timer = setTimeout(() => reject(new DarmokError('ERR_LOAD_TIMEOUT',
          `the loader of ${JSON.stringify(key)} took longer than hardTimeout (${o.hardTimeout} ms)`)), o.hardTimeout);
      });
      let value;
      try {
        value = await Promise.race([loading, late]);
      } catch (err) {
        if (err instanceof DarmokError && err.code === 'ERR_LOAD_TIMEOUT') {
          // The loader goes on; what it brings is cached for the next caller.
          loading.then(store).catch((e) => report(e, key));
        }
        throw err;
      } finally {
        clearTimeout(timer);
      }
      return store(value);
    }
    return store(await loading);
  }

  /* Loads under the cross-process lock: one process loads, the others wait for its value. */
  async function loadLocked(key, Class, loader, o) {
    const lockKey = prefix + key + LOCK_SUFFIX;
    const token = randomUUID();
    const tryLock = async () => {
      try {
        return await command('SET NX', () => redis.setNx(lockKey, token, lockTtl));
      } catch (err) {
        failed(err, key);
        return null; // Redis unusable: load without the lock
      }
    };
    const fresh = async () => {
      try {
        const e = await readEntry(key, Class);
        return e !== null && e !== BAD && Date.now() < e.staleAt ? e : null;
      } catch (err) {
        failed(err, key);
        return null;
      }
    };
    const asHolder = async () => {
      try {
        // Another process may have stored the value and released the lock
        // between our miss and our lock.
        const e = await fresh();
        if (e !== null) return e.value;
        return await loadAndStore(key, loader, o);
      } finally {
        command('EVAL (release lock)', () => redis.delIf(lockKey, token)).catch((err) => report(err, key));
      }
    };
    let got = await tryLock();
    if (got === null) return loadAndStore(key, loader, o);
    if (got) return asHolder();
    counts.lockWaits++;
    emit('lockWait', key);
    const deadline = Date.now() + lockWait;
    while (Date.now() < deadline) {
      await sleep(lockPoll);
      const e = await fresh();
      if (e !== null) return e.value;
      // The holder is gone without storing a value (its loader failed or
      // gave undefined, or it died and the lock expired): take over.
      got = await tryLock();
      if (got === null) break;
      if (got) return asHolder();
    }
    return loadAndStore(key, loader, o);
  }

  function load(key, Class, loader, o, redisDown) {
    return o.lock && !redisDown ? loadLocked(key, Class, loader, o) : loadAndStore(key, loader, o);
  }

  /* One background refresh per key; resolves to the new value or NO_VALUE, never rejects. */
  function refresh(key, Class, loader, o) {
    let p = refreshes.get(key);
    if (p !== undefined) return p;
    p = (async () => {
      try {
        if (o.lock) {
          const lockKey = prefix + key + LOCK_SUFFIX;
          const token = randomUUID();
          let got;
          try {
            got = await command('SET NX', () => redis.setNx(lockKey, token, lockTtl));
          } catch (err) {
            report(err, key);
            got = true; // refresh without the lock
          }
          if (!got) return NO_VALUE; // another process refreshes it
          try {
            const v = await loadAndStore(key, loader, o);
            return v === undefined ? NO_VALUE : v;
          } finally {
            command('EVAL (release lock)', () => redis.delIf(lockKey, token)).catch((err) => report(err, key));
          }
        }
        const v = await loadAndStore(key, loader, o);
        return v === undefined ? NO_VALUE : v;
      } catch (err) {
        report(err, key);
        return NO_VALUE;
      } finally {
        refreshes.delete(key);
      }
    })();
    refreshes.set(key, p);
    return p;
  }

  async function resolve(key, Class, loader, o) {
    let e = null;
    let redisDown = false;
    try {
      e = await readEntry(key, Class);
    } catch (err) {
      failed(err, key);
      redisDown = true;
    }
    if (e !== null && e !== BAD) {
      const now = Date.now();
      if (now < e.staleAt) {
        counts.hits++;
        emit('hit', key);
        return e.value;
      }
      if (o.grace > 0 && now < e.staleAt + o.grace * 1000) {
        counts.staleHits++;
        emit('stale', key);
        const refreshing = refresh(key, Class, loader, o);
        if (o.softTimeout > 0) {
          let timer;
          const waited = await Promise.race([
            refreshing,
            new Promise((r) => { timer = setTimeout(r, o.softTimeout, NO_VALUE); })
          ]);
          clearTimeout(timer);
          if (waited !== NO_VALUE) return waited;
        }
        return e.value;
      }
    }
    counts.misses++;
    emit('miss', key);
    return load(key, Class, loader, o, redisDown);
  }

  /*
   * getOrSet(key, Class, loader, { ttl, nullTtl, grace, softTimeout,
   * hardTimeout, lock }) -> the cached value, or the loader's (cached).
   * Callers of one key while a call is in progress share it.
   */
  function getOrSet(key, Class, loader, o) {
    try {
      checkKey(key);
      Class = checkClass(Class);
      if (typeof loader !== 'function') throw invalid('getOrSet(key, Class, loader, options?): loader must be a function');
      o = callOptions(o);
    } catch (err) {
      return Promise.reject(err);
    }
    let p = flights.get(key);
    if (p !== undefined) return p;
    p = resolve(key, Class, loader, o);
    flights.set(key, p);
    const done = () => {
      if (flights.get(key) === p) flights.delete(key);
    };
    p.then(done, done);
    return p;
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

const api = { createCache, LOCK_SUFFIX, DEFAULTS };
// As the other entry points: TypeScript's CommonJS output without
// esModuleInterop reads require('darmok/redis').default.
api.default = api;
module.exports = api;
