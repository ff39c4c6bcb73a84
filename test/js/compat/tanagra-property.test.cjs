'use strict';
/*
 * A property test of the tanagra reader (js/compat/tanagra.cjs), the one decoder
 * without a libFuzzer target: random graphs written by the real
 * tanagra-json 1.0.6 read back into the graph that was written, and
 * documents mutated from them (bytes, and tokens such as $ref that make
 * fields share values) give a value or a DarmokError, nothing else.
 */
const { test } = require('node:test');
const { assert, haveWasm, xorshift: rng } = require('../helpers.cjs'); // seeded: a failure replays
const { createCodec, createRegistry, DarmokError } = require('../../../js/index.cjs');

let tanagra = null;
try {
  tanagra = { core: require('tanagra-core'), json: require('tanagra-json') };
} catch {
  // not installed (a production install)
}
const skip = !haveWasm ? 'build/darmok.wasm is not built' : tanagra === null && 'tanagra-json is not installed';

class Node {}
class Leaf {}

/*
 * A random graph of truthy fields (tanagra drops falsy ones), with Maps and
 * Dates and arrays only as fields: tanagra writes a Map or a Date anywhere
 * else as JSON.stringify does ({} and an ISO string), and an array in an
 * array as an object of its indexes.
 */
function makeGraph(r, depth) {
  const leaf = () => Object.assign(new Leaf(), { label: 'l' + r(1000), weight: 1 + r(100) });
  const value = (d, field) => {
    switch (r(d > 0 ? 8 : 4)) {
      case 0: return 1 + r(1e6);
      case 1: return 's' + r(1e6) + '\u00e9';
      case 2: return true;
      case 3: return leaf();
      case 4: return field ? Array.from({ length: 1 + r(4) }, () => value(d - 1, false)) : makeNode(d - 1);
      case 5: return field ? new Map(Array.from({ length: 1 + r(4) }, (_, i) => ['k' + i, value(d - 1, false)])) : leaf();
      case 6: return field ? new Date(1e12 + r(1e9)) : 'd' + r(10);
      default: return makeNode(d - 1);
    }
  };
  const makeNode = (d) => {
    const n = new Node();
    const fields = 1 + r(5);
    for (let i = 0; i < fields; i++) n['f' + i] = value(d, true);
    return n;
  };
  return makeNode(depth);
}

test('tanagra property: random graphs written by tanagra-json read back as written', { skip }, () => {
  tanagra.core.serializable()(Leaf);
  tanagra.core.serializable([Leaf])(Node);
  const registry = createRegistry();
  registry.serializable(Leaf, { key: 'Leaf' });
  registry.serializable(Node, { key: 'Node' });
  const codec = createCodec({ registry });
  for (let seed = 1; seed <= 300; seed++) {
    const graph = makeGraph(rng(seed), 3);
    const written = tanagra.json.encodeEntity(graph);
    assert.deepStrictEqual(codec.decodeEntity(written), graph, `seed ${seed}: ${written.slice(0, 200)}`);
  }
});

test('tanagra property: mutated documents give a value or a DarmokError', { skip }, () => {
  const registry = createRegistry();
  registry.serializable(Leaf, { key: 'Leaf' });
  registry.serializable(Node, { key: 'Node' });
  const codec = createCodec({ registry });
  const tokens = ['{"$ref":0}', '{"$ref":1}', '{"$ref":2}', '[[1,2]]', '{"type":"Buffer","data":[1,2]}', '{"0":1}',
    '{"_serializationKey":"Node"}', '{"_serializationKey":"Nope"}', '{"$hole":5}', '"2020-01-01"', '[]', '{}', 'null'];
  let values = 0;
  let errors = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed * 7919);
    const written = tanagra.json.encodeEntity(makeGraph(rng(seed), 3));
    for (let m = 0; m < 10; m++) {
      let text = written;
      if (r(2) === 0) {
        // a value (after a colon) replaced by a token
        const colons = [];
        for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) colons.push(i);
        const at = colons[r(colons.length)] + 1;
        const end = text.slice(at).search(/[,}\]]/);
        text = text.slice(0, at) + tokens[r(tokens.length)] + text.slice(at + Math.max(end, 0));
      } else {
        const i = r(text.length);
        text = text.slice(0, i) + String.fromCharCode(32 + r(95)) + text.slice(i + 1);
      }
      try {
        codec.decodeEntity(text, { legacy: 'tanagra', unknownClass: r(2) === 0 ? 'plain' : 'throw' });
        values++;
      } catch (err) {
        assert.ok(err instanceof DarmokError, `seed ${seed}: ${err && err.stack}\n${text.slice(0, 300)}`);
        errors++;
      }
    }
  }
  assert.ok(values > 100 && errors > 100, `${values} values, ${errors} errors`);
});
