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

/*
 * An entry read back (a string or a Buffer) -> { format, staleAt, doc }, doc
 * the document as a string or a Buffer view of the entry's bytes; or a
 * string saying why it is not an entry of revision 1.
 */
function unpack(raw) {
  let head;
  let end;
  if (typeof raw === 'string') {
    end = raw.indexOf('\n');
    if (end < 0 || end > HEADER_MAX) return 'no darmok/redis header';
    head = raw.slice(0, end);
  } else {
    end = raw.indexOf(NEWLINE);
    if (end < 0 || end > HEADER_MAX) return 'no darmok/redis header';
    head = raw.toString('latin1', 0, end);
  }
  if (!head.startsWith(MAGIC)) {
    return head.startsWith('darmok/') ? `an envelope revision this process does not read (${head.split(' ')[0]})` : 'no darmok/redis header';
  }
  const fields = head.slice(MAGIC.length).split(' ');
  const format = fields[0];
  const staleAt = Number(fields[1]);
  if ((format !== 'json' && format !== 'protobuf') || !/^[0-9]{1,16}$/.test(fields[1])) {
    return 'a malformed darmok/redis header';
  }
  const doc = typeof raw === 'string' ? raw.slice(end + 1) : raw.subarray(end + 1);
  return { format, staleAt, doc };
}

module.exports = { pack, unpack, header, MAGIC };
