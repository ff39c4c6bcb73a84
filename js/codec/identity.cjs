'use strict';
/*
 * identity.cjs - the objects one encode walk has met, by reference index:
 * every object with identity takes the next index as its op is written,
 * and an object met again is written as T_REF to it. Shared references
 * and cycles fall out of this one table; nothing tracks paths.
 *
 * The first FEW_OBJECTS objects of a walk are kept in an array, found by
 * a scan: a Map or Set starts small at every walk and regrows, which
 * costs more than the scan on graphs of a few dozen objects. The array
 * keeps its FEW_OBJECTS slots across walks, emptied by storing null:
 * setting its length would be a runtime call, and the pushes after it
 * would allocate its backing store again at every walk. Past that
 * every object goes into a Set, in index order: one add, whose size tells
 * whether it was there, is one hash operation where a Map's get and set
 * are two, and its table is two words an entry where a Map's is three.
 * An object met again in the Set is written as T_REF with its index left
 * for later (unless it is one of the first FEW_OBJECTS): resolve() finds
 * the indexes in one pass over the Set once the walk is done, so a graph
 * without sharing never looks one up.
 */

const T = require('../core/tape.cjs');

const FEW_OBJECTS = 32;

/* The identity table of a walk that writes its tape with w (a TapeWriter); Encoder extends it. */
class Identities {
  constructor(w) {
    this.w = w;
    /* objects 0..min(next, FEW_OBJECTS)-1 by index; null past them */
    this.few = [];
    for (let i = 0; i < FEW_OBJECTS; i++) this.few.push(null);
    /* every object with an index, in index order, once next > FEW_OBJECTS */
    this.seen = new Set();
    /* pairs (object, tape offset of a T_REF's index) for resolve() */
    this.later = [];
    /* the next reference index */
    this.next = 0;
  }

  /*
   * True when the object v was met before in this walk: a T_REF to it is
   * written. Else v is new, and must take() its index (or be forgotten)
   * before any other object is met: past FEW_OBJECTS it is in the Set
   * already, at the position of the next index.
   */
  met(v) {
    if (this.next > FEW_OBJECTS) {
      const seen = this.seen;
      const size = seen.size;
      seen.add(v);
      if (seen.size !== size) return false;
      this.again(v);
      return true;
    }
    const i = this.fewIndex(v);
    if (i < 0) return false;
    this.w.opU32(T.T_REF, i);
    return true;
  }

  /*
   * Give v, which met() found new, the next referenceable index (call as
   * its op is written, with no other object met since: the Set's order is
   * the indexes').
   */
  take(v) {
    const i = this.next++;
    if (i < FEW_OBJECTS) this.few[i] = v;
    else if (i === FEW_OBJECTS) {
      const seen = this.seen;
      const few = this.few;
      for (let j = 0; j < FEW_OBJECTS; j++) seen.add(few[j]);
      seen.add(v);
    }
  }

  /* v, which met() found new, takes no index after all (a boxed primitive is written as its value). */
  forget(v) {
    if (this.next > FEW_OBJECTS) this.seen.delete(v);
  }

  /* The index of v among the first FEW_OBJECTS, or -1. */
  fewIndex(v) {
    const few = this.few;
    const n = this.next < FEW_OBJECTS ? this.next : FEW_OBJECTS;
    for (let i = 0; i < n; i++) if (few[i] === v) return i;
    return -1;
  }

  /* T_REF to v, met before and in the Set: its index now when it is one of
     the first FEW_OBJECTS, else once the walk is done (resolve). */
  again(v) {
    const i = this.fewIndex(v);
    this.w.opU32(T.T_REF, i >= 0 ? i : 0);
    if (i < 0) this.later.push(v, this.w.pos - 4);
  }

  /*
   * Write the index of every T_REF left by again(), once the walk is done:
   * an object's index is its position in the Set, so one pass over the
   * Set, as far as the last object wanted, finds them all.
   */
  resolve() {
    const later = this.later;
    if (later.length === 0) return;
    const want = new Map(); // object -> index, -1 until found
    for (let j = 0; j < later.length; j += 2) want.set(later[j], -1);
    let left = want.size;
    let i = 0;
    for (const o of this.seen) {
      if (want.has(o)) {
        want.set(o, i);
        if (--left === 0) break;
      }
      i++;
    }
    const w = this.w;
    for (let j = 0; j < later.length; j += 2) w.patchU32(later[j + 1], want.get(later[j]));
  }

  /* Forget every object, for the next walk. */
  forgetAll() {
    // Nulls, so that no object of this walk is kept alive by the next.
    const few = this.few;
    const n = this.next < FEW_OBJECTS ? this.next : FEW_OBJECTS;
    for (let i = 0; i < n; i++) few[i] = null;
    // Setting an array's length is a runtime call, even on an empty array.
    if (this.later.length !== 0) this.later.length = 0;
    // A new Set, not clear(): V8 allocates a Set's next table in the old
    // generation once its table is there (a cleared table idle between
    // walks is soon promoted), so every regrowth of a long-lived Set would
    // be an old-generation allocation, its entries written through the
    // write barrier, and its garbage left to full collections.
    if (this.next > FEW_OBJECTS) this.seen = new Set();
    this.next = 0;
  }
}

module.exports = { Identities, FEW_OBJECTS };
