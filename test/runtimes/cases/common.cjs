'use strict';
/*
 * common.cjs - what the cases of the runtime matrix check, in any runtime
 * (Node, Bun, Deno, workerd): every value of test/js/fixtures.cjs through
 * one entry point's encodeEntity and decodeEntity. Values are compared as
 * darmok JSON text (json: the darmok/json functions of the same registry),
 * so no runtime's own deepEqual is needed, and with each fixture's own
 * checks (prototypes, shared references).
 */

const assert = {
  ok(value, message) {
    if (!value) throw new Error(message || 'not ok');
  },
  strictEqual(actual, expected, message) {
    if (!Object.is(actual, expected)) throw new Error(message || `${String(actual)} !== ${String(expected)}`);
  }
};

/*
 * Fixtures whose value is another one in a runtime before darmok sees it,
 * so that only their exact text is not compared there (the round trip
 * still is): runtime -> fixture name -> why.
 */
const OTHER_INPUT = {
  bun: {
    'RegExp with slash and unicode': "Bun's transpiler rewrites the literal /\\/é\\d/su as /\\/\\u00E9\\d/su, so its source differs"
  }
};

/*
 * Round-trips every fixture through codec; returns how many, or throws
 * naming the first that fails. runtime: the matrix's name of this
 * runtime (OTHER_INPUT).
 */
function roundTrips(codec, json, fixtures, runtime) {
  const other = OTHER_INPUT[runtime] || {};
  let n = 0;
  for (const f of fixtures) {
    try {
      const value = f.make();
      if (f.json !== undefined && !other[f.name]) assert.strictEqual(json.encodeEntity(value), f.json, 'encodes to another text');
      const back = codec.decodeEntity(codec.encodeEntity(value));
      if (f.expect !== null) {
        const want = f.expect ? f.expect() : value;
        assert.strictEqual(json.encodeEntity(back), json.encodeEntity(want), 'decodes to another value');
        if (want !== null && typeof want === 'object') {
          assert.ok(Object.getPrototypeOf(back) === Object.getPrototypeOf(want), 'decodes with another prototype');
        }
      }
      if (f.check) f.check(back, assert);
    } catch (err) {
      throw new Error(`fixture "${f.name}": ${err && err.message}`);
    }
    n++;
  }
  if (n === 0) throw new Error('no fixtures');
  return n;
}

/* Runs fn (sync or async) and resolves to the DarmokError it throws with code, or rejects. */
async function throwsCode(fn, code) {
  try {
    await fn();
  } catch (err) {
    if (err && err.code === code) return err;
    throw new Error(`expected ${code}, got ${err && err.code} ${err && err.message}`);
  }
  throw new Error(`expected ${code}, got no error`);
}

/*
 * The names an ESM namespace of entry lacks that its CommonJS exports
 * have (require then import: Deno once gave only `default`).
 */
function missingNames(cjs, ns) {
  return Object.keys(cjs).filter((k) => k !== 'default' && !(k in ns) );
}

module.exports = { assert, roundTrips, throwsCode, missingNames, OTHER_INPUT };
