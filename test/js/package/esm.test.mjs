// CommonJS `require` and ESM `import` share one implementation and one registry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as esm from '../../../js/index.mjs';
import * as esmJson from '../../../js/json.mjs';

const require = createRequire(import.meta.url);
const cjs = require('../../../js/index.cjs');
const { haveWasm } = require('../helpers.cjs');
const { encodeTape } = require('../../../js/internal.cjs').encode;
const { decodeTape } = require('../../../js/internal.cjs').decode;

test('import and require give the same functions', () => {
  for (const k of ['encodeEntity', 'decodeEntity', 'serializable', 'init', 'DarmokError']) {
    assert.strictEqual(esm[k], cjs[k], k);
    assert.strictEqual(esmJson[k], cjs[k], k);
  }
  assert.strictEqual(esm.default, cjs);
});

test('a class registered through import decodes through require', () => {
  class Shared { constructor() { this.x = 1; } }
  esm.serializable(Shared, [], 'esm.Shared');
  const out = haveWasm
    ? cjs.decodeEntity(esm.encodeEntity(new Shared()))
    : decodeTape(encodeTape(new Shared()));
  assert.ok(out instanceof Shared);
  if (haveWasm) assert.strictEqual(cjs.encodeEntity(new Shared()), '{"$":"esm.Shared","x":1}');
});
