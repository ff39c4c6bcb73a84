'use strict';
/*
 * cache/options.cjs - every option of darmok/redis, declared once: its
 * name, unit, default and check. createCache() reads the cache's options
 * through CACHE, set()/mset() theirs through SET and getOrSet() through
 * GET_OR_SET, all read by options.cjs readOptions, as the codec's are: a
 * name in none of them is ERR_INVALID_OPTION naming the closest.
 * docs/CACHE.md's table says the same in prose: change both.
 *
 * An entry: { unit, default, check(value, what) -> the value to use }.
 * `default` undefined means "derived" (nullTtl: ttl) or "absent"; a check
 * is only called on a value that is not undefined.
 */

const options = require('../codec/options.cjs');

/* options.cjs's invalid, for a message of createCache's. */
function invalid(message) {
  return options.invalid(`createCache: ${message}`);
}

const finite = (min, max = Infinity) => (v, what) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw invalid(`${what} must be a finite number >= ${min}${max === Infinity ? '' : ` and <= ${max}`}`);
  }
  return v;
};
const boolean = (v, what) => {
  if (typeof v !== 'boolean') throw invalid(`${what} must be true or false`);
  return v;
};
const fn = (v, what) => {
  if (typeof v !== 'function') throw invalid(`${what} must be a function`);
  return v;
};
const string = (v, what) => {
  if (typeof v !== 'string') throw invalid(`${what} must be a string`);
  return v;
};
/* A fraction of a ttl: 0 (off) up to, not including, 1. */
const fraction = (v, what) => {
  if (typeof v !== 'number' || !(v >= 0 && v < 1)) throw invalid(`${what} must be a number >= 0 and < 1 (a fraction of the ttl)`);
  return v;
};

/*
 * Options of BentoCache and cache-manager that users paste: refused with
 * darmok's way of saying it (docs/CACHE.md "Coming from BentoCache or
 * cache-manager"), rather than only the closest name.
 */
const FROM_OTHERS = {
  earlyExpiration: 'refreshAhead (a fraction of ttl)',
  refreshThreshold: 'refreshAhead (a fraction of ttl elapsed, not ms left)',
  serializeL1: 'l1: { shared: true }',
  suppressL2Errors: 'failOpen',
  lockTimeout: 'lock: { wait } (ms)',
  nonBlocking: 'nothing: every command is bounded by timeout'
};

/* Reads an options object of one of the tables: every name checked, defaults filled. */
function read(table, given, what) {
  if (given !== undefined && given !== null) {
    if (typeof given !== 'object' || Array.isArray(given)) throw invalid(`${what} must be an object`);
    for (const name in given) {
      if (!Object.prototype.hasOwnProperty.call(table, name) && Object.prototype.hasOwnProperty.call(FROM_OTHERS, name)) {
        throw options.invalid(`${what}: unknown option '${name}' (BentoCache's or cache-manager's): darmok/redis has ${FROM_OTHERS[name]}`);
      }
    }
  }
  return options.readOptions(table, given, what, what === 'createCache' ? undefined : (name) => `${what}: ${name}`);
}

const LOCK = {
  ttl: { unit: 'ms', default: 10000, check: finite(1) }, //  the lock lives this long unless released
  wait: { unit: 'ms', default: 5000, check: finite(0) }, // a waiter waits this long for the holder's value, then loads
  poll: { unit: 'ms', default: 20, check: finite(1) } //   between two looks at the value while waiting
};

const L1 = {
  maxEntries: { unit: 'entries', default: 1000, check: finite(1) },
  maxBytes: { unit: 'bytes', default: 16 * 1024 * 1024, check: finite(1) }, // of stored documents
  // Seconds an L1 entry is served while the bus is not known to be up.
  ttl: { unit: 's', default: 2, check: finite(0) },
  shared: { unit: 'boolean', default: false, check: boolean } // a hit returns one instance, for read-only use
};

/* `lock`: false, true, or { ttl, wait, poll } -> false or the lock's times. */
function lockOption(v, what) {
  if (v === false) return false;
  if (v === true) return read(LOCK, undefined, what);
  if (v === null || typeof v !== 'object') throw invalid(`${what} must be true, false or { ttl, wait, poll } (ms)`);
  return read(LOCK, v, what);
}

/* `l1`: false, true, or { maxEntries, maxBytes, ttl, shared } -> false or its settings. */
function l1Option(v, what) {
  if (v === false) return false;
  if (v === true) return read(L1, undefined, what);
  if (v === null || typeof v !== 'object') throw invalid(`${what} must be true, false or { maxEntries, maxBytes, ttl, shared }`);
  return read(L1, v, what);
}

function loggerOption(v, what) {
  if (v === null || typeof v !== 'object' || ['debug', 'warn', 'error'].some((m) => typeof v[m] !== 'function')) {
    throw invalid(`${what} must have pino-style debug, warn and error methods`);
  }
  return v;
}

/* A tag: a non-empty string without spaces or control characters (tags travel in the entry's header). */
function tagsOption(v, what) {
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list)) throw invalid(`${what} must be a tag or an array of tags`);
  for (const t of list) {
    // eslint-disable-next-line no-control-regex
    if (typeof t !== 'string' || t === '' || t.length > 200 || /[\s,\x00-\x1f\x7f]/.test(t)) {
      throw invalid(`${what}: a tag is a string of 1 to 200 characters without spaces, commas or control characters: ${JSON.stringify(t)}`);
    }
  }
  return [...new Set(list)];
}

/* The options of createCache(). */
const CACHE = {
  client: { unit: 'client', default: undefined, check: (v) => v }, // checked by clients.cjs
  format: { unit: "'json' | 'protobuf'", default: undefined, check: (v) => v }, // checked by createCodec
  codec: { unit: 'codec', default: undefined, check: (v) => v },
  registry: { unit: 'registry', default: undefined, check: (v) => v },
  prefix: { unit: 'string', default: '', check: string },
  ttl: { unit: 's', default: 60, check: finite(0.001) },
  nullTtl: { unit: 's', default: undefined, check: finite(0.001) }, // default: ttl
  grace: { unit: 's', default: 0, check: finite(0) },
  jitter: { unit: 'fraction of ttl', default: 0, check: fraction },
  refreshAhead: { unit: 'fraction of ttl', default: 0, check: fraction },
  timeout: { unit: 'ms', default: 250, check: finite(1) },
  softTimeout: { unit: 'ms', default: 0, check: finite(0) },
  hardTimeout: { unit: 'ms', default: 0, check: finite(0) },
  failOpen: { unit: 'boolean', default: true, check: boolean },
  lock: { unit: 'boolean | { ttl, wait, poll } (ms)', default: false, check: lockOption },
  l1: { unit: 'boolean | { maxEntries, maxBytes, ttl (s), shared }', default: false, check: l1Option },
  breaker: { unit: 'boolean | { threshold, window, cooldown } (ms)', default: undefined, check: (v) => v }, // checked by createBreaker
  onError: { unit: '(err, key) => void', default: undefined, check: fn },
  logger: { unit: 'pino-style { debug, warn, error }', default: undefined, check: loggerOption }
};

/* The options of set() and mset(). */
const SET = {
  ttl: CACHE.ttl,
  nullTtl: CACHE.nullTtl,
  grace: CACHE.grace,
  jitter: CACHE.jitter,
  tags: { unit: 'tag | tag[]', default: undefined, check: tagsOption }
};

/* The options of getOrSet(). */
const GET_OR_SET = {
  ...SET,
  refreshAhead: CACHE.refreshAhead,
  softTimeout: CACHE.softTimeout,
  hardTimeout: CACHE.hardTimeout,
  lock: { unit: 'boolean', default: undefined, check: boolean } // default: the cache's
};

/*
 * The cache's DEFAULTS as createCache exports them (docs/CACHE.md): the
 * table's defaults, the lock's under lockTtl, lockWait, lockPoll.
 */
const DEFAULTS = Object.freeze({
  prefix: CACHE.prefix.default,
  ttl: CACHE.ttl.default,
  grace: CACHE.grace.default,
  timeout: CACHE.timeout.default,
  softTimeout: CACHE.softTimeout.default,
  hardTimeout: CACHE.hardTimeout.default,
  lockTtl: LOCK.ttl.default,
  lockWait: LOCK.wait.default,
  lockPoll: LOCK.poll.default
});

module.exports = { CACHE, SET, GET_OR_SET, LOCK, L1, DEFAULTS, read, invalid, tagsOption };
