'use strict';
/*
 * shapes.cjs - code made at run time for one class: how its instances are
 * written to a tape (encode) and built from one (decode), once the names
 * of their fields are known.
 *
 * A class's fields are not declared anywhere: they are whatever own
 * enumerable properties its instances have. So the first instances of a
 * class that a process encodes (or decodes) are handled by the generic
 * loop, and the keys the SHAPE_AFTER-th had, in order, become the class's
 * shape for that direction: a function made with new Function, specialized
 * to those keys.
 *
 *   encode  compares Object.keys of the instance with its constants (the
 *           keys are internalized strings: pointer compares), writes the
 *           instance's op, class key, version, count and every key as
 *           constant bytes, and reads each field with a constant key (one
 *           monomorphic load). Any other key list: the generic loop.
 *   decode  reads the keys from the tape, compares each with its constant,
 *           and stores the value with a constant key into an object made
 *           by `new` of an empty function whose prototype is the class's:
 *           every instance gets one hidden class with in-object fields.
 *           At the first key that differs (another order, a field more or
 *           less: hand-written JSON, an older writer) it hands over to the
 *           generic loop from there.
 *
 * Either way the bytes and the objects are exactly those of the generic
 * loops; shapes only take less time. A class with a naming (naming.cjs)
 * has its wire names in its shapes' constants: the bytes a shape writes
 * and matches are the wire names, the properties it reads and sets the
 * class's own field names. A decode shape fixes which field each wire name
 * sets as the naming's table had it, so the plan drops it when the table
 * learns a field (registry.cjs reshape, Naming onLearn). Keys are put into the source as
 * JSON.stringify literals (a JSON string is a JavaScript string literal),
 * never as identifiers, so no key can change the code.
 *
 * The code made here uses of the objects it is given only the members that
 * the opening comments of TapeWriter (tape-writer.cjs) and Encoder
 * (encode.cjs) list for encode, of TapeReader (tape-reader.cjs) and Decoder
 * (decode.cjs) for decode; key references are numbered by TapeReader alone.
 *
 * Without code generation (a Content-Security-Policy without
 * 'unsafe-eval', node --disallow-code-generation-from-strings) a class has
 * no shape (false) and the generic loops do all the work. A shape that
 * keeps missing (SHAPE_MAX_MISSES) is dropped, and the next instance gives
 * the class a new one.
 */

const T = require('../core/tape.cjs');
const { TapeWriter } = require('../core/tape-writer.cjs');
const { SHORT_MAX } = require('../core/tape-reader.cjs');
const { addSegment } = require('../core/errors.cjs');

const SHAPE_MAX_KEYS = 64;
const SHAPE_MAX_KEY_LENGTH = 256;
const SHAPE_MAX_MISSES = 64;
/*
 * Instances of a class handled by the generic loop before its shape is
 * made: making one costs a compile, which would land on the first call
 * after import; a class met this often is worth it.
 */
const SHAPE_AFTER = 8;
/*
 * Generic instances after which a class whose shape was dropped, or whose
 * SHAPE_AFTER-th instance could have none (no keys, too many, too long),
 * tries again: compiling stays rare whatever the instances look like.
 */
const SHAPE_RETRY = 1024;

/* Whether keys can have a shape at all. */
function shapeable(keys) {
  if (keys.length === 0 || keys.length > SHAPE_MAX_KEYS) return false;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i].length > SHAPE_MAX_KEY_LENGTH) return false;
  }
  return true;
}

/* new Function(...names)(...values), or null where code cannot be made. */
function compile(source, names, values) {
  try {
    return new Function(...names, source)(...values);
  } catch {
    return null;
  }
}

/*
 * Statements that write the constant bytes u8 at w.pos (room reserved
 * first): one store per byte while short, else a set() of u8, which is
 * then passed to the code as `name` (names, values: the code's parameters).
 */
function constantBytes(u8, name, names, values) {
  let code = `p = w.pos; if (p + ${u8.length} > w.buf.length) w.grow(p + ${u8.length}); b = w.buf;`;
  if (u8.length <= 24) {
    for (let j = 0; j < u8.length; j++) code += ` b[p + ${j}] = ${u8[j]};`;
  } else {
    code += ` b.set(${name}, p);`;
    names.push(name);
    values.push(u8);
  }
  return `${code} w.pos = p + ${u8.length};`;
}

/* The tape bytes of what writes into a fresh TapeWriter. */
function tapeBytes(write) {
  const w = new TapeWriter(64);
  write(w);
  return w.buf.slice(0, w.pos);
}

/*
 * True when for-in over an instance of proto lists inherited keys: the
 * chain has enumerable string keys (or cannot be asked: a Proxy's trap
 * threw).
 */
function inheritsEnumerable(proto) {
  try {
    for (const key in Object.create(proto)) return true;
    return false;
  } catch {
    return true;
  }
}

/*
 * The encode shape of plan's instances with these own enumerable keys:
 * { plan, keys, misses, write(e, w, v) } where write writes instance v
 * (the caller entered its depth) and returns true, or writes nothing and
 * returns false when v's own enumerable keys (Object.keys) are not the
 * shape's keys. Only for plans written as their own fields (plan.simple).
 * null when these keys cannot have a shape, false when no code can be made.
 *
 * The keys are matched with for-in, which reads V8's enum cache where
 * Object.keys copies it into a new array for every instance. for-in lists
 * an object's own enumerable keys in Object.keys order, then the
 * enumerable keys of its prototype chain that no own key hides; a Proxy's,
 * as its ownKeys trap orders them, with keys it reports but does not have
 * among them. So the first n keys must be the shape's and each own, and
 * every key after them must not be own.
 * V8 folds hasOwnProperty of a for-in key into its enum-cache check, so on
 * an ordinary object those checks cost nearly nothing. But for-in over a
 * chain with enumerable keys (an ES5-style class: methods assigned to the
 * prototype) collects them all for every instance, slower than
 * Object.keys: a class whose chain has enumerable keys when its shape is
 * made is matched with Object.keys (inheritsEnumerable).
 */
function makeEncodeShape(plan, keys) {
  if (!shapeable(keys)) return null;
  const n = keys.length;
  const head = tapeBytes((w) => {
    w.op(T.T_INSTANCE);
    w.str(plan.key);
    w.u32(plan.version);
    w.u32(n);
  });
  const names = ['addSegment', 'K', 'hasOwn'];
  const values = [addSegment, keys.slice(), Object.prototype.hasOwnProperty];
  let match = '';
  if (inheritsEnumerable(plan.proto)) {
    match = `const vkeys = Object.keys(v);
  if (vkeys.length !== ${n}`;
    for (let i = 0; i < n; i++) match += ` || vkeys[${i}] !== ${JSON.stringify(keys[i])}`;
    match += ') return false;';
  } else {
    match = `let j = 0;
  for (const key in v) {
    if (j < ${n}) {
      if (key !== K[j] || !hasOwn.call(v, key)) return false;
      j++;
    } else if (hasOwn.call(v, key)) return false;
  }
  if (j !== ${n}) return false;`;
  }
  const naming = plan.naming;
  let body = '';
  for (let i = 0; i < n; i++) {
    const k = JSON.stringify(keys[i]);
    const bytes = tapeBytes((w) => w.str(naming === null ? keys[i] : naming.wire(keys[i])));
    // e.skipped: functions and symbols are left out (or throw, strict).
    body += `      x = v[${k}];
      if (!e.skipped(x)) { ${constantBytes(bytes, `k${i}`, names, values)} e.value(x); count++; }
      i = ${i + 1};
`;
  }
  const head_ = constantBytes(head, 'head', names, values);
  const source = `'use strict';
return function write(e, w, v) {
  ${match}
  let p, b;
  ${head_}
  const at = w.pos - 4;
  let i = 0, count = 0, x;
  try {
${body}  } catch (err) {
    throw addSegment(err, K[i]);
  }
  if (count !== ${n}) w.patchU32(at, count);
  return true;
};`;
  const write = compile(source, names, values);
  return write === null ? false : { plan, keys, misses: 0, write };
}

/*
 * The decode shape of plan's instances with these keys as read (wire
 * names; null and false as for makeEncodeShape): { plan, keys, misses, epoch, build(d, r, n),
 * onChain() } where onChain tells whether a key is on the prototype chain and build makes the
 * instance whose n fields follow on reader r (d: the Decoder: d.take,
 * d.value(), d.shapeMissed for the hand-over). The decoder runs it only
 * while no key is on the prototype chain (decode.cjs shapeFits), and then
 * first has keeper() make `kept`: an instance with every key, undefined,
 * that lives as long as the shape. Without it, a full GC that finds no
 * decoded instance left frees their hidden class, and V8 throws build's
 * optimized code away.
 */
function makeDecodeShape(plan, wires) {
  if (!shapeable(wires)) return null;
  // keys: the fields the wire names set (shape.keys, for the hand-over).
  const keys = plan.naming === null ? wires : wires.map((wire) => plan.naming.field(wire));
  let body = '';
  let blank = '';
  let onChain = 'false';
  for (let i = 0; i < keys.length; i++) {
    const k = JSON.stringify(keys[i]);
    const wk = JSON.stringify(wires[i]);
    onChain += ` || ${k} in proto`;
    const read = `{ k = r.key(); if (k !== ${wk}) break fast; }`;
    const bytes = tapeBytes((w) => w.str(wires[i]));
    if (bytes.length <= 4 + SHORT_MAX && (bytes[0] & T.STR_ASCII) !== 0) {
      // A key written in full (not a key reference) is matched on its
      // tape bytes, header included: no string made or looked up. With
      // key references (protobuf) it takes its number as r.key() would
      // (r.keyRead), and a reference to it compares with one pointer.
      let same = `b[p] === ${bytes[0]}`;
      for (let j = 1; j < bytes.length; j++) same += ` && b[p + ${j}] === ${bytes[j]}`;
      body += `        p = r.pos;\n`;
      body += `        if (!raw && (k = r.keyRefAt(p)) !== null) {\n`;
      body += `          r.pos = p + 4;\n`;
      body += `          if (k !== ${wk}) break fast;\n`;
      body += `        } else if (${same}) {\n`;
      body += `          r.pos = p + ${bytes.length};\n`;
      body += `          if (!raw) r.keyRead(${wk});\n`;
      body += `        } else ${read}\n`;
    } else {
      body += `        ${read}\n`;
    }
    // A class hook inside the value (an older version's migrate) may have
    // changed prototypes: the rest of the instance goes field by field.
    body += `        x = d.value(); if (d.epoch !== epoch) return d.shapeResume(shape, o, ${i}, n, x);\n`;
    body += `        o[${k}] = x; i = ${i + 1};\n`;
    blank += ` o[${k}] = undefined;`;
  }
  const source = `'use strict';
function Instance() {}
Instance.prototype = proto;
shape.keeper = function keeper() { const o = new Instance();${blank} return o; };
// One constant-key check each: V8 caches a miss against the chain's maps.
shape.onChain = function onChain() { return ${onChain}; };
return function build(d, r, n) {
  const o = new Instance();
  d.take(o);
  let i = 0, k = null, p = 0, x;
  const epoch = d.epoch;
  // Without key references every key is written in full (JSON tapes).
  const raw = !r.hasKeyRefs();
  const b = r.buf;
  if (n === ${keys.length}) {
    try {
      fast: {
${body}        return o;
      }
    } catch (err) {
      throw addSegment(err, keys[i]);
    }
  }
  return d.shapeMissed(shape, o, i, n, k);
};`;
  const shape = { plan, keys, misses: 0, epoch: 0, build: null, keeper: null, kept: null, onChain: null };
  shape.build = compile(source, ['proto', 'keys', 'shape', 'addSegment'], [plan.proto, keys, shape, addSegment]);
  return shape.build === null ? false : shape;
}

/* What a plan's count of generic instances restarts from (SHAPE_RETRY). */
const RESTART = SHAPE_AFTER - SHAPE_RETRY;

/*
 * Each direction keeps its shape in two fields of a plan (registry.cjs),
 * named here rather than passed as strings: plan.encodeShape and
 * plan.encodeSeen, plan.decodeShape and plan.decodeSeen.
 *
 * offer...: after an instance of plan went through the generic loop with
 * these keys, the plan gets a shape when it is due, or its count restarts
 * when the keys cannot have one (make returned null).
 */
function offerEncodeShape(plan, keys) {
  if (plan.encodeShape !== null || ++plan.encodeSeen < SHAPE_AFTER) return;
  if ((plan.encodeShape = makeEncodeShape(plan, keys)) === null) plan.encodeSeen = RESTART;
}

function offerDecodeShape(plan, keys) {
  if (plan.decodeShape !== null || ++plan.decodeSeen < SHAPE_AFTER) return;
  if ((plan.decodeShape = makeDecodeShape(plan, keys)) === null) plan.decodeSeen = RESTART;
}

/* Count a miss of shape (current: its plan's shape now); whether it is to be dropped. */
function dropsAfterMiss(shape, current) {
  return ++shape.misses === SHAPE_MAX_MISSES && current === shape;
}

/* ...Missed: a miss counted; after too many the shape is dropped and its plan's count restarts. */
function encodeShapeMissed(shape) {
  const plan = shape.plan;
  if (dropsAfterMiss(shape, plan.encodeShape)) { plan.encodeShape = null; plan.encodeSeen = RESTART; }
}

function decodeShapeMissed(shape) {
  const plan = shape.plan;
  if (dropsAfterMiss(shape, plan.decodeShape)) { plan.decodeShape = null; plan.decodeSeen = RESTART; }
}

module.exports = {
  offerEncodeShape, encodeShapeMissed, offerDecodeShape, decodeShapeMissed, SHAPE_AFTER, SHAPE_RETRY, SHAPE_MAX_MISSES
};
