'use strict';
/*
 * breaker.cjs - the cache's circuit breaker: after `threshold` Redis
 * failures in a row, within `window` ms, the cache stops sending commands
 * for `cooldown` ms (each call is a miss at once, instead of paying the
 * timeout), then lets one command through as a probe: its answer closes
 * the breaker, its failure opens it for another cooldown.
 *
 *   const breaker = createBreaker(options.breaker, { onChange(state) {} });
 *   breaker.allow()    // may a command be sent now? false while open;
 *                      // true once per probe while half-open
 *   breaker.success()  // a command was answered
 *   breaker.failure()  // a command failed or timed out (a Redis failure only)
 *   breaker.state      // 'closed' | 'open' | 'half-open'
 *
 * options: undefined or true (the defaults), false (off: allow() is always
 * true and the state stays 'closed'), or { threshold, window, cooldown }.
 * The breaker keeps no timer: an open breaker turns half-open at the first
 * allow() after its cooldown, so `state` reads 'open' until then.
 */

const { readOptions, invalid: optionError } = require('../codec/options.cjs');

function invalid(message) {
  return optionError(`createCache: breaker: ${message}`);
}

/* A number >= 1: an integer (a count), or ms. */
const atLeastOne = (integer) => (v, name) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 1 || (integer && !Number.isInteger(v))) {
    throw invalid(`${name} must be a finite ${integer ? 'integer' : 'number'} >= 1${integer ? '' : ' (ms)'}`);
  }
  return v;
};

/* The breaker's options, read by options.cjs readOptions as every other table is. */
const BREAKER = {
  threshold: { check: atLeastOne(true), default: 5, doc: 'failures in a row that open the breaker' },
  window: { check: atLeastOne(false), default: 10000, doc: 'ms within which those failures must fall (older ones are forgotten)' },
  cooldown: { check: atLeastOne(false), default: 5000, doc: 'ms the breaker stays open before a probe' }
};
const BREAKER_DEFAULTS = readOptions(BREAKER, undefined, 'createCache: breaker');

/* A breaker that never opens: breaker: false. */
const OFF = Object.freeze({ allow: () => true, success() {}, failure() {}, state: 'closed' });

/*
 * createBreaker(options, { onChange?(state), now?() }) -> the breaker.
 * now (Date.now by default) is the clock, for tests; onChange is called
 * after each change of state, with the new one.
 */
function createBreaker(options, hooks = {}) {
  if (options === false) return OFF;
  if (options === undefined || options === true) options = {};
  else if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid('must be true, false or { threshold, window, cooldown }');
  }
  const { threshold, window, cooldown } = readOptions(BREAKER, options, 'createCache: breaker');
  const now = hooks.now || Date.now;
  const onChange = hooks.onChange || (() => {});

  let state = 'closed';
  let failures = 0; //     in a row, while closed
  let firstFailure = 0; // when the first of them came
  let openedAt = 0;
  let probeAt = -1; //     when the half-open probe was let through; -1: none out

  function become(next) {
    state = next;
    onChange(next);
  }

  function open() {
    openedAt = now();
    probeAt = -1;
    failures = 0;
    become('open');
  }

  return {
    get state() {
      return state;
    },
    allow() {
      if (state === 'closed') return true;
      const t = now();
      if (state === 'open') {
        if (t - openedAt < cooldown) return false;
        probeAt = t;
        become('half-open');
        return true;
      }
      // half-open: one probe at a time; a probe whose answer never came
      // (it cannot happen through the cache's command(), which always
      // settles) is replaced after a cooldown.
      if (probeAt >= 0 && t - probeAt < cooldown) return false;
      probeAt = t;
      return true;
    },
    success() {
      if (state === 'closed') {
        failures = 0;
      } else if (state === 'half-open') {
        failures = 0;
        probeAt = -1;
        become('closed');
      }
      // open: an answer to a command sent before the breaker opened changes nothing.
    },
    failure() {
      if (state === 'half-open') {
        open();
      } else if (state === 'closed') {
        const t = now();
        if (failures === 0 || t - firstFailure > window) {
          failures = 0;
          firstFailure = t;
        }
        if (++failures >= threshold) open();
      }
    }
  };
}

module.exports = { createBreaker, BREAKER_DEFAULTS };
