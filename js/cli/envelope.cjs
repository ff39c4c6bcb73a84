'use strict';
/*
 * envelope.cjs - the one place `darmok inspect --redis` recognises a cache
 * entry's envelope around a darmok document (darmok/redis, docs/CACHE.md).
 *
 * unwrap(bytes) -> null when bytes are a plain darmok document, or
 * { fields: [[name, shown value], ...], document: Uint8Array } when they are
 * an entry: inspect prints the fields as the envelope, then the document.
 * The darmok/redis envelope is not merged yet, so no entry is recognised:
 * every value is read as a plain document.
 */
function unwrap(bytes) { // eslint-disable-line no-unused-vars
  return null;
}

module.exports = { unwrap };
