'use strict';
/*
 * select.cjs - the per-call shaping options of encodeEntity and toPlain:
 * sortKeys, and the field selections only / except by class key
 * ({ only: { Post: ['id', 'title'] }, except: { User: ['email'] } }).
 *
 * A selection object is compiled once into a Map class key -> Set of
 * field names and kept in a WeakMap under that object, so a caller who
 * passes the same object on every call (a constant) pays for it once. The
 * object is read at its first use only: change a selection by passing a
 * new object. The options themselves are declared in api.cjs's tables.
 */

const { invalid } = require('./options.cjs');

/* selection object -> Map class key -> Set of field names. */
const compiled = new WeakMap();

/* The check of only and except (options.cjs): the selection sel as a compiled Map. */
function selection(sel, name) {
  if (sel === null) return null;
  if (typeof sel !== 'object' || Array.isArray(sel)) {
    throw invalid(`${name} must be an object { ClassKey: ['field', ...] }`);
  }
  let map = compiled.get(sel);
  if (map === undefined) {
    map = new Map();
    for (const key of Object.keys(sel)) {
      const fields = sel[key];
      if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) {
        throw invalid(`${name}.${key} must be an array of field names`);
      }
      map.set(key, new Set(fields));
    }
    compiled.set(sel, map);
  }
  return map;
}

/*
 * The encoder's shaping for the checked call options sortKeys (a boolean)
 * and only, except (compiled selections or null): { sortKeys, only,
 * except } for encode.cjs Encoder#run, or null when the call asks for none
 * and the encoder does none of this work.
 */
function shaping(sortKeys, only, except) {
  if (sortKeys !== true && only === null && except === null) return null;
  return { sortKeys: sortKeys === true, only, except };
}

module.exports = { shaping, selection };
