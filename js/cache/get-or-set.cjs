'use strict';
/*
 * cache/get-or-set.cjs - getOrSet: one read and one load per key and Class
 * in a process (flights), across processes with the lock, grace and
 * background refreshes, refreshAhead, hardTimeout's detaching, and the
 * loader's ctx. docs/CACHE.md "getOrSet: stampedes, grace, timeouts".
 *
 * createGetOrSet(env) is made once per cache, with the parts of cache.cjs
 * it reads and writes through (env, below); forView(prefix, checkKey, hit,
 * miss) gives one view's (namespace's) getOrSet. Flights are by Redis key,
 * so views share them.
 */

const { randomUUID } = require('node:crypto');
const { CACHE, GET_OR_SET, invalid, tagsOption } = require('./options.cjs');
const {
  UNREADABLE, WRONG_CLASS, NONE, NO_VALUE, NOT_LOCKED, STORE, NO_STORE, loadTimeout, isRedisFailure
} = require('./outcomes.cjs');

/* The suffix of a lock's Redis key: prefix + key + LOCK_SUFFIX. */
const LOCK_SUFFIX = ':darmok-lock';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/*
 * env: { counts, emit, report, failed, command, redis, lockTimes, l1,
 * l1Entry, l1Value, checkClass, callOptions, readFresh, readExamined,
 * write, ttlOf, beforeLock, wrongClass } (cache.cjs).
 */
function createGetOrSet(env) {
  const {
    counts, emit, report, failed, command, redis, lockTimes, l1, l1Entry, l1Value, checkClass, callOptions,
    readFresh, readExamined, write, ttlOf, beforeLock, wrongClass
  } = env;

  /* key (a Redis key) -> Class -> a getOrSet in progress, or a background refresh. */
  const flights = new Map();
  const refreshes = new Map();

  function joinable(map, full, Class) {
    const byClass = map.get(full);
    return byClass === undefined ? undefined : byClass.get(Class);
  }

  /* Puts f in map until f.promise settles or untrack() is called; then done(err). */
  function track(map, full, Class, f, done) {
    let byClass = map.get(full);
    if (byClass === undefined) map.set(full, byClass = new Map());
    byClass.set(Class, f);
    f.untrack = () => {
      if (byClass.get(Class) === f) byClass.delete(Class);
      if (byClass.size === 0 && map.get(full) === byClass) map.delete(full);
    };
    f.promise.then(() => {
      f.untrack();
      if (done !== undefined) done(undefined);
    }, (err) => {
      f.untrack();
      if (done !== undefined) done(err);
    });
  }

  /* The loader's ctx: what it may say about the value it returns. */
  function loaderContext(stale, o) {
    const said = { ttl: undefined, tags: o.tags, skip: false };
    const ctx = {
      stale,
      setTtl(seconds) {
        said.ttl = CACHE.ttl.check(seconds, 'ctx.setTtl(seconds)');
      },
      setTags(tags) {
        said.tags = tagsOption(tags, 'ctx.setTags(tags)');
      },
      skip() {
        said.skip = true;
      }
    };
    return { ctx, said };
  }

  return function forView(prefix, checkKey, hit, miss) {
    /*
     * Calls the loader with its ctx and stores its value (how: STORE,
     * NO_STORE or { ifHolds }). A value that is not a Class (nor null or
     * undefined) rejects with ERR_UNEXPECTED_CLASS, and one darmok cannot
     * encode with darmok's error: nothing is stored. undefined, and a
     * value the loader skip()ped, are returned, not stored.
     */
    async function loadAndStore(key, full, Class, loader, o, how, stale) {
      counts.loads++;
      emit('load', key);
      const { ctx, said } = loaderContext(stale, o);
      let value;
      try {
        value = await loader(ctx);
      } catch (err) {
        counts.loadErrors++;
        throw err;
      }
      if (Class !== undefined && value !== null && value !== undefined && !(value instanceof Class)) {
        throw wrongClass(Class, value, `the loader's value for ${JSON.stringify(key)}`);
      }
      if (value === undefined || how === NO_STORE || said.skip) return value;
      const ttl = said.ttl !== undefined ? said.ttl : ttlOf(value, o);
      try {
        await write(key, full, value, ttl, o, said.tags, how === STORE ? null : how.ifHolds);
      } catch (err) {
        if (!isRedisFailure(err)) throw err;
        failed(err, key);
      }
      return value;
    }

    /*
     * Runs fn(locked) holding the cross-process lock of full (SET NX PX,
     * then a compare-and-delete of our token once fn has settled, or once
     * f is detached) and resolves to what fn does; NOT_LOCKED when another
     * process holds the lock. When Redis fails to answer the SET NX,
     * fn(false) runs without the lock (or, without failOpen, the error is
     * thrown): no release is sent for a lock never taken.
     */
    async function withLock(key, full, fn, f) {
      beforeLock();
      const lockKey = full + LOCK_SUFFIX;
      const token = randomUUID();
      let got;
      try {
        got = await command('SET NX', () => redis.setNx(lockKey, token, lockTimes.ttl));
      } catch (err) {
        failed(err, key);
        return fn(false);
      }
      if (!got) return NOT_LOCKED;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        command('EVAL (release lock)', () => redis.delIf(lockKey, token)).catch((err) => report(err, key));
      };
      if (f !== undefined) {
        if (f.detached) release();
        else f.release = release;
      }
      try {
        return await fn(true);
      } finally {
        release();
      }
    }

    /* The lock holder's part: another process may have stored the value since our read, so look once more. */
    async function loadUnlessFresh(key, full, Class, loader, o, locked, how, stale) {
      if (locked) {
        const v = await readFresh(prefix, key, full, Class, true);
        if (v !== NONE) return v;
      }
      return loadAndStore(key, full, Class, loader, o, how, stale);
    }

    /* Loads under the cross-process lock: one process loads, the others wait for its value. */
    async function loadLocked(key, full, Class, loader, o, f) {
      const asHolder = (locked) => loadUnlessFresh(key, full, Class, loader, o, locked, STORE, undefined);
      let v = await withLock(key, full, asHolder, f);
      if (v !== NOT_LOCKED) return v;
      counts.lockWaits++;
      emit('lockWait', key);
      const deadline = Date.now() + lockTimes.wait;
      while (Date.now() < deadline && !f.detached) {
        await sleep(lockTimes.poll);
        v = await readFresh(prefix, key, full, Class, true);
        if (v !== NONE) return v;
        // The holder is gone without storing a value (its loader failed or
        // gave undefined, or it died and the lock expired): take over.
        v = await withLock(key, full, asHolder, f);
        if (v !== NOT_LOCKED) return v;
      }
      return loadAndStore(key, full, Class, loader, o, STORE, undefined);
    }

    /* One background refresh per key and Class; resolves to the new value or NO_VALUE, never rejects. */
    function refresh(key, full, Class, loader, o, stale) {
      let f = joinable(refreshes, full, Class);
      if (f !== undefined) return f.promise;
      const run = async () => {
        try {
          const v = o.lock
            ? await withLock(key, full, (locked) => loadUnlessFresh(key, full, Class, loader, o, locked, STORE, stale))
            : await loadAndStore(key, full, Class, loader, o, STORE, stale);
          return v === undefined || v === NOT_LOCKED ? NO_VALUE : v; // NOT_LOCKED: another process refreshes it
        } catch (err) {
          report(err, key);
          return NO_VALUE;
        }
      };
      f = { promise: run() };
      track(refreshes, full, Class, f);
      return f.promise;
    }

    /* A hit of getOrSet past refreshAhead of its ttl starts a background refresh. */
    function maybeRefreshAhead(key, full, Class, loader, o, e, value) {
      if (o.refreshAhead <= 0) return;
      const ttlMs = e.createdAt > 0 ? e.staleAt - e.createdAt : o.ttl * 1000;
      if (Date.now() >= e.staleAt - ttlMs * (1 - o.refreshAhead)) refresh(key, full, Class, loader, o, value);
    }

    /*
     * The read and, on a miss, the load of one flight f. f.loading is set,
     * and f.onLoad called, when the load starts: each caller's hardTimeout
     * counts from there.
     */
    async function resolve(key, full, Class, loader, o, f) {
      let r;
      let redisDown = false;
      try {
        r = await readExamined(prefix, key, full, Class, o.grace * 1000, true);
      } catch (err) {
        if (!isRedisFailure(err)) throw err;
        failed(err, key);
        redisDown = true;
        r = { kind: NONE };
      }
      if (r.kind === 'fresh') {
        hit(key, 'redis');
        maybeRefreshAhead(key, full, Class, loader, o, r.e, r.value);
        return r.value;
      }
      if (r.kind === 'stale') {
        counts.staleHits++;
        emit('stale', key);
        const refreshing = refresh(key, full, Class, loader, o, r.value);
        if (o.softTimeout > 0) {
          let timer;
          const waited = await Promise.race([
            refreshing,
            new Promise((done) => { timer = setTimeout(done, o.softTimeout, NO_VALUE); })
          ]);
          clearTimeout(timer);
          if (waited !== NO_VALUE) return waited;
        }
        return r.value;
      }
      miss(key);
      // An entry this process cannot read is left for the processes that
      // can: the loader's value is served, not written over it, and with
      // nothing to be written the lock has nothing to guard. One of
      // another class is replaced only while it is still there.
      const loading = r.kind === UNREADABLE ? loadAndStore(key, full, Class, loader, o, NO_STORE, undefined)
        : r.kind === WRONG_CLASS ? loadAndStore(key, full, Class, loader, o, { ifHolds: r.raw }, undefined)
          : o.lock && !redisDown ? loadLocked(key, full, Class, loader, o, f)
            : loadAndStore(key, full, Class, loader, o, STORE, undefined);
      f.loading = true;
      for (const started of f.onLoad) started();
      f.onLoad = null;
      return loading;
    }

    /* p, or ERR_LOAD_TIMEOUT once ms have passed; then f is detached, for the next call to start anew. */
    function bounded(p, key, ms, f) {
      let timer;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => {
          detach(f);
          reject(loadTimeout(key, ms));
        }, ms);
      });
      return Promise.race([p, late]).finally(() => clearTimeout(timer));
    }

    /*
     * A load its callers gave up on: later calls start a new one, and its
     * lock is released (another process may load). Its value is still
     * stored when it comes; its failure is reported.
     */
    function detach(f) {
      if (f.detached) return;
      f.detached = true;
      f.untrack();
      if (f.release !== undefined) f.release();
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
     * getOrSet(key, Class, loader(ctx), options) -> the cached value, or the
     * loader's (cached). Callers of one key and Class while a call is in
     * progress share it, until its loader has settled or a caller's
     * hardTimeout has detached it.
     */
    function getOrSet(key, Class, loader, o) {
      let full;
      try {
        full = checkKey(key);
        Class = checkClass(Class);
        if (typeof loader !== 'function') throw invalid('getOrSet(key, Class, loader, options?): loader must be a function');
        o = callOptions(GET_OR_SET, o, 'getOrSet');
      } catch (err) {
        return Promise.reject(err);
      }
      if (l1 !== null) {
        try {
          const e = l1Entry(full, Date.now());
          if (e !== undefined) {
            const v = l1Value(full, e, Class);
            if (v !== NONE) {
              hit(key, 'l1');
              maybeRefreshAhead(key, full, Class, loader, o, e, v);
              return Promise.resolve(v);
            }
          }
        } catch (err) {
          return Promise.reject(err);
        }
      }
      let f = joinable(flights, full, Class);
      if (f === undefined) {
        f = { promise: null, loading: false, onLoad: [], detached: false, release: undefined, untrack: undefined };
        f.promise = resolve(key, full, Class, loader, o, f);
        // A load that fails after its callers gave up is still reported.
        track(flights, full, Class, f, (err) => {
          if (err !== undefined && f.detached) report(err, key);
        });
      }
      return answer(f, key, o.hardTimeout);
    }

    return getOrSet;
  };
}

module.exports = { createGetOrSet, LOCK_SUFFIX };
