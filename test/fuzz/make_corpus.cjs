'use strict';
/*
 * make_corpus.cjs - write the seed corpora of the fuzz targets from the
 * test fixtures (test/js/fixtures.cjs): `make fuzz-corpus`.
 *
 *   corpus/json_read/   darmok JSON: every fixture's text, every invalid
 *                       input, and a few hand-picked edge cases
 *   corpus/json_write/  tapes: every fixture's tape (js/codec/encode.cjs), the
 *                       tapes of the JSON seeds that decode
 *   corpus/pb_read/     protobuf documents: every fixture's (js/protobuf.cjs)
 *                       and the protobuf of the JSON seeds that transcode
 *   corpus/pb_write/    the json_write tapes (the same encoder input)
 *   corpus/pb_transcode/ the json_read texts
 *   corpus/json_utf16/  the json_read texts (read as UTF-16 units)
 *
 * Files are named by the SHA-1 of their content, as libFuzzer names its own;
 * the directories are rewritten, so a seed whose fixture is gone goes too.
 * A future target gets its seeds here with one more `write(...)` block.
 */
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { fixtures, invalid } = require('../js/fixtures.cjs');
const { encodeEntity, transcode } = require('../../js/index.cjs');
const protobuf = require('../../js/protobuf.cjs');
const { encodeTape } = require('../../js/internal.cjs').encode;
const core = require('../../js/internal.cjs').core;

const root = path.join(__dirname, 'corpus');

function write(target, seeds) {
  const dir = path.join(root, target);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const names = new Set();
  for (const seed of seeds) {
    const bytes = typeof seed === 'string' ? Buffer.from(seed, 'utf8') : Buffer.from(seed);
    if (bytes.length > 4096) continue; // seeds stay small
    const name = crypto.createHash('sha1').update(bytes).digest('hex');
    if (names.has(name)) continue;
    names.add(name);
    fs.writeFileSync(path.join(dir, name), bytes);
  }
  console.log(`fuzz-corpus: ${target}: ${names.size} seeds`);
}

/* Edge cases the fixtures do not spell out. */
const extra = [
  '[]', '{}', '""', '"\\u0000\\ud83d\\ude00\\ud800\\udfff\\/\\b\\f\\n\\r\\t"', '-0', '-0.0e-0', '1E+400',
  '123456789012345678901234567890', '0.1e1', ' \t\r\n[ \t\r\n1 \t\r\n] ',
  '{"$Map":[[{"$Set":[]},{"$ref":1}]]}', '{"$NullProto":{"$$":1,"a":{"$ref":0}}}',
  '{"$Error":{"name":"TypeError","message":"m","cause":{"$ref":0}}}',
  '[{"$hole":3},1,{"$hole":1}]', '{"$":"Foo","$v":2,"name":"n"}', '{"$$ref":0,"b":[]}',
  '{"$BigInt":"-123456789012345678901234567890"}', '{"$RegExp":["a+\\\\/","gimsuy"]}',
  '{"$Date":null}', '{"$Date":""}', '{"$Date":"+275760-09-13T00:00:00.000Z"}', '{"$Float64Array":"AAAAAAAA8D8="}',
  '{"$BigInt64Array":"AAAAAAAAAIA="}', '{"$DataView":""}', '{"$Buffer":"3q2+7w=="}',
  '"é😀\u07ff\uffff"', '[' .repeat(40) + ']'.repeat(40)
];

const jsonSeeds = [];
const tapeSeeds = [];
const pbSeeds = [];
for (const f of fixtures) {
  const v = f.make();
  jsonSeeds.push(f.json !== undefined ? f.json : encodeEntity(v));
  tapeSeeds.push(encodeTape(v));
  pbSeeds.push(protobuf.encodeEntity(v));
}
for (const bad of invalid) jsonSeeds.push(bad.bytes ? Uint8Array.from(bad.bytes) : bad.text);
// Long strings that are not ASCII (T_STR16 on the tape), before and after
// short ones that are not either: where the JSON writer's output becomes
// UTF-16 units (dk_internal.h DK_WRITE_MAY_WIDE).
const long = 'long text, café and 東京 and 🚀, "quoted"\n';
for (const v of [
  [long], ['é', long, 'ü'], { 'kéy': long, n: 1.5, d: new Date(0), b: Buffer.from('x'), big: 12n },
  [`${'a'.repeat(40)}\ud800 lone`, 'x'.repeat(33), `${'é'.repeat(20)}\udc00`],
  new Map([['ü', long], [long, [long, { [long]: 0 }]]]),
]) tapeSeeds.push(encodeTape(v));
jsonSeeds.push(...extra);
for (const text of extra) {
  try {
    // A copy: r.buf is WebAssembly memory (a Buffer, whose slice() is a
    // view that the next call overwrites, or growth detaches).
    core.jsonDecode(text, 1000, 1 << 24, 1 << 26, (r) => tapeSeeds.push(Uint8Array.prototype.slice.call(r.buf, r.pos, r.end)));
  } catch {
    // an invalid seed has no tape
  }
}

for (const text of jsonSeeds) {
  try {
    pbSeeds.push(transcode(text, { from: 'json', to: 'protobuf' }));
  } catch {
    // an invalid seed has no protobuf
  }
}

write('json_read', jsonSeeds);
write('json_write', tapeSeeds);
write('pb_read', pbSeeds);
write('pb_write', tapeSeeds);
write('pb_transcode', jsonSeeds);
write('json_utf16', jsonSeeds);
