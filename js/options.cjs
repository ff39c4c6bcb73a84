'use strict';
/*
 * options.cjs - the check every options object of the API gets: a name
 * that is not an option is ERR_INVALID_OPTION naming the closest valid
 * one, so a misspelt option (`{ stict: true }`) fails instead of being
 * ignored.
 */

const { DarmokError } = require('./errors.cjs');

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
  return new DarmokError('ERR_INVALID_OPTION', `${call}: unknown option '${name}': ${hint}`);
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

module.exports = { checkNames, unknownOption, closest };
