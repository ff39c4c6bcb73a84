'use strict';
/*
 * The printer of `darmok inspect` (js/cli/tree.cjs, with the envelope
 * reader js/cli/envelope.cjs in front and its error report
 * js/cli/report.cjs, as inspect runs them) over mutants
 * of the committed seed corpora (test/fuzz/corpus/json_read, pb_read,
 * pb_transcode) for FUZZ_SECONDS. A failure is an exception that is not a
 * DarmokError, a call over CALL_MS (a hang ends the whole run: `make fuzz`
 * runs this under `timeout`), or an output line or error message holding
 * a raw control or invisible character; every other input goes through
 * the --json path (js/cli/json-text.cjs) instead, whose text must also
 * keep the document's JSON value. A failing input is saved as
 * build/fuzz/crash-cli_tree-<sha1> and the run exits 1.
 *   node test/fuzz/fuzz_cli_tree.cjs [seconds]
 */
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const root = path.join(__dirname, '..', '..');
const internal = require(path.join(root, 'js', 'internal.cjs'));
const { render } = internal.tree;
const { unwrap } = internal.envelope;
const { errorLines } = internal.report;
const { DarmokError } = internal.errors;
const { looksLikeProtobuf } = internal.sniff;
const { documentJson, printable } = internal.jsonText;
const { isUnsafe } = internal.errors;
const { isDeepStrictEqual } = require('node:util');

const seconds = Number(process.argv[2] ?? process.env.FUZZ_SECONDS ?? 60);
const CALL_MS = 2000;

const seeds = [];
for (const dir of ['json_read', 'pb_read', 'pb_transcode']) {
  const d = path.join(__dirname, 'corpus', dir);
  for (const f of fs.readdirSync(d)) seeds.push(fs.readFileSync(path.join(d, f)));
}
// Pieces a mutant may gain: tags, escapes of the characters at stake, long numbers, envelopes.
const PIECES = [
  '{"$":"', '{"$Map":[', '{"$Set":[', '{"$RegExp":["', '{"$Date":', '{"$BigInt":"', '{"$hole":', '{"$ref":',
  '{"$Error":{"name":"', '\\u001b[2J', '\\u009b', '\\u202e', '\\u0007', '\u001b]0;x\u0007', '\u202e', '\u009b',
  '1'.repeat(400), '0.' + '9'.repeat(500), '-0', '1e999', '[', ']', '{', '}', ',', ':', '"',
  'darmok/1 json 9999999999999999\n', 'darmok/1 protobuf 1\n', 'darmok/1 json -1\n'
].map((p) => Buffer.from(p, 'latin1')).concat(
  // raw as UTF-8, as a JSON string may hold them
  ['\u009b', '\u0085', '\u202e', '\u2066', '\u200f', '\u061c', '\u2028', '\u{e0001}', '\u007f'].map((p) => Buffer.from(p, 'utf8')));

let state = 0x9e3779b9;
function rand(n) {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state % n;
}

function mutate(seed) {
  let b = Buffer.from(seed);
  const rounds = 1 + rand(4);
  for (let i = 0; i < rounds; i++) {
    const at = b.length === 0 ? 0 : rand(b.length + 1);
    switch (rand(5)) {
      case 0: if (b.length > 0) b[rand(b.length)] = rand(256); break;
      case 1: b = Buffer.concat([b.subarray(0, at), PIECES[rand(PIECES.length)], b.subarray(at)]); break;
      case 2: b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + rand(8)))]); break;
      case 3: b = Buffer.concat([b.subarray(0, at), b.subarray(rand(b.length + 1)), b.subarray(at)]); break;
      default: b = Buffer.concat([b.subarray(0, at), Buffer.from([rand(256)]), b.subarray(at)]); break;
    }
    if (b.length > 1 << 16) b = b.subarray(0, 1 << 16);
  }
  return b;
}

/* The first character of text, but a newline, that a terminal acts on or hides (errors.cjs UNSAFE), or null. */
function firstRaw(text) {
  for (const c of text) if (c !== '\n' && isUnsafe(c.codePointAt(0))) return c;
  return null;
}

/*
 * inspect's pipeline without its I/O, with --json or not: the lines it
 * prints (with --json, the JSON text, which must also be the same JSON
 * value as the document's JSON), or the message of the DarmokError it
 * reports.
 */
function inspect(bytes, asJson) {
  let doc = bytes;
  let format;
  const lines = [];
  try {
    const entry = unwrap(bytes);
    if (entry !== null) {
      doc = entry.document;
      for (const [name, value] of entry.fields) lines.push(`${name}: ${value}`);
    }
    format = entry !== null ? entry.format : looksLikeProtobuf(doc) ? 'protobuf' : 'json';
    if (asJson) {
      const text = documentJson(doc, format);
      const shown = Buffer.from(printable(text)).toString('utf8');
      if (!isDeepStrictEqual(JSON.parse(shown), JSON.parse(Buffer.from(text).toString('utf8')))) {
        return { bad: `--json printed another JSON value: ${JSON.stringify(shown.slice(0, 200))}` };
      }
      lines.push(shown);
    } else {
      for (const line of render(doc, format, (style, text) => text)) lines.push(line);
    }
  } catch (err) {
    if (!(err instanceof DarmokError)) return { bad: `${err && err.name}: ${err && err.message}` };
    for (const line of errorLines('darmok inspect', err)) lines.push(line);
  }
  for (const line of lines) {
    const c = firstRaw(line);
    if (c !== null) return { bad: `raw U+${c.codePointAt(0).toString(16)} in ${JSON.stringify(line.slice(0, 200))}` };
  }
  return { bad: null };
}

const until = Date.now() + seconds * 1000;
let runs = 0;
while (Date.now() < until) {
  const input = mutate(seeds[rand(seeds.length)]);
  const t0 = Date.now();
  const { bad } = inspect(input, (runs & 1) === 1);
  const ms = Date.now() - t0;
  const why = bad ?? (ms > CALL_MS ? `${ms} ms for one input` : null);
  if (why !== null) {
    const file = path.join(root, 'build', 'fuzz', `crash-cli_tree-${crypto.createHash('sha1').update(input).digest('hex')}`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, input);
    console.error(`fuzz cli_tree: FAILED after ${runs} runs: ${why} (input: ${file})`);
    process.exit(1);
  }
  runs++;
}
console.log(`fuzz cli_tree: ${runs} runs in ${seconds} s, no failure`);
