'use strict';
/*
 * cache/tags.cjs - tags, invalidated lazily, as BentoCache does:
 * deleteByTag(tag) writes the time of the deletion under the tag's key
 * (O(tags) work at the call); an entry carries its tags and the time it
 * was written in its header (entry.cjs: ` c=<ms> t=a,b`), and a read
 * of it from Redis looks up its tags' keys: an entry written at or before
 * one of its tags' deletion is a miss. The L1 tiers drop tagged entries
 * when the bus brings the deletion (cache/bus.cjs).
 *
 * A tag's key is prefix + TAG_INFIX + tag, prefix the namespace's: tags
 * belong to the namespace that wrote the entry. The keys have no expiry
 * (an entry of any ttl may still carry the tag); clear() removes them.
 * Times are compared across processes: servers' clocks in sync (NTP), as
 * for staleAt.
 */

const TAG_INFIX = 'darmok-tag:';

/* The header fields of an entry with tags written at createdAt (ms): ' c=… t=…', or '' without tags. */
function tagFields(tags, createdAt) {
  return tags === undefined || tags === null || tags.length === 0 ? '' : ` c=${createdAt} t=${tags.join(',')}`;
}

function tagKey(prefix, tag) {
  return prefix + TAG_INFIX + tag;
}

/*
 * Whether an entry written at createdAt is invalidated, given the values
 * of its tags' keys (strings of ms, or null for a tag never deleted).
 */
function invalidatedBy(createdAt, times) {
  for (const t of times) if (t !== null && t !== undefined && Number(t) >= createdAt) return true;
  return false;
}

module.exports = { TAG_INFIX, tagFields, tagKey, invalidatedBy };
