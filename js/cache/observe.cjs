'use strict';
/*
 * cache/observe.cjs - what a cache tells its user: counters (stats()),
 * events (on/off), onError, and a pino-style logger. Every state change
 * is an event and a counter; every problem not thrown at a caller is
 * report()ed, once, to onError, the 'error' event and the logger (warn
 * for Redis failures and unusable entries, error for the rest).
 */

const { DarmokError } = require('../core/errors.cjs');

const EVENTS = ['hit', 'miss', 'stale', 'load', 'lockWait', 'invalidate', 'breaker', 'error'];

function createObserver({ onError, logger }) {
  const counts = {
    hits: 0, l1Hits: 0, redisHits: 0, staleHits: 0, misses: 0, loads: 0, loadErrors: 0, lockWaits: 0,
    errors: 0, busMessages: 0, breakerRefusals: 0
  };
  const listeners = Object.create(null);
  for (const e of EVENTS) listeners[e] = [];

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

  function log(level, msg, err) {
    if (logger === undefined) return;
    try {
      if (err === undefined) logger[level](msg);
      else logger[level]({ err }, msg);
    } catch (e) {
      process.emitWarning(`darmok/redis: the logger threw: ${e && e.message}`);
    }
  }

  /* Every problem that is not the caller's to handle goes here. */
  function report(err, key) {
    counts.errors++;
    // Redis failures and unusable entries are the cache's weather; anything else (a loader's error) is an error.
    const level = err instanceof DarmokError && (err.code === 'ERR_REDIS' || err.code === 'ERR_CACHE_ENTRY') ? 'warn' : 'error';
    log(level, `darmok/redis ${key === undefined ? '' : JSON.stringify(key)}: ${err && (err.code || err.name)}: ${err && err.message}`, err);
    if (onError !== undefined) {
      try {
        onError(err, key);
      } catch (e) {
        process.emitWarning(`darmok/redis: onError threw: ${e && e.message}`);
      }
    }
    emit('error', err, key);
  }

  function on(event, listener) {
    if (!EVENTS.includes(event)) throw new DarmokError('ERR_INVALID_OPTION', `createCache: unknown event ${JSON.stringify(event)}: one of ${EVENTS.join(', ')}`);
    if (typeof listener !== 'function') throw new DarmokError('ERR_INVALID_OPTION', 'createCache: a listener must be a function');
    listeners[event].push(listener);
  }

  function off(event, listener) {
    if (!EVENTS.includes(event)) throw new DarmokError('ERR_INVALID_OPTION', `createCache: unknown event ${JSON.stringify(event)}`);
    const list = listeners[event];
    const i = list.lastIndexOf(listener);
    if (i >= 0) list.splice(i, 1);
  }

  /* The counters, with the hit rate and the tiers' states. */
  function stats(states) {
    const looked = counts.hits + counts.staleHits + counts.misses;
    return { ...counts, hitRate: looked === 0 ? 0 : (counts.hits + counts.staleHits) / looked, ...states };
  }

  return { counts, emit, log, report, on, off, stats };
}

module.exports = { createObserver, EVENTS };
