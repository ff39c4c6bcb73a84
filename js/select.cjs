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
 * new object. A call with none of these options gets null from shaping()
 * and the encoder does none of this work.
 */

const { DarmokError } = require('./errors.cjs');

/* The per-call option names this file reads. */
const SHAPING_OPTIONS = ['sortKeys', 'only', 'except'];

/* selection object -> Map class key -> Set of field names. */
const compiled = new WeakMap();

function invalid(message) {
  return new DarmokError('ERR_INVALID_OPTION', message);
}

/* options[name] (only or except) as a compiled Map, or null when not given. */
function selection(options, name) {
  const sel = options[name];
  if (sel === undefined || sel === null) return null;
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
 * The encoder's shaping for these call options (encode.cjs Encoder#run):
 * { sortKeys, only, except }, or null when the call asks for none.
 */
function shaping(options) {
  const sortKeys = options.sortKeys;
  if (sortKeys === undefined && options.only === undefined && options.except === undefined) return null;
  if (sortKeys !== undefined && typeof sortKeys !== 'boolean') throw invalid('sortKeys must be true or false');
  const only = selection(options, 'only');
  const except = selection(options, 'except');
  if (sortKeys !== true && only === null && except === null) return null;
  return { sortKeys: sortKeys === true, only, except };
}

module.exports = { shaping, SHAPING_OPTIONS };
