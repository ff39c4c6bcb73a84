'use strict';
/*
 * naming.cjs - the names a class's fields have in the bytes: the
 * transformKeys and rename options of serializable(), and their defaults
 * for a registry's classes (createRegistry()). docs/SHAPING.md.
 *
 * A class whose names are its fields' own has no Naming (plan.naming is
 * null) and takes exactly the code paths of a class without these
 * options. Otherwise its plan holds one Naming: two tables, field -> wire
 * name and wire name -> field, filled once per field name (rename entries
 * at once; transformKeys when a name is first met, by the encoder or
 * through the class's `fields`) and then only read: the encode and decode
 * shapes (shapes.cjs) put the wire names into their code as constants, so
 * a shaped instance costs what an unshaped one does. A decode shape made
 * before a field was learned is dropped when it is (onLearn). Decoding maps a wire
 * name back through the table, never by inflecting it again: inflections
 * lose case (`userID` and `userId` are both `user_id`), tables do not.
 */

const { invalid } = require('./options.cjs');

/*
 * A name as { head, words, tail }: head and tail are its leading runs of
 * `_` and `$` and its trailing run of `_` (kept as they are: `_id` stays
 * `_id`), words the rest split at `_`, `-`, spaces, a lower-case letter or
 * digit before an upper-case one, and the last capital of a run of them
 * before a lower-case letter (`HTMLParser`: HTML, Parser).
 */
function split(name) {
  const head = /^[_$]*/.exec(name)[0];
  const tail = /_*$/.exec(name.slice(head.length))[0];
  const body = name.slice(head.length, name.length - tail.length);
  const words = body
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
    .split(/[_\-\s]+/)
    .filter((w) => w !== '');
  return { head, words, tail };
}

function capital(word) {
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
}

/* The named transforms. Each maps a name to its wire name. */
const TRANSFORMS = {
  camel(name) {
    const { head, words, tail } = split(name);
    return head + words.map((w, i) => (i === 0 ? w.toLowerCase() : capital(w))).join('') + tail;
  },
  pascal(name) {
    const { head, words, tail } = split(name);
    return head + words.map(capital).join('') + tail;
  },
  snake(name) {
    const { head, words, tail } = split(name);
    return head + words.map((w) => w.toLowerCase()).join('_') + tail;
  },
  kebab(name) {
    const { head, words, tail } = split(name);
    return head + words.map((w) => w.toLowerCase()).join('-') + tail;
  }
};

/*
 * transformKeys as given (label: its name in messages) -> a function, null
 * (none: also what overrides an inherited or a registry's default one), or
 * undefined (not given: inherit).
 */
function transformOption(value, label) {
  if (value === undefined) return undefined;
  if (value === null || value === false) return null;
  if (typeof value === 'function') return value;
  if (typeof value === 'string' && Object.prototype.hasOwnProperty.call(TRANSFORMS, value)) return TRANSFORMS[value];
  throw invalid(`${label} must be ${Object.keys(TRANSFORMS).map((n) => `'${n}'`).join(', ')}, a function (name) => wireName, or null`);
}

/* rename as given -> a Map field -> wire name, or undefined (not given). */
function renameOption(value, label) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${label} must be an object { field: 'wireName' }`);
  }
  const map = new Map();
  const wires = new Map();
  for (const field of Object.keys(value)) {
    const wire = value[field];
    if (typeof wire !== 'string') throw invalid(`${label}.${field} must be a string`);
    if (wires.has(wire)) throw invalid(`${label} gives "${wire}" to both ${wires.get(wire)} and ${field}`);
    wires.set(wire, field);
    map.set(field, wire);
  }
  return map;
}

/*
 * Naming: the wire names of one class's fields. `transform` (a function or
 * null) makes the name of a field that rename does not give; classKey is
 * passed to it as its second argument.
 */
class Naming {
  constructor(classKey, transform, rename) {
    this.classKey = classKey;
    this.transform = transform;
    this.rename = rename;
    this.toWire = new Map();
    this.fromWire = new Map();
    /* Called after learn() adds an entry (Registry#reshape sets it). */
    this.onLearn = null;
    for (const [field, wire] of rename) this.add(field, wire);
  }

  /* The wire name of field. */
  wire(field) {
    const wire = this.toWire.get(field);
    return wire === undefined ? this.learn(field) : wire;
  }

  /* The field a wire name belongs to; a name the table lacks is its own. */
  field(wire) {
    const field = this.fromWire.get(wire);
    return field === undefined ? wire : field;
  }

  learn(field) {
    let wire = field;
    if (this.transform !== null) {
      wire = this.transform(field, this.classKey); // called as a plain function
      if (typeof wire !== 'string') {
        throw invalid(`transformKeys of class "${this.classKey}" returned ${typeof wire} for "${field}", not a string`);
      }
    }
    this.add(field, wire);
    if (this.onLearn !== null) this.onLearn();
    return wire;
  }

  add(field, wire) {
    const other = this.fromWire.get(wire);
    if (other !== undefined && other !== field) {
      throw invalid(`class "${this.classKey}": fields "${other}" and "${field}" would both be written as "${wire}" (rename one)`);
    }
    this.toWire.set(field, wire);
    this.fromWire.set(wire, field);
  }

  /* Whether this naming makes the same names as (transform, rename). */
  same(transform, rename) {
    if (this.transform !== transform || this.rename.size !== rename.size) return false;
    for (const [field, wire] of rename) if (this.rename.get(field) !== wire) return false;
    return true;
  }
}

/*
 * The Naming of a class, or null when every field keeps its name. own: the
 * class's { transformKeys, rename } (transformOption/renameOption);
 * inherited: those of its registered superclasses, nearest first;
 * defaults: the registry's. transformKeys: the nearest given one wins (own,
 * then superclasses, then the default). rename: all are merged, the
 * default's first, then the superclasses' from the farthest, then the
 * class's own, each entry replacing one for the same field. A `fields`
 * list puts its names in the table at once.
 */
function namingOf(classKey, own, inherited, defaults, fields, old) {
  let transform = own.transformKeys;
  for (let i = 0; transform === undefined && i < inherited.length; i++) transform = inherited[i].transformKeys;
  if (transform === undefined) transform = defaults.transformKeys;
  if (transform === undefined) transform = null;
  const rename = new Map(defaults.rename || []);
  for (let i = inherited.length - 1; i >= 0; i--) {
    if (inherited[i].rename !== undefined) for (const [f, w] of inherited[i].rename) rename.set(f, w);
  }
  if (own.rename !== undefined) for (const [f, w] of own.rename) rename.set(f, w);
  for (const [f, w] of rename) if (f === w && transform === null) rename.delete(f);
  if (transform === null && rename.size === 0) return null;
  if (old !== null && old.same(transform, rename)) return old;
  const naming = new Naming(classKey, transform, rename);
  if (fields !== null) for (const f of fields) naming.wire(f);
  return naming;
}

module.exports = { Naming, namingOf, transformOption, renameOption, TRANSFORMS };
