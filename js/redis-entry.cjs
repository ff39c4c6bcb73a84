'use strict';
/*
 * redis-entry.cjs - the bytes of one darmok/redis cache entry: a one-line
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
 * More space-separated fields may follow staleAt in a later revision 1
 * writer; this reader ignores them.
 */

const MAGIC = 'darmok/1 ';
const NEWLINE = 0x0a;
/* A header longer than this is not ours (the one we write is about 30 bytes). */
const HEADER_MAX = 128;

/* The header of an entry of `format` that goes stale at staleAt (ms). */
function header(format, staleAt) {
  return `${MAGIC}${format} ${staleAt}\n`;
}

/*
 * The entry to SET: a string for the JSON format (doc is the JSON text), a
 * Buffer of header + doc bytes for protobuf.
 */
function pack(format, staleAt, doc) {
  const head = header(format, staleAt);
  if (typeof doc === 'string') return head + doc;
  const out = Buffer.allocUnsafe(head.length + doc.length);
  out.write(head, 0, 'latin1');
  out.set(doc, head.length);
  return out;
}

const MAGIC_BYTES = Buffer.from(MAGIC, 'latin1');
const FORMAT_BYTES = [['json', Buffer.from('json ')], ['protobuf', Buffer.from('protobuf ')]];
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
  const end = raw[pos] === NEWLINE ? pos : raw.indexOf(NEWLINE, pos);
  if (end < 0 || end > HEADER_MAX) return whyNot(raw);
  return { format, staleAt, doc: raw.subarray(end + 1) };
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
  const fields = head.slice(MAGIC.length).split(' ');
  const format = fields[0];
  if ((format !== 'json' && format !== 'protobuf') || !/^[0-9]{1,16}$/.test(fields[1])) {
    return 'a malformed darmok/redis header';
  }
  return { format, staleAt: Number(fields[1]), doc: raw.slice(end + 1) };
}

module.exports = { pack, unpack, isRevision1, MAGIC };
