'use strict';
/*
 * cache/outcomes.cjs - what a read or a load of darmok/redis can come to:
 * the kinds of unusable entries and the other markers the cache's parts
 * pass between them, and the DarmokErrors the cache makes.
 */

const { DarmokError } = require('../core/errors.cjs');

/*
 * What reading an entry gives when it holds no value to use. A CORRUPT
 * entry (a darmok/1 header or document that does not parse) is deleted and
 * a reload overwrites it; an UNREADABLE one (no darmok envelope, a hash or
 * list, a newer envelope, class version or class, the other format) is
 * left as it is; a WRONG_CLASS one (an instance of another class than the
 * getOrSet's) is replaced by a compare-and-set.
 */
const CORRUPT = Symbol('corrupt entry');
const UNREADABLE = Symbol('unreadable entry');
const WRONG_CLASS = Symbol('entry of another class');
/* No entry (absent, stale past what the call takes, invalidated by a tag), or Redis failed. */
const NONE = Symbol('no entry');
/* What a refresh resolves to when it gave no new value. */
const NO_VALUE = Symbol('no value');
/* What withLock resolves to when another process holds the lock. */
const NOT_LOCKED = Symbol('not locked');
/* How a load stores its value: SET; not at all; or with { ifHolds: bytes }, a compare-and-set. */
const STORE = Symbol('store');
const NO_STORE = Symbol('do not store');

/* Decode errors that are the program's, not the entry's: thrown to the caller. */
const THROWN = new Set(['ERR_NOT_READY', 'ERR_INVALID_OPTION', 'ERR_REENTRANT', 'ERR_INTERNAL']);

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

/* The cause of the ERR_REDIS of a command that the open circuit breaker did not send. */
class BreakerOpenError extends Error {
  constructor() {
    super('the circuit breaker is open: Redis failed repeatedly, commands are not sent until a probe succeeds');
    this.name = 'BreakerOpenError';
  }
}

function breakerOpen() {
  return new BreakerOpenError();
}

/* Whether err is the ERR_REDIS of a command the open breaker refused (counted, not reported: its opening was). */
function isRefused(err) {
  return err instanceof DarmokError && err.cause instanceof BreakerOpenError;
}

/* What onError hears, once, when the breaker opens: its cause is the failure that opened it. */
function breakerOpened(last) {
  const err = new DarmokError('ERR_REDIS',
    `Redis failed repeatedly (the last time: ${last && last.message}), so the circuit breaker opened: until a probe ` +
    'is answered no command is sent, and each one refused is counted in stats().breakerRefusals, not reported');
  err.cause = last;
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

/*
 * What value is, for ERR_UNEXPECTED_CLASS's `actual`, named as the codec
 * names it: the class key of an instance of a registered class, else its
 * kind ('plain object', 'Array', 'number', a constructor's name).
 */
function kindOf(registry, value) {
  if (value === null) return 'null';
  if (typeof value !== 'object' && typeof value !== 'function') return typeof value;
  if (Array.isArray(value)) return 'Array';
  const proto = Object.getPrototypeOf(value);
  if (proto === null) return 'null-prototype object';
  if (proto === Object.prototype) return 'plain object';
  const plan = registry === undefined ? null : registry.planOf(proto);
  if (plan !== null) return plan.key;
  return (typeof value.constructor === 'function' && value.constructor.name) || 'object';
}

/*
 * ERR_UNEXPECTED_CLASS for value, which is not a Class (what: where it
 * came from). registry: the codec's Registry (registry.cjs), in which
 * Class's key is looked up; `expected` and `actual` are class keys or
 * kinds, as decodeEntity(blob, Class)'s error has them.
 */
function unexpectedClass(registry, Class, value, what) {
  const plan = registry === undefined ? null : registry.ensure(Class);
  const expected = plan === null ? Class.name || 'Class' : plan.key;
  const actual = kindOf(registry, value);
  const article = /^[aeiou]/i.test(actual) ? 'an' : 'a';
  const err = new DarmokError('ERR_UNEXPECTED_CLASS',
    `${what} is ${article} ${actual}, not an instance of "${expected}" (${Class.name || 'an anonymous class'}) nor null`);
  err.expected = expected;
  err.actual = actual;
  return err;
}

const isRedisFailure = (err) => err instanceof DarmokError && err.code === 'ERR_REDIS';

module.exports = {
  CORRUPT, UNREADABLE, WRONG_CLASS, NONE, NO_VALUE, NOT_LOCKED, STORE, NO_STORE, THROWN,
  redisError, timeoutCause, breakerOpen, isRefused, breakerOpened, loadTimeout, badEntry, unexpectedClass, isRedisFailure
};
