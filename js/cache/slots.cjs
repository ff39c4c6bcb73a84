'use strict';
/*
 * cache/slots.cjs - a multi-key command on a Redis Cluster, sent as one
 * command per hash slot, all at once (each node's connection pipelines
 * its share), so that a slot whose node fails costs only its own keys.
 * clients.cjs builds the cluster's mget, del, unlink and setMany on
 * it.
 *
 *   readPerSlot(keys, one, withinMs)  -> replies in the order of keys;
 *                                        the keys of a failed slot hold
 *                                        one Error (shared by every
 *                                        failed key of the call)
 *   writePerSlot(keys, one, withinMs) -> { n, error, failed }: n, the sum
 *                                        of the answered slots' replies;
 *                                        error, the one Error of the
 *                                        failed ones (undefined when none
 *                                        failed); failed, the indexes of
 *                                        their keys
 * one(keysOfOneSlot, theirIndexes) sends the command of one slot. Both
 * reject only when every slot failed. A slot that did not answer within
 * withinMs has failed; TRYAGAIN, MOVED and ASK are retried within it.
 */

const calculateSlot = require('cluster-key-slot');

/* keys grouped by hash slot: Map slot -> indexes into keys. */
function bySlot(keys) {
  const groups = new Map();
  for (let i = 0; i < keys.length; i++) {
    const slot = calculateSlot(keys[i]);
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [i]);
    else group.push(i);
  }
  return groups;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/*
 * The cluster replies that mean "this slot is moving, ask again": the
 * first word of an error reply is its code (RESP), so reading it is the
 * protocol, not guessing from a message. node-redis follows MOVED and ASK
 * itself but fails at once on TRYAGAIN (a multi-key command in a slot
 * being migrated, its keys split between two nodes), also when an ASK
 * target answers it; ioredis retries all three, up to its
 * maxRedirections. Retrying the whole command from the start, within the
 * cache's time, covers both.
 */
function isSlotMoving(err) {
  return err instanceof Error && /^(TRYAGAIN|MOVED|ASK)\b/.test(err.message);
}

/* send(), again after TRYAGAIN / MOVED / ASK with a short backoff, until deadline (Date.now() ms). */
async function retryingMoves(send, deadline) {
  for (let backoff = 5; ; backoff = Math.min(backoff * 2, 50)) {
    try {
      return await send();
    } catch (err) {
      const left = deadline - Date.now();
      if (!isSlotMoving(err) || left <= backoff) throw err;
      await sleep(backoff);
    }
  }
}

function slotTimeout(ms) {
  const err = new Error(`no answer from this slot's node within ${ms} ms`);
  err.name = 'TimeoutError';
  return err;
}

/*
 * one() for each slot of keys, all at once -> [{ indexes, reply, error }]
 * per slot, once every slot answered or withinMs passed; never rejects.
 */
function perSlot(keys, one, withinMs = Infinity) {
  const deadline = Date.now() + withinMs;
  const slots = [...bySlot(keys).values()].map((indexes) => ({ indexes, reply: undefined, error: undefined }));
  return new Promise((resolve) => {
    let left = slots.length;
    let timer = null;
    const finish = () => {
      clearTimeout(timer);
      left = -1; // answers that come later are dropped
      resolve(slots);
    };
    for (const slot of slots) {
      const settle = (reply, error) => {
        if (left < 0) return;
        slot.reply = reply;
        slot.error = error;
        if (--left === 0) finish();
      };
      retryingMoves(() => one(slot.indexes.map((i) => keys[i]), slot.indexes), deadline)
        .then((reply) => settle(reply, undefined), (err) => settle(undefined, err || new Error('the command failed')));
    }
    if (Number.isFinite(withinMs)) {
      timer = setTimeout(() => {
        const late = slotTimeout(withinMs);
        for (const slot of slots) if (slot.reply === undefined && slot.error === undefined) slot.error = late;
        finish();
      }, Math.max(1, deadline - Date.now()));
      timer.unref();
    }
  });
}

/*
 * One Error for every failed key of one call, undefined when no slot
 * failed: the slot's own when one failed, an AggregateError of the
 * distinct ones when several did. Thrown when every slot failed.
 */
function failureOf(slots) {
  const errors = slots.filter((s) => s.error !== undefined).map((s) => s.error);
  if (errors.length === 0) return undefined;
  const distinct = [...new Set(errors)];
  const err = distinct.length === 1
    ? distinct[0]
    : new AggregateError(distinct, `${errors.length} of ${slots.length} hash slots failed: ${distinct[0].message}`);
  if (errors.length === slots.length) throw err;
  return err;
}

async function readPerSlot(keys, one, withinMs) {
  const slots = await perSlot(keys, one, withinMs);
  const err = failureOf(slots);
  const out = new Array(keys.length);
  for (const { indexes, reply, error } of slots) {
    for (let j = 0; j < indexes.length; j++) out[indexes[j]] = error === undefined ? reply[j] : err;
  }
  return out;
}

async function writePerSlot(keys, one, withinMs) {
  const slots = await perSlot(keys, one, withinMs);
  const error = failureOf(slots);
  let n = 0;
  const failed = [];
  for (const s of slots) {
    if (s.error === undefined) n += Number(s.reply);
    else failed.push(...s.indexes);
  }
  return { n, error, failed };
}

module.exports = { readPerSlot, writePerSlot };
