'use strict';
/*
 * options.cjs - how every options object of the API is checked. Each API
 * family declares its options once, in a table
 *
 *     { name: { check(value, label) -> the value to use, default, doc } }
 *
 * (api.cjs: the codec's calls; registry.cjs: createRegistry, serializable;
 * cache/options.cjs: darmok/redis), and readOptions() reads an options
 * object against its table: a name that is not an option is
 * ERR_INVALID_OPTION naming the closest valid one, so a misspelt option
 * (`{ stict: true }`) fails instead of being ignored; a value is passed
 * through its check, which throws ERR_INVALID_OPTION for a wrong one; an
 * option not given takes its default. A check is only called on a value
 * that is not undefined.
 */

const { DarmokError } = require('../core/errors.cjs');

const hasOwn = Object.prototype.hasOwnProperty;

/* The byte formats, by the name the `format` option, the CLI and cache entries give them. */
const FORMAT_NAMES = Object.freeze(['json', 'protobuf']);

const U32_MAX = 0xffffffff;

/* The error of a bad argument; every option check throws it. */
function invalid(message) {
  return new DarmokError('ERR_INVALID_OPTION', message);
}

/* The Levenshtein distance of a and b (option names are short). */
function distance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const swap = a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1;
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + swap);
    }
    prev = row;
  }
  return prev[b.length];
}

/* The valid name closest to name, or null when none is close enough to be meant. */
function closest(name, valid) {
  let best = null;
  let bestDistance = Infinity;
  for (const v of valid) {
    const d = distance(name, v);
    if (d < bestDistance) {
      best = v;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : null;
}

/* ERR_INVALID_OPTION for an unknown option name of call. */
function unknownOption(call, name, valid) {
  const near = closest(name, valid);
  const hint = near !== null ? `did you mean '${near}'?` : `the options are ${[...valid].join(', ')}`;
  return invalid(`${call}: unknown option '${name}': ${hint}`);
}

/*
 * Throw unknownOption for the first name of options (its enumerable
 * string keys, inherited ones included: those are read too) that is not
 * in valid, a Set.
 */
function checkNames(options, valid, call) {
  for (const name in options) {
    if (!valid.has(name)) throw unknownOption(call, name, valid);
  }
}

/*
 * What readOptions keeps about a table, under a symbol (not an option
 * name, and not copied by a spread of the table): its defaults, and the
 * last options object it read with the values it had then, since a caller
 * passes the same constant options on every call and reading them again
 * costs more than the call's own work on small values.
 */
const KEPT = Symbol('options.kept');

function kept(table) {
  let k = table[KEPT];
  if (k === undefined) {
    const defaults = {};
    for (const name of Object.keys(table)) defaults[name] = table[name].default;
    k = { defaults: Object.freeze(defaults), last: null, names: [], values: [], out: null };
    Object.defineProperty(table, KEPT, { value: k });
  }
  return k;
}

/* Whether options holds the names and values k.last held when it was read. */
function unchanged(k, options) {
  const names = k.names;
  let i = 0;
  for (const name in options) {
    if (i === names.length || names[i] !== name || k.values[i] !== options[name]) return false;
    i++;
  }
  return i === names.length;
}

/*
 * options read against table -> a frozen object with every option of
 * table: the checked value given, or the default. labelOf(name) names an
 * option in a check's message (default: its name). Options undefined or
 * null are all defaults; options that are not an object are
 * ERR_INVALID_OPTION. Every name is checked before any value is. The
 * result may be shared by calls with the same options.
 */
function readOptions(table, options, call, labelOf) {
  const k = kept(table);
  if (options === undefined || options === null) return k.defaults;
  if (options === k.last && unchanged(k, options)) return k.out;
  if (typeof options !== 'object') throw invalid(`${call}: options must be an object, not ${typeof options}`);
  for (const name in options) {
    if (!hasOwn.call(table, name)) throw unknownOption(call, name, Object.keys(table));
  }
  const out = { ...k.defaults };
  const names = [];
  const values = [];
  for (const name in options) {
    const v = options[name];
    names.push(name);
    values.push(v);
    if (v !== undefined) out[name] = table[name].check(v, labelOf === undefined ? name : labelOf(name));
  }
  Object.freeze(out);
  // Only a read that succeeded is kept: a refused object is refused again.
  k.last = options;
  k.names = names;
  k.values = values;
  k.out = out;
  return out;
}

/* The table of the options of table but those named in names (a call that takes fewer). */
function without(table, names) {
  const out = {};
  for (const name of Object.keys(table)) if (!names.includes(name)) out[name] = table[name];
  return out;
}

/* An entry of a table. */
function option(check, dflt, doc) {
  return { check, default: dflt, doc };
}

/* Checks, for the tables. */

/* true or false. */
function flag(v, label) {
  if (typeof v !== 'boolean') throw invalid(`${label} must be true or false`);
  return v;
}

/* An integer from 1 to 2^32 - 1: a limit the core takes as a uint32. */
function limit(v, label) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > U32_MAX) {
    throw invalid(`${label} must be an integer from 1 to ${U32_MAX}`);
  }
  return v;
}

/* One of the strings of values. */
function oneOf(values) {
  return (v, label) => {
    if (!values.includes(v)) throw invalid(`${label} must be ${values.map((x) => `'${x}'`).join(' or ')}`);
    return v;
  };
}

/* A format name (FORMAT_NAMES). */
function formatName(v) {
  if (typeof v !== 'string' || !FORMAT_NAMES.includes(v)) {
    throw invalid(`unknown format ${JSON.stringify(v)}: one of ${FORMAT_NAMES.join(', ')}`);
  }
  return v;
}

/* Any value: checked where it is used. */
function any(v) {
  return v;
}

module.exports = {
  readOptions, without, option, invalid, checkNames,
  flag, limit, oneOf, formatName, any, FORMAT_NAMES
};
