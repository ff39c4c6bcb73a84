'use strict';
/*
 * registry.cjs - which classes darmok knows, by key and by prototype.
 *
 * A registered class has a *plan*: everything encode and decode need about
 * it, computed once at registration. A later issue adds version, migrate,
 * aliases, exclude, fields, toData and fromData: they are more plan fields.
 *
 * Classes are found by prototype, never by constructor.name: an instance
 * made without the Proxy (a subclass, Object.create(Foo.prototype)) encodes
 * with the key of its nearest registered prototype. The name is only the
 * default key, taken once, at registration.
 */

const { DarmokError } = require('./errors.cjs');

/* key -> plan: what decode looks up. The latest registration of a key wins. */
const byKey = new Map();
/* prototype -> plan, for registered prototypes only. */
const byProto = new Map();
/* any prototype -> plan of its nearest registered prototype, or null. */
let protoCache = new WeakMap();
/* Proxy made by serializable() -> the class it wraps. */
const proxies = new WeakMap();
/* One-entry cache in front of protoCache: most graphs repeat one class. */
let lastProto = null;
let lastPlan = null;

/*
 * Create the plan of Class under key. The plan belongs to the registry;
 * callers read it and never change it.
 */
function makePlan(Class, key) {
  return {
    key,
    Class,
    proto: Class.prototype,
    version: 1
  };
}

/*
 * Register Class (a constructor, or a Proxy that serializable() returned)
 * under key together with its nested types. Without a key a new class
 * takes its name and a registered class keeps its key; registering again
 * with the same key is a no-op, with another key moves the class there.
 */
function register(Class, key, nested) {
  Class = unwrap(Class);
  if (typeof Class !== 'function' || Class.prototype === null || typeof Class.prototype !== 'object') {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable() takes a class');
  }
  const old = byProto.get(Class.prototype);
  if (key === undefined) key = old === undefined ? Class.name : old.key;
  if (typeof key !== 'string' || key === '') {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'a class key must be a non-empty string (an anonymous class needs an explicit key)');
  }
  let plan = old;
  if (old === undefined || old.key !== key) {
    plan = makePlan(Class, key);
    byProto.set(plan.proto, plan);
    byKey.set(key, plan);
    try {
      Object.defineProperty(Class, '_serializationKey', {
        value: key, writable: true, enumerable: false, configurable: true
      });
    } catch {
      // A frozen class still works; it just lacks the informative static.
    }
    protoCache = new WeakMap();
    lastProto = null;
    lastPlan = null;
  }
  if (nested !== undefined && nested !== null) {
    for (const N of nested) ensure(N);
  }
  return plan;
}

/* Register Class under its default key unless it is registered already. */
function ensure(Class) {
  const C = unwrap(Class);
  if (typeof C === 'function' && C.prototype && byProto.has(C.prototype)) return byProto.get(C.prototype);
  return register(C, undefined, undefined);
}

function unwrap(Class) {
  const target = proxies.get(Class);
  return target === undefined ? Class : target;
}

/*
 * The plan for an object whose prototype is proto (not Object.prototype, not
 * null), or null when no prototype on its chain is registered.
 */
function planOf(proto) {
  if (proto === lastProto) return lastPlan;
  let plan = protoCache.get(proto);
  if (plan === undefined) {
    plan = null;
    for (let p = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      const found = byProto.get(p);
      if (found !== undefined) { plan = found; break; }
    }
    protoCache.set(proto, plan);
  }
  lastProto = proto;
  lastPlan = plan;
  return plan;
}

function planByKey(key) {
  const plan = byKey.get(key);
  return plan === undefined ? null : plan;
}

/*
 * The tanagra 0.x constructor Proxy: instances made through it carry their
 * key as an own, non-enumerable `_serializationKey` (invisible to
 * Object.keys, JSON.stringify and deepStrictEqual). A subclass constructed
 * through it gets the key of its own nearest registered prototype.
 */
function makeProxy(Class, plan) {
  const proxy = new Proxy(Class, {
    construct(target, args, newTarget) {
      const obj = Reflect.construct(target, args, newTarget);
      const own = newTarget === proxy ? plan : planOf(Object.getPrototypeOf(obj));
      Object.defineProperty(obj, '_serializationKey', {
        value: own === null ? plan.key : own.key,
        writable: true, enumerable: false, configurable: true
      });
      return obj;
    }
  });
  proxies.set(proxy, Class);
  return proxy;
}

/*
 * serializable - register a class. Three forms:
 *   serializable(Class, nestedTypes?, key?)   tanagra 0.x; returns a Proxy
 *   serializable(Class, { key, nested })      options; returns a Proxy
 *   serializable(key?) / serializable({...})  decorator factory (tanagra 1.x):
 *       works as serializable()(Class), as a legacy/TypeScript @decorator
 *       and as a TC39 decorator (value, context) with context.kind 'class'.
 */
function serializable(Class, second, third) {
  if (typeof Class === 'function') {
    let key = third;
    let nested = second;
    if (second !== undefined && second !== null && !Array.isArray(second)) {
      if (typeof second !== 'object') {
        throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable(Class, nested) takes an array of classes or an options object');
      }
      key = second.key;
      nested = second.nested;
    }
    const target = unwrap(Class);
    const plan = register(target, key, nested);
    return makeProxy(target, plan);
  }
  let options = Class;
  if (typeof options === 'string') options = { key: options };
  else if (options === undefined || options === null) options = {};
  else if (typeof options !== 'object') {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable() takes a class, a key or an options object');
  }
  const { key, nested } = options;
  return function decorate(value, context) {
    if (context !== undefined && context !== null && typeof context === 'object' && 'kind' in context) {
      if (context.kind !== 'class') {
        throw new DarmokError('ERR_UNSUPPORTED_TYPE', `@serializable decorates classes, not a ${context.kind}`);
      }
      const name = typeof context.name === 'string' ? context.name : undefined;
      register(value, key === undefined && !value.name ? name : key, nested);
      return undefined;
    }
    register(value, key, nested);
    return value;
  };
}

/* For tests: forget every registration. */
function clear() {
  byKey.clear();
  byProto.clear();
  protoCache = new WeakMap();
  lastProto = null;
  lastPlan = null;
}

module.exports = { serializable, register, ensure, planOf, planByKey, unwrap, clear };
