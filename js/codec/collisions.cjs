'use strict';
/*
 * collisions.cjs - refuse Map and Set keys crafted to collide in the
 * engine's hash table.
 *
 * V8 hashes a number or BigInt key of a Map or Set with a fixed function,
 * not seeded per process as its string hashes are (objects.cc
 * Object::GetSimpleHash): an int32 value through ComputeUnseededHash,
 * another double through ComputeLongHash of its bits, a BigInt through
 * ComputeLongHash of its lowest 64-bit digit (its sign and higher digits
 * are left out). The table is an OrderedHashTable: capacity a power of two
 * from 4, doubled when full, capacity / 2 buckets chosen by the low bits of
 * the hash, each a chain that an insertion walks. So a document can name
 * keys that all land in one bucket, and building the Map costs the square
 * of its size.
 *
 * A KeyGuard follows one Map or Set as it is built: it keeps the hashes of
 * its number and BigInt keys, counts how long the chain each insertion
 * walks would be in V8's table at that size (recounting at each doubling,
 * so linear in all), and throws ERR_FORMAT once the chains walked exceed
 * CHAIN_FACTOR per entry (plus CHAIN_SLACK): ordinary keys walk fewer than
 * 2 per entry. Other keys hash with the process's seed, or by identity,
 * and are not counted. Were V8 to change these functions, the guard would
 * stop seeing collisions (refusing nothing it did not before), not refuse
 * ordinary keys.
 */

const { pathError } = require('../core/errors.cjs');

/* Chains walked per entry, past CHAIN_SLACK, from which a Map or Set is refused. */
const CHAIN_FACTOR = 8;
const CHAIN_SLACK = 1024;
/*
 * Number keys counted before the guard starts: chains that short cost
 * nothing, so a Map or Set of at most QUIET entries needs no guard.
 */
const QUIET = 64;

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE ? 0 : 1;
const HI = LITTLE ? 1 : 0;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const U64 = (1n << 64n) - 1n;

/* V8's ComputeUnseededHash of the 32 bits of key. */
function intHash(key) {
  let h = key >>> 0;
  h = (~h + (h << 15)) >>> 0;
  h = (h ^ (h >>> 12)) >>> 0;
  h = (h + (h << 2)) >>> 0;
  h = (h ^ (h >>> 4)) >>> 0;
  h = Math.imul(h, 2057) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h & 0x3fffffff;
}

/* V8's ComputeLongHash of the 64 bits hi:lo, in 32-bit halves. */
function longHash(hi, lo) {
  // h = ~h + (h << 18)
  let nhi = ~hi >>> 0;
  let nlo = ~lo >>> 0;
  let shi = ((hi << 18) | (lo >>> 14)) >>> 0;
  let slo = (lo << 18) >>> 0;
  let sum = nlo + slo;
  lo = sum >>> 0;
  hi = (nhi + shi + (sum > 0xffffffff ? 1 : 0)) >>> 0;
  // h ^= h >> 31
  lo = (lo ^ ((lo >>> 31) | (hi << 1))) >>> 0;
  hi = (hi ^ (hi >>> 31)) >>> 0;
  // h *= 21, as h + (h << 2) + (h << 4)
  const h2hi = ((hi << 2) | (lo >>> 30)) >>> 0;
  const h2lo = (lo << 2) >>> 0;
  const h4hi = ((hi << 4) | (lo >>> 28)) >>> 0;
  const h4lo = (lo << 4) >>> 0;
  sum = lo + h2lo + h4lo;
  lo = sum >>> 0;
  hi = (hi + h2hi + h4hi + Math.floor(sum / 4294967296)) >>> 0;
  // h ^= h >> 11
  lo = (lo ^ ((lo >>> 11) | (hi << 21))) >>> 0;
  hi = (hi ^ (hi >>> 11)) >>> 0;
  // h += h << 6
  shi = ((hi << 6) | (lo >>> 26)) >>> 0;
  slo = (lo << 6) >>> 0;
  sum = lo + slo;
  lo = sum >>> 0;
  hi = (hi + shi + (sum > 0xffffffff ? 1 : 0)) >>> 0;
  // h ^= h >> 22
  lo = (lo ^ ((lo >>> 22) | (hi << 10))) >>> 0;
  return lo & 0x3fffffff;
}

/* The hash V8 gives the Map or Set key k, or -1 when it is seeded or by identity. */
function engineHash(k) {
  if (typeof k === 'number') {
    if (k !== k) return 0x3fffffff; // every NaN is one key
    if (k >= INT32_MIN && k <= INT32_MAX && (k | 0) === k) return intHash(k | 0); // -0 too
    f64[0] = k;
    return longHash(f64Words[HI], f64Words[LO]);
  }
  if (typeof k === 'bigint') {
    if (k === 0n) return 0;
    const d = (k < 0n ? -k : k) & U64;
    return longHash(Number(d >> 32n), Number(d & 0xffffffffn));
  }
  return -1;
}

class KeyGuard {
  constructor() {
    this.hashes = []; //  of the number and BigInt keys added so far
    this.counts = null; // entries per bucket, at `buckets` buckets
    this.buckets = 0;
    this.walked = 0; //   chain links walked so far (counted from QUIET keys on)
    this.next = -1; //    the hash of the key being added, -1: not counted
  }

  /* m.set(k, x) for the Map m, or throws ERR_FORMAT first (see check). */
  set(m, k, x) {
    const size = m.size;
    this.check(k, size);
    m.set(k, x);
    if (m.size !== size) this.added();
  }

  /* s.add(k) for the Set s, or throws ERR_FORMAT first (see check). */
  add(s, k) {
    const size = s.size;
    this.check(k, size);
    s.add(k);
    if (s.size !== size) this.added();
  }

  /*
   * Before key k goes into a Map or Set of `size` entries: throws
   * ERR_FORMAT when the chains walked so far, this one's included, are
   * too long. added() counts it once it is in as a new entry.
   */
  check(k, size) {
    const h = engineHash(k);
    this.next = h;
    if (h < 0 || this.hashes.length < QUIET) return;
    let cap = 4;
    while (cap <= size) cap *= 2;
    const buckets = cap / 2;
    if (buckets !== this.buckets) this.recount(buckets);
    this.walked += this.counts[h & (buckets - 1)];
    if (this.walked > CHAIN_FACTOR * size + CHAIN_SLACK) {
      throw pathError('ERR_FORMAT', `the number or BigInt keys of this Map or Set are crafted to collide in the engine's hash table (${size} entries in, ${this.walked} chain links walked)`);
    }
  }

  added() {
    const h = this.next;
    if (h < 0) return;
    this.hashes.push(h);
    if (this.counts !== null) this.counts[h & (this.buckets - 1)]++;
  }

  recount(buckets) {
    const counts = new Uint32Array(buckets);
    const hashes = this.hashes;
    const mask = buckets - 1;
    for (let i = 0; i < hashes.length; i++) counts[hashes[i] & mask]++;
    this.counts = counts;
    this.buckets = buckets;
  }
}

module.exports = { KeyGuard, QUIET };
