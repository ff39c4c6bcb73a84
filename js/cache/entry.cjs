'use strict';
/*
 * entry.cjs - the bytes of one darmok/redis cache entry: a one-line
 * ASCII header (the envelope) followed by the darmok document, specified in
 * docs/CACHE.md "The stored entry":
 *
 *     darmok/1 <format> <staleAt>\n<document>
 *
 *   darmok/1  the envelope and its revision; a reader of revision 1 treats
 *             any other revision as a bad entry (a miss).
 *   format    `json` or `protobuf`: the format of the document after the
 *             newline. The JSON format's document is UTF-8 text, so the
 *             whole entry reads as text in redis-cli; protobuf's is raw
 *             bytes.
 *   staleAt   the logical expiry, in milliseconds since the Unix epoch
 *             (decimal digits): after it the entry is stale. Redis itself
 *             drops the key `grace` later (SET ... PX ttl + grace).
 *
 * More space-separated `name=value` fields may follow staleAt; this reader
 * knows two and ignores the others:
 *   c=<createdAt>  when the entry was written, ms since the Unix epoch
 *   t=<tags>       its tags, comma-separated (UTF-8; no spaces or commas)
 * A writer adds them only to an entry with tags (cache/tags.cjs), so an
 * entry without tags has the header readers before tags knew.
 */

const { FORMAT_NAMES } = require('../codec/options.cjs');

const MAGIC = 'darmok/1 ';
const NEWLINE = 0x0a;
/*
 * A header longer than this is not ours (one without tags is about 30
 * bytes; tags are bounded by cache/tags.cjs to fit).
 */
const HEADER_MAX = 1024;

/* The header of an entry of `format` that goes stale at staleAt (ms), with extra fields ('' or ' c=… t=…'). */
function header(format, staleAt, extra) {
  return `${MAGIC}${format} ${staleAt}${extra}\n`;
}

/*
 * The entry to SET: header + doc as one Buffer when doc is bytes (the
 * cache encodes either format to bytes), as a string when doc is JSON
 * text. extra: the fields after staleAt, each with its leading space (''
 * for none).
 */
function pack(format, staleAt, doc, extra = '') {
  const head = header(format, staleAt, extra);
  if (typeof doc === 'string') return head + doc;
  const headBytes = Buffer.from(head, 'utf8');
  const out = Buffer.allocUnsafe(headBytes.length + doc.length);
  out.set(headBytes, 0);
  out.set(doc, headBytes.length);
  return out;
}

/* The fields after staleAt (text after its space) -> { createdAt, tags }. */
function fields(text) {
  let createdAt = 0;
  let tags = null;
  for (const f of text.split(' ')) {
    if (f.startsWith('c=') && /^[0-9]{1,16}$/.test(f.slice(2))) createdAt = Number(f.slice(2));
    else if (f.startsWith('t=') && f.length > 2) tags = f.slice(2).split(',');
  }
  return { createdAt, tags };
}

const MAGIC_BYTES = Buffer.from(MAGIC, 'latin1');
const FORMAT_BYTES = FORMAT_NAMES.map((format) => [format, Buffer.from(`${format} `, 'latin1')]);
const SPACE = 0x20;
const ZERO = 0x30;

/*
 * An entry read back (a string or a Buffer) -> { format, staleAt, doc }, doc
 * the document as a string or a Buffer view of the entry's bytes; or a
 * string saying why it is not an entry of revision 1.
 */
function unpack(raw) {
  return typeof raw === 'string' ? unpackText(raw) : unpackBytes(raw);
}

/* raw holds bytes at pos. */
function startsAt(raw, pos, bytes) {
  if (raw.length < pos + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (raw[pos + i] !== bytes[i]) return false;
  return true;
}

/*
 * Every read of the cache comes here: the header is checked byte by byte
 * in JS, without making a string or calling into Buffer's C++ side.
 */
function unpackBytes(raw) {
  const n = raw.length;
  if (!startsAt(raw, 0, MAGIC_BYTES)) return whyNot(raw);
  let pos = MAGIC_BYTES.length;
  let format = null;
  for (let f = 0; f < FORMAT_BYTES.length; f++) {
    if (startsAt(raw, pos, FORMAT_BYTES[f][1])) {
      format = FORMAT_BYTES[f][0];
      pos += FORMAT_BYTES[f][1].length;
      break;
    }
  }
  const digitsFrom = pos;
  let staleAt = 0;
  while (pos < n && pos - digitsFrom < 16) {
    const d = raw[pos] - ZERO;
    if (d < 0 || d > 9) break;
    staleAt = staleAt * 10 + d;
    pos++;
  }
  if (format === null || pos === digitsFrom || pos >= n || (raw[pos] !== NEWLINE && raw[pos] !== SPACE)) return whyNot(raw);
  if (raw[pos] === NEWLINE) return { format, staleAt, doc: raw.subarray(pos + 1), createdAt: 0, tags: null };
  const end = raw.indexOf(NEWLINE, pos);
  if (end < 0 || end > HEADER_MAX) return whyNot(raw);
  const f = fields(raw.toString('utf8', pos + 1, end));
  return { format, staleAt, doc: raw.subarray(end + 1), createdAt: f.createdAt, tags: f.tags };
}

/*
 * Whether raw (a string or bytes) opens with the revision 1 magic: an
 * entry that does and still fails unpack() is a corrupt darmok entry;
 * one that does not is another application's value or a newer revision's.
 */
function isRevision1(raw) {
  return typeof raw === 'string' ? raw.startsWith(MAGIC) : startsAt(raw, 0, MAGIC_BYTES);
}

/* Why raw is not an entry of revision 1 (the slow path of a bad entry). */
function whyNot(raw) {
  const r = unpackText(raw.toString('latin1', 0, Math.min(raw.length, HEADER_MAX + 1)));
  return typeof r === 'string' ? r : 'a malformed darmok/redis header';
}

function unpackText(raw) {
  const end = raw.indexOf('\n');
  if (end < 0 || end > HEADER_MAX) return 'no darmok/redis header';
  const head = raw.slice(0, end);
  if (!head.startsWith(MAGIC)) {
    return head.startsWith('darmok/') ? `an envelope revision this process does not read (${head.split(' ')[0]})` : 'no darmok/redis header';
  }
  const parts = head.slice(MAGIC.length).split(' ');
  const format = parts[0];
  if (!FORMAT_NAMES.includes(format) || !/^[0-9]{1,16}$/.test(parts[1])) {
    return 'a malformed darmok/redis header';
  }
  const f = fields(parts.slice(2).join(' '));
  return { format, staleAt: Number(parts[1]), doc: raw.slice(end + 1), createdAt: f.createdAt, tags: f.tags };
}

module.exports = { pack, unpack, isRevision1, MAGIC };
