'use strict';
/*
 * registry.cjs - which classes darmok knows, by key and by prototype.
 *
 * A registered class has a *plan*: everything encode and decode need about
 * it, worked out once at registration (makePlan): its key and version, the
 * fields to write, the migration steps, the toData/fromData hooks. Encode
 * and decode only read plans; a class that uses none of the options has a
 * plan on which both take their fast path (plan.simple, plan.plainVersion).
 *
 * A Registry maps keys to plans. serializable() fills the default registry;
 * createRegistry() makes isolated ones for createCodec({ registry }), and
 * hands out only their `handle` (registryOf finds the Registry again).
 *
 * Classes are found by prototype, never by constructor.name: an instance
 * made without the Proxy (a subclass, Object.create(Foo.prototype)) encodes
 * with the key of its nearest registered prototype. The name is only the
 * default key, taken once, at registration.
 */

const { DarmokError, pathError, shorten } = require('../core/errors.cjs');
const { readOptions, checkNames, without, option, invalid, limit, any } = require('./options.cjs');
const { namingOf, transformOption, renameOption } = require('./naming.cjs');

const defineProperty = Object.defineProperty;
const hasOwn = Object.prototype.hasOwnProperty;

/*
 * Class names a minifier or a compiler makes (`n`, `t2`, `_a`, Babel's
 * `_class2`, `default`, `anonymous`): as a default key they change with
 * the build, and cached documents then decode as another class.
 */
const GENERATED_NAME = /^(?:[\w$]{1,2}|_?class(?:_?\d+)?|_?default\d*|_[A-Za-z]\d*|[a-z]\d+|anonymous)$/;

/* Classes that have warned DARMOK_MINIFIED_KEY (once per class, whatever the registry). */
const warnedMinified = new WeakSet();

/* Entries of a registry's cache of recent prototypes (a power of two). */
const RECENT = 4;

/* Proxy made by serializable() -> the class it wraps (for every registry). */
const proxies = new WeakMap();

/*
 * A registry as users hold it is a frozen { serializable } (index.d.ts
 * Registry): the Registry behind it, with its maps and plans, is found
 * here, so no caller can read or rewire another's classes.
 */
const handles = new WeakMap();

/* Checks of serializable()'s options (options.cjs), null meaning not given. */
function stringList(value, label) {
  if (value === null) return null;
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && s !== '')) {
    throw invalid(`${label} must be an array of non-empty strings`);
  }
  if (new Set(value).size !== value.length) throw invalid(`${label} lists a name twice`);
  return value.slice();
}

function optionalFunction(value, label) {
  if (value === null) return null;
  if (typeof value !== 'function') throw invalid(`${label} must be a function`);
  return value;
}

/*
 * The options of createRegistry() (and of createCodec(), which then makes
 * its own registry): defaults for the registry's classes that do not set
 * these options themselves (naming.cjs namingOf says how they combine).
 */
const REGISTRY = {
  transformKeys: option(transformOption, undefined,
    "the wire names of fields: 'camel', 'pascal', 'snake', 'kebab', (name, classKey) => wireName, or null (none)"),
  rename: option(renameOption, undefined, "{ field: 'wireName' }, over transformKeys")
};

/* The options of serializable(Class, options) (docs/VERSIONING.md, docs/SHAPING.md). */
const SERIALIZABLE = {
  key: option(any, undefined, "the class key (default: the class's name); checked by register"),
  nested: option(any, undefined, 'classes to register with this one; checked by register'),
  version: option(limit, 1, 'the version of the class its instances are written at'),
  migrate: option(any, null, '{ [fromVersion]: (data) => data }; checked against version by migrationSteps'),
  aliases: option(stringList, null, 'other class keys that decode to this class'),
  exclude: option(stringList, null, 'fields not written'),
  fields: option(stringList, null, 'the only fields written, in this order'),
  toData: option(optionalFunction, null, '(instance) => the data written for it'),
  fromData: option(optionalFunction, null, '(data) => the instance made of it'),
  transformKeys: REGISTRY.transformKeys,
  rename: REGISTRY.rename
};
const SERIALIZABLE_OPTIONS = new Set(Object.keys(SERIALIZABLE));
/* The options that change how a class is written or rebuilt. */
const PLAN_OPTIONS = Object.keys(without(SERIALIZABLE, ['key', 'nested']));

/*
 * The migration steps as an array indexed by the version they upgrade from
 * (steps[v] turns data of version v into data of version v + 1), and the
 * oldest version they reach back to. A gap, a step from a version that is
 * not older than the class, or a step that is not a function throws here,
 * at registration, never at decode time.
 */
function migrationSteps(migrate, version, what) {
  if (migrate === undefined || migrate === null) return { steps: null, oldest: version };
  if (typeof migrate !== 'object') throw invalid(`${what}: migrate must be an object { [fromVersion]: (data) => data }`);
  const froms = [];
  for (const name of Object.keys(migrate)) {
    const from = Number(name);
    if (!Number.isInteger(from) || from < 1 || String(from) !== name) {
      throw invalid(`${what}: migrate key "${name}" is not a version (a positive integer)`);
    }
    if (from >= version) {
      throw invalid(`${what}: migrate has a step from version ${from}, but the class is at version ${version}`);
    }
    if (typeof migrate[name] !== 'function') throw invalid(`${what}: migrate[${from}] must be a function`);
    froms.push(from);
  }
  if (froms.length === 0) return { steps: null, oldest: version };
  froms.sort((a, b) => a - b);
  const oldest = froms[0];
  const steps = [];
  for (let v = oldest; v < version; v++) {
    if (!hasOwn.call(migrate, String(v))) {
      throw invalid(`${what}: migrate has a gap: no step from version ${v} to ${v + 1} (it has steps from ${froms.join(', ')}; the class is at version ${version})`);
    }
    steps[v] = migrate[v];
  }
  return { steps, oldest };
}

/*
 * Built-ins whose instances keep their state in internal slots, which a
 * registered class's own-fields encoding would silently drop (a Map
 * subclass would come back as an empty object that is not a Map).
 */
const TYPED_ARRAY = Object.getPrototypeOf(Uint8Array);
const SLOT_BUILTINS = [Array, Map, Set, Date, RegExp, Error, ArrayBuffer, DataView,
  TYPED_ARRAY, Promise, WeakMap, WeakSet, Number, String, Boolean];

/*
 * The name of the slot built-in Class derives from, or null. Object itself
 * is refused too: its instances are the plain objects, written as such.
 */
function slotBase(Class) {
  if (Class === Object) return 'Object';
  for (let i = 0; i < SLOT_BUILTINS.length; i++) {
    const B = SLOT_BUILTINS[i];
    if (Class === B || Class.prototype instanceof B) return B === TYPED_ARRAY ? 'TypedArray' : B.name;
  }
  return null;
}

/*
 * Create the plan of Class under key with options (validated here), to
 * replace the class's plan old (or undefined). The plan belongs to its registry; callers read it and never change it, but
 * for its shapes (below), which the encoder and the decoder own.
 *   names         every class key and alias that decodes to Class: key,
 *                 aliases, and the names of the class's earlier plan
 *   simple        true when encode writes the instance's own enumerable
 *                 fields as they are (no fields, exclude or toData)
 *   plainVersion  the version whose bytes rebuild as Object.create(proto)
 *                 plus the fields, with no hook to run: the decode fast
 *                 path. -1 when fromData is set (every version runs it).
 *   encodeShape   the code that writes this class's instances, made from
 *   decodeShape   the keys of one encoded / decoded by the generic loop
 *                 (shapes.cjs): null until then, false when there is none.
 *   encodeSeen    instances through the generic loop so far (shapes.cjs
 *   decodeSeen    SHAPE_AFTER). These four are the only fields not fixed
 *                 at registration, with:
 *   naming        the wire names of the fields (naming.cjs), or null when
 *                 they are the fields' own; set by Registry#reshape from
 *   shaping       the class's own { transformKeys, rename }, its
 *                 superclasses' and the registry's defaults.
 */
function makePlan(Class, key, options, old) {
  const what = `serializable(${key})`;
  const o = readOptions(SERIALIZABLE, options, 'serializable()', (name) => `${what}: ${name}`);
  const version = o.version;
  const { steps, oldest } = migrationSteps(o.migrate, version, what);
  const aliases = o.aliases || [];
  if (aliases.includes(key)) throw invalid(`${what}: an alias repeats the key`);
  const { fields, exclude, toData, fromData } = o;
  // Every name that decodes to the class: its key, its aliases, and the
  // names of its earlier plan (repointed to this one by register()).
  const names = new Set(old === undefined ? [] : old.names);
  names.add(key);
  for (const alias of aliases) names.add(alias);
  return {
    key,
    names: [...names],
    Class,
    proto: Class.prototype,
    version,
    aliases,
    fields,
    excluded: exclude === null ? null : new Set(exclude),
    toData,
    fromData,
    steps,
    oldest,
    simple: fields === null && exclude === null && toData === null,
    plainVersion: fromData === null ? version : -1,
    encodeShape: null,
    decodeShape: null,
    encodeSeen: 0,
    decodeSeen: 0,
    shaping: { transformKeys: o.transformKeys, rename: o.rename },
    naming: null
  };
}

/* Whether shaping ({ transformKeys, rename } of a plan) changes any name. */
function shapes(shaping) {
  return shaping.transformKeys !== undefined || shaping.rename !== undefined;
}

/* Drop plan's decode shape: the next instances decode generically and make a new one. */
function forgetDecodeShape(plan) {
  if (plan.decodeShape === null) return;
  plan.decodeShape = null;
  plan.decodeSeen = 0;
}

function hasPlanOptions(options) {
  for (const name of PLAN_OPTIONS) {
    if (options[name] !== undefined) return true;
  }
  return false;
}

/* A class as a message names it. */
function className(plan) {
  return plan.Class.name ? `class ${plan.Class.name}` : 'an anonymous class';
}

/*
 * DARMOK_MINIFIED_KEY, once per class, when the key Class takes from its
 * name looks made by a minifier or a compiler.
 */
function warnIfGenerated(Class, key) {
  if (!GENERATED_NAME.test(key) || warnedMinified.has(Class)) return;
  warnedMinified.add(Class);
  warn(`darmok: class "${key}" takes its key from its name, which looks minified or generated: ` +
    'it may change with the next build, and cached documents would then decode as another class or not at all; ' +
    'give it a key that stays: serializable(Class, { key: \'myapp.Post\' })', 'DARMOK_MINIFIED_KEY');
}

/* A process warning; outside Node, a console warning. */
function warn(message, code) {
  if (typeof process === 'object' && process !== null && typeof process.emitWarning === 'function') {
    process.emitWarning(message, { code });
  } else if (typeof console === 'object') {
    console.warn(`${code}: ${message}`);
  }
}

/*
 * Registry: keys and prototypes to plans. Not shared: each has its own
 * maps, caches and defaults, so two registries may give one key to two
 * classes, or one field two names. naming: the registry's defaults, the
 * checked { transformKeys, rename } of REGISTRY.
 */
class Registry {
  constructor(naming = { transformKeys: undefined, rename: undefined }) {
    /* The defaults of REGISTRY for the classes that do not set them. */
    this.defaults = naming;
    /* key -> plan: what decode looks up. The latest registration of a key wins. */
    this.byKey = new Map();
    /* alias -> plan, looked up when no class has the key itself. */
    this.byAlias = new Map();
    /* prototype -> plan, for registered prototypes only. */
    this.byProto = new Map();
    /* any prototype -> plan of its nearest registered prototype, or null
       (protoCache), with the last RECENT of them in front of it (a WeakMap
       lookup costs; graphs alternate a few classes: Post, User, Comment).
       Set by forgetProtos(). */
    this.forgetProtos();
    /* Names that have warned DARMOK_KEY_REPLACED or DARMOK_DUPLICATE_KEY (once per name). */
    this.warned = new Set();
    // The three forms of serializable(), bound to this registry.
    this.serializable = makeSerializable(this);
    /* What createRegistry() and codec.registry hand out (registryOf). */
    this.handle = Object.freeze({ serializable: this.serializable });
    handles.set(this.handle, this);
  }

  /*
   * Register Class (a constructor, or a Proxy that serializable() returned)
   * with options { key, nested, version, migrate, aliases, exclude, fields,
   * toData, fromData }; returns its plan. Without a key a new class takes
   * its name and a registered class keeps its key. Registering again with
   * the same key and no other option is a no-op; with another key it moves
   * the class there (the old key keeps decoding to it). A key that names a
   * different class is given to this one, with a warning (once per key).
   */
  register(Class, options) {
    Class = unwrap(Class);
    if (typeof Class !== 'function' || Class.prototype === null || typeof Class.prototype !== 'object') {
      throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable() takes a class');
    }
    const base = slotBase(Class);
    if (base === 'Object') {
      throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable(Object): plain objects are written as plain objects; register a class');
    }
    if (base !== null) {
      throw new DarmokError('ERR_UNSUPPORTED_TYPE',
        `serializable(${Class.name || 'class'}): a subclass of ${base} keeps its state in ${base}'s internal slots, ` +
        `which darmok writes only for ${base} itself; register a class that holds a ${base} in a field instead`);
    }
    if (options === undefined || options === null) options = {};
    checkNames(options, SERIALIZABLE_OPTIONS, 'serializable()');
    const old = this.byProto.get(Class.prototype);
    let key = options.key;
    if (key === undefined) key = old === undefined ? Class.name : old.key;
    if (typeof key !== 'string' || key === '') {
      throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'a class key must be a non-empty string (an anonymous class needs an explicit key)');
    }
    if (options.key === undefined && old === undefined) warnIfGenerated(Class, key);
    let plan = old;
    if (old === undefined || old.key !== key || hasPlanOptions(options)) {
      plan = makePlan(Class, key, options, old);
      // Names that decoded to the class's earlier plan (its old key, old
      // aliases) decode to this one: with its version and migrate steps,
      // not the old plan's, which would build version-1 bytes unmigrated.
      if (old !== undefined) this.repoint(old, plan);
      this.claim(this.byKey, key, plan);
      for (const alias of plan.aliases) this.claim(this.byAlias, alias, plan);
      this.warnShared(plan);
      this.byProto.set(plan.proto, plan);
      // A class's names depend on its superclasses' options: its
      // subclasses' change only when its own or its old plan's do.
      const plans = [plan];
      if (shapes(plan.shaping) || (old !== undefined && shapes(old.shaping))) {
        for (const p of this.byProto.values()) if (p !== plan && plan.proto.isPrototypeOf(p.proto)) plans.push(p);
      }
      this.reshape(this.namings(this.defaults, plans));
      try {
        defineProperty(Class, '_serializationKey', {
          value: key, writable: true, enumerable: false, configurable: true
        });
      } catch {
        // A frozen class still works; it just lacks the informative static.
      }
      this.forgetProtos();
    }
    const nested = options.nested;
    if (nested !== undefined && nested !== null) {
      if (typeof nested[Symbol.iterator] !== 'function') throw invalid(`serializable(${key}): nested must be an array of classes`);
      // tanagra-core 0.x's static: nested key -> the nested class as given.
      const fieldTypes = new Map();
      for (const N of nested) fieldTypes.set(this.ensure(N).key, N);
      try {
        defineProperty(Class, '_fieldTypes', {
          value: fieldTypes, writable: true, enumerable: false, configurable: true
        });
      } catch {
        // A frozen class: as for _serializationKey.
      }
    }
    return plan;
  }

  /*
   * The Naming each of plans (default: every plan) would have under the
   * registry defaults d, as [plan, naming] pairs (naming.cjs namingOf);
   * throws ERR_INVALID_OPTION when one cannot be made (two fields given
   * one wire name), before anything changed.
   */
  namings(d, plans = this.byProto.values()) {
    const out = [];
    for (const plan of plans) {
      const inherited = [];
      for (let p = Object.getPrototypeOf(plan.proto); p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        const above = this.byProto.get(p);
        if (above !== undefined) inherited.push(above.shaping);
      }
      out.push([plan, namingOf(plan.key, plan.shaping, inherited, d, plan.fields, plan.naming)]);
    }
    return out;
  }

  /*
   * Make d (REGISTRY's options, checked) the registry's defaults: every
   * class's names first, so that one that fails (two fields given one
   * wire name) leaves all as they were.
   */
  setDefaults(d) {
    const pairs = this.namings(d);
    this.defaults = d;
    this.reshape(pairs);
  }

  /*
   * Give each plan its naming (from namings()); a plan whose names change
   * drops its shapes, whose code has the old names in it.
   */
  reshape(pairs) {
    for (const [plan, naming] of pairs) {
      if (plan.naming === naming) continue;
      plan.naming = naming;
      plan.encodeShape = null;
      plan.decodeShape = null;
      plan.encodeSeen = 0;
      plan.decodeSeen = 0;
      // A decode shape maps wire names to fields as the table had them
      // when it was made: a field learned later (transformKeys, at its
      // first encode) may claim one of its wire names.
      if (naming !== null) naming.onLearn = () => forgetDecodeShape(plan);
    }
  }

  /* Every name that maps to plan old maps to plan instead. */
  repoint(old, plan) {
    for (const map of [this.byKey, this.byAlias]) {
      for (const [name, p] of map) if (p === old) map.set(name, plan);
    }
  }

  /* map.set(name, plan), warning when name named another class. */
  claim(map, name, plan) {
    const taken = map.get(name);
    if (taken !== undefined && taken.Class !== plan.Class && !this.warned.has(name)) {
      this.warned.add(name);
      warn(`darmok: class key "${name}" is now given to ${className(plan)} (was ${className(taken)}): ` +
        `decodeEntity(blob) reads it as the new class, decodeEntity(blob, Class) as Class`, 'DARMOK_KEY_REPLACED');
    }
    map.set(name, plan);
  }

  /*
   * DARMOK_DUPLICATE_KEY for each name of plan that another class holds in
   * the other role: one's key and the other's alias (decodeEntity without
   * a Class reads the name as the class whose key it is).
   */
  warnShared(plan) {
    for (const name of plan.names) {
      const asKey = this.byKey.get(name);
      const asAlias = this.byAlias.get(name);
      if (asKey === undefined || asAlias === undefined || asKey.Class === asAlias.Class || this.warned.has(name)) continue;
      this.warned.add(name);
      warn(`darmok: "${name}" is the class key of ${className(asKey)} and an alias of ${className(asAlias)}: ` +
        `decodeEntity(blob) reads it as ${className(asKey)}, decodeEntity(blob, Class) as Class`, 'DARMOK_DUPLICATE_KEY');
    }
  }

  /*
   * The names that decodeEntity(blob, plan's class) must read as plan but
   * that the registry gives to another class (a key or alias held by two
   * classes), as a Map name -> plan, or null when there are none (usually).
   * Worked out once per plan until registrations change.
   */
  scopeOf(plan) {
    let scope = this.scopes.get(plan);
    if (scope === undefined) {
      scope = null;
      for (const name of plan.names) {
        if (this.planByKey(name) === plan) continue;
        if (scope === null) scope = new Map();
        scope.set(name, plan);
      }
      this.scopes.set(plan, scope);
    }
    return scope;
  }

  /* Register Class under its default key unless it is registered already. */
  ensure(Class) {
    const C = unwrap(Class);
    if (typeof C === 'function' && C.prototype && this.byProto.has(C.prototype)) return this.byProto.get(C.prototype);
    return this.register(C, undefined);
  }

  /*
   * The plan for an object whose prototype is proto (not Object.prototype,
   * not null), or null when no prototype on its chain is registered.
   */
  planOf(proto) {
    const protos = this.recentProtos;
    for (let i = 0; i < RECENT; i++) {
      if (protos[i] === proto) return this.recentPlans[i];
    }
    let plan = this.protoCache.get(proto);
    if (plan === undefined) {
      plan = null;
      for (let p = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        const found = this.byProto.get(p);
        if (found !== undefined) { plan = found; break; }
      }
      this.protoCache.set(proto, plan);
    }
    const at = this.recentNext;
    protos[at] = proto;
    this.recentPlans[at] = plan;
    this.recentNext = (at + 1) & (RECENT - 1);
    return plan;
  }

  /*
   * The plan a class key (or an alias) decodes to, or null; through scope
   * first when it is given (a Map from scopeOf(), or null).
   */
  planByKey(key, scope) {
    if (scope !== undefined && scope !== null) {
      const own = scope.get(key);
      if (own !== undefined) return own;
    }
    let plan = this.byKey.get(key);
    if (plan === undefined) plan = this.byAlias.get(key);
    return plan === undefined ? null : plan;
  }

  /* Forget every prototype's plan found so far (registrations changed). */
  forgetProtos() {
    /* plan -> scopeOf(plan), which registrations change too. */
    this.scopes = new Map();
    /* Counts registration changes: what a caller worked out from plans stays good while it stays. */
    this.generation = (this.generation | 0) + 1;
    this.protoCache = new WeakMap();
    this.recentProtos = new Array(RECENT).fill(null);
    this.recentPlans = new Array(RECENT).fill(null);
    this.recentNext = 0;
  }
}

/* The Registry behind handle (createRegistry()'s, codec.registry), or undefined. */
function registryOf(handle) {
  return handles.get(handle);
}

function unwrap(Class) {
  const target = proxies.get(Class);
  return target === undefined ? Class : target;
}

/*
 * The tanagra 0.x constructor Proxy: instances made through it carry their
 * key as an own, non-enumerable `_serializationKey` (invisible to
 * Object.keys, JSON.stringify and deepStrictEqual). A subclass constructed
 * through it gets the key of its own nearest registered prototype.
 */
function makeProxy(Class, plan, registry) {
  const proxy = new Proxy(Class, {
    construct(target, args, newTarget) {
      // `new Proxy()` constructs the class itself: with the Proxy as
      // new.target, V8 gives every instance a hidden class of its own
      // (it caches the initial map on real functions only), and all code
      // that touches them goes megamorphic. A subclass's new.target is
      // that subclass, a real function, and stays.
      const obj = Reflect.construct(target, args, newTarget === proxy ? target : newTarget);
      const own = newTarget === proxy ? plan : registry.planOf(Object.getPrototypeOf(obj));
      defineProperty(obj, '_serializationKey', {
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
 * serializable - register a class in `registry`. Three forms:
 *   serializable(Class, nestedTypes?, key?)   tanagra 0.x; returns a Proxy
 *       (also tanagra-core 0.3's (Class, nestedTypes, previousVersions, key),
 *       previousVersions an array of arrays of classes, nested as well)
 *   serializable(Class, options)              options; returns a Proxy
 *   serializable(key?) / serializable(options) decorator factory (tanagra
 *       1.x): works as serializable()(Class), as a legacy/TypeScript
 *       @decorator and as a TC39 decorator (value, context) with
 *       context.kind 'class'.
 * options: { key, nested, version, migrate, aliases, exclude, fields,
 * toData, fromData } (docs/VERSIONING.md).
 */
function makeSerializable(registry) {
  return function serializable(Class, second, third) {
    if (typeof Class === 'function') {
      let options;
      if (second !== undefined && second !== null && !Array.isArray(second)) {
        if (typeof second !== 'object') {
          throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable(Class, nested) takes an array of classes or an options object');
        }
        options = second;
      } else if (Array.isArray(third)) {
        const previous = [];
        for (const list of third) {
          if (!Array.isArray(list)) throw invalid('serializable(Class, nested, previousVersions, key): previousVersions must be an array of arrays of classes');
          previous.push(...list);
        }
        options = { key: arguments[3], nested: (second || []).concat(previous) };
      } else {
        // tanagra-core 0.x sets _fieldTypes (below) even with no nested types.
        options = { key: third, nested: second === undefined || second === null ? [] : second };
      }
      const target = unwrap(Class);
      const plan = registry.register(target, options);
      return makeProxy(target, plan, registry);
    }
    let options = Class;
    if (typeof options === 'string') options = { key: options };
    else if (options === undefined || options === null) options = {};
    else if (typeof options !== 'object') {
      throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'serializable() takes a class, a key or an options object');
    }
    checkNames(options, SERIALIZABLE_OPTIONS, 'serializable()');
    return function decorate(value, context) {
      if (context !== undefined && context !== null && typeof context === 'object' && 'kind' in context) {
        if (context.kind !== 'class') {
          throw new DarmokError('ERR_UNSUPPORTED_TYPE', `@serializable decorates classes, not a ${context.kind}`);
        }
        const name = typeof context.name === 'string' ? context.name : undefined;
        const key = options.key === undefined && !value.name ? name : options.key;
        registry.register(value, { ...options, key });
        return undefined;
      }
      registry.register(value, options);
      return value;
    };
  };
}

/*
 * Bring `data` - the plain object of the fields of an instance written at
 * `version` - to plan.version by running the migration steps in order
 * (steps[v] takes version v to v + 1), and return the data to build from.
 * A newer version is returned as it is when acceptNewer (unknown fields
 * become own properties), else throws ERR_VERSION, as does a version older
 * than the oldest step. Errors carry a path (pathError) for the caller to
 * finish; errors thrown by a step pass through untouched.
 */
function upgrade(plan, data, version, acceptNewer) {
  if (version === plan.version) return data;
  if (version > plan.version) {
    if (acceptNewer) return data;
    throw newerVersionError(plan, version);
  }
  if (version < plan.oldest) {
    throw versionError(plan, version, plan.steps === null
      ? `class "${plan.key}" is at version ${plan.version} and has no migrate step from version ${version}`
      : `class "${plan.key}" migrates from version ${plan.oldest} on, not from version ${version}`);
  }
  const steps = plan.steps;
  for (let v = version; v < plan.version; v++) {
    const step = steps[v]; // called as a plain function: `this` is undefined
    data = step(data);
    if (data === null || typeof data !== 'object') {
      throw versionError(plan, version, `migrate[${v}] of class "${plan.key}" returned ${data === null ? 'null' : typeof data}, not an object of fields`);
    }
  }
  return data;
}

/* ERR_VERSION for bytes of a newer version than the registered class. */
function newerVersionError(plan, version) {
  return versionError(plan, version,
    `class "${plan.key}" was written at version ${version}, newer than the registered version ${plan.version} ` +
    "(deploy the new class, or decode with { newerVersion: 'accept' })");
}

function versionError(plan, version, message) {
  const err = pathError('ERR_VERSION', message);
  err.classKey = plan.key;
  err.version = version;
  err.currentVersion = plan.version;
  return err;
}

/* Set own data property key of obj to x without running a setter. */
function setOwn(obj, key, x) {
  if (key in obj) {
    defineProperty(obj, key, { value: x, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = x;
  }
}

/*
 * The instance for (already upgraded) data: plan.fromData(data) when the
 * class has it, else `target` - an Object.create(plan.proto) the caller
 * made - with the own enumerable fields of data copied on.
 */
function build(plan, data, target) {
  const fromData = plan.fromData;
  if (fromData !== null) {
    const obj = fromData(data);
    if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function')) {
      throw pathError('ERR_UNSUPPORTED_TYPE', `fromData of class "${plan.key}" returned ${obj === null ? 'null' : typeof obj}, not an object`);
    }
    return obj;
  }
  const keys = Object.keys(data);
  for (let i = 0; i < keys.length; i++) setOwn(target, keys[i], data[keys[i]]);
  return target;
}

/*
 * null when an instance under class key `key`, of plan (null: an unknown
 * key, decoded as a plain object), is one decodeEntity(blob, Class) may
 * return: plan is expected, Class's plan, or a subclass's. Else the
 * ERR_UNEXPECTED_CLASS to throw, with the two keys as expected and actual.
 */
function unexpectedClass(expected, key, plan) {
  if (plan === expected || (plan !== null && expected.proto.isPrototypeOf(plan.proto))) return null;
  const what = plan === null ? 'an unregistered class' : className(plan);
  const err = new DarmokError('ERR_UNEXPECTED_CLASS',
    `decodeEntity(blob, ${expected.Class.name || 'Class'}): the document holds an instance of "${shorten(key, 60)}" (${what}), ` +
    `not of "${expected.key}" (${className(expected)}) or a subclass; a cache key that names the wrong entry?`);
  err.expected = expected.key;
  err.actual = key;
  return err;
}

/*
 * createRegistry({ transformKeys?, rename? }): a new, empty registry for
 * createCodec({ registry }), as users hold it (registryOf), with these
 * defaults for its classes.
 */
function createRegistry(options) {
  const o = readOptions(REGISTRY, options, 'createRegistry', (name) => `createRegistry(): ${name}`);
  return new Registry({ transformKeys: o.transformKeys, rename: o.rename }).handle;
}

/*
 * configure({ transformKeys?, rename? }), deprecated: changes the defaults
 * of the default registry's classes (createRegistry's options), those
 * already registered included; a call replaces only the options it names,
 * null clears one. Other registries keep their own: give them their
 * defaults in createRegistry() or createCodec().
 */
function configure(options) {
  if (options === null || typeof options !== 'object') throw invalid('configure() takes an options object');
  const o = readOptions(REGISTRY, options, 'configure', (name) => `configure(): ${name}`);
  const next = { ...defaultRegistry.defaults };
  for (const name of Object.keys(REGISTRY)) if (options[name] !== undefined) next[name] = o[name];
  defaultRegistry.setDefaults(next);
}

/* The registry serializable() fills. */
const defaultRegistry = new Registry();

module.exports = {
  Registry,
  createRegistry,
  registryOf,
  defaultRegistry,
  serializable: defaultRegistry.serializable,
  unwrap,
  upgrade,
  newerVersionError,
  build,
  setOwn,
  unexpectedClass,
  configure,
  REGISTRY
};
