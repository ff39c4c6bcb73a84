'use strict';
/*
 * cache/l1.cjs - the in-process tier of darmok/redis: an LRU of entries
 * by Redis key, bounded by count and by the bytes they hold.
 *
 * An entry keeps the document as Redis holds it (the JSON text, or
 * protobuf bytes after the envelope). By default its first hit keeps the
 * tape the core parsed it into in its place (cache.cjs l1Rebuild, counted by
 * resize), from which every hit rebuilds a new instance that its caller
 * may change freely; with `shared`, the first hit's instance is kept and
 * returned to every later hit of the same Class.
 *
 * Invalidations race with reads: a GET sent before another process's SET
 * may answer after that SET's invalidation has arrived here, and its old
 * value must not then enter the L1. So every read takes a ticket (the
 * invalidation clock) before it is sent, and put() refuses an entry whose
 * key, or the whole tier, was invalidated after that ticket.
 */

/* Keys remembered as invalidated, before the tier forgets them and treats any older ticket as stale. */
const RECENT_MAX = 10000;

class L1 {
  /* settings: { maxEntries, maxBytes, ttl (s), shared } (cache/options.cjs). */
  constructor(settings) {
    this.maxEntries = settings.maxEntries;
    this.maxBytes = settings.maxBytes;
    this.shared = settings.shared;
    /* Redis key -> entry, least recently used first (a Map keeps insertion order). */
    this.entries = new Map();
    /* The entry last put or got: the most recently used, when still stored. */
    this.newest = null;
    this.bytes = 0;
    /* The invalidation clock, the tick of the last invalidation of everything, and key -> tick. */
    this.clock = 0;
    this.allAt = 0;
    this.recent = new Map();
  }

  /* What a read takes before it asks Redis, to give put(). */
  ticket() {
    return this.clock;
  }

  /* The entry of full, touched as most recently used, or undefined. */
  get(full) {
    const e = this.entries.get(full);
    // A hot key hit again is the newest already: no reordering.
    if (e === undefined || e === this.newest) return e;
    this.entries.delete(full);
    this.entries.set(full, e);
    this.newest = e;
    return e;
  }

  /*
   * Stores e = { doc, staleAt, graceEnd, createdAt, tags } under full, read
   * or written with ticket; false when an invalidation came after it.
   * The document's size is its length in bytes when put (both formats'
   * documents are bytes, as written and as read back).
   */
  put(full, e, ticket) {
    if (ticket < this.allAt) return false;
    const at = this.recent.get(full);
    if (at !== undefined && at > ticket) return false;
    e.size = e.doc.length + full.length;
    if (e.size > this.maxBytes) return false;
    e.at = Date.now();
    e.value = undefined;
    e.Class = undefined;
    e.tape = null;
    this.drop(full);
    this.entries.set(full, e);
    this.newest = e;
    this.bytes += e.size;
    this.shrink();
    return true;
  }

  /* Entry e of full now holds bytes instead of its document (its kept tape): counted, and the bounds kept. */
  resize(full, e, bytes) {
    if (this.entries.get(full) !== e) return;
    this.bytes += bytes + full.length - e.size;
    e.size = bytes + full.length;
    this.shrink();
  }

  /* Drops the least recently used entries until the tier is within its bounds. */
  shrink() {
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      this.drop(this.entries.keys().next().value);
    }
  }

  drop(full) {
    const e = this.entries.get(full);
    if (e === undefined) return;
    this.entries.delete(full);
    this.bytes -= e.size;
  }

  /* full was changed elsewhere: dropped, and reads that started before now cannot put it back. */
  invalidate(full) {
    this.drop(full);
    this.recent.set(full, ++this.clock);
    if (this.recent.size > RECENT_MAX) this.invalidateAll();
  }

  /* Drops every entry for which drop(full, e) is true; reads in progress cannot put anything back. */
  invalidateWhere(drop) {
    for (const [full, e] of this.entries) if (drop(full, e)) this.drop(full);
    this.allAt = ++this.clock;
    this.recent.clear();
  }

  invalidateAll() {
    this.entries.clear();
    this.bytes = 0;
    this.allAt = ++this.clock;
    this.recent.clear();
  }

  get size() {
    return this.entries.size;
  }
}

module.exports = { L1 };
