'use strict';
/*
 * envelope.cjs - the one place `darmok inspect` recognises a darmok/redis
 * cache entry (js/cache/entry.cjs, docs/CACHE.md "The stored entry") around
 * a darmok document.
 *
 * unwrap(bytes) -> null when bytes are a plain darmok document, or
 * { format, fields: [[name, shown value], ...], document: Uint8Array } when
 * they are an entry: inspect prints the fields as the envelope, then the
 * document, read in the entry's format. Bytes that start like an envelope
 * but are not one of this revision throw, saying why.
 */
const { unpack, MAGIC } = require('../cache/entry.cjs');
const { DarmokError } = require('../core/errors.cjs');

const PREFIX = Buffer.from(MAGIC.split('/')[0] + '/', 'latin1'); // "darmok/"

function unwrap(bytes) {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (buf.length < PREFIX.length || !buf.subarray(0, PREFIX.length).equals(PREFIX)) return null;
  const entry = unpack(buf);
  if (typeof entry === 'string') throw new DarmokError('ERR_FORMAT', `not a darmok/redis entry: ${entry}`);
  const stale = entry.staleAt <= Date.now();
  // A time past Date's range (±8.64e15 ms) is shown as its number: the
  // cache reads such an entry as fresh forever (or stale forever).
  const at = Math.abs(entry.staleAt) <= 8.64e15
    ? new Date(entry.staleAt).toISOString()
    : `${entry.staleAt} ms (out of a Date's range)`;
  return {
    format: entry.format,
    fields: [
      ['revision', MAGIC.trim()],
      ['format', entry.format],
      ['staleAt', `${at}${stale ? ' (stale: served only within grace)' : ''}`]
    ],
    document: entry.doc
  };
}

module.exports = { unwrap };
