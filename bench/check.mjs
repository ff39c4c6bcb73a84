/*
 * check.mjs - is a decoded graph the original graph?
 *
 * Walks the original and the decoded value side by side and lists what
 * differs: a prototype (at every level: Foo must come back a Foo, a Map a
 * Map), a value, a missing or extra own enumerable property, a Date's time,
 * a Map's or Set's entries in order, and identity - an object the original
 * reaches twice (a shared reference, a cycle) must be one object in the
 * decoded graph too, and two distinct originals must not become one.
 *
 * Iterative (explicit stack), so a deep workload cannot overflow the JS
 * stack here. Stops collecting after `limit` differences.
 */

function describeProto(v) {
  const p = Object.getPrototypeOf(v);
  if (p === null) return 'null-prototype';
  const c = p.constructor;
  return typeof c === 'function' && c.name ? c.name : 'anonymous';
}

function show(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v !== null && typeof v === 'object') return describeProto(v);
  return String(v);
}

/* `.children[1].children[1].children[1]` -> `(.children[1])×3`. */
function shortPath(path) {
  if (!path) return '(root)';
  return path.replace(/(\.[\w$]+\[\d+\]|\.[\w$]+)\1{2,}/g, (m, seg) => `(${seg})×${m.length / seg.length}`);
}

/*
 * Returns { ok, problems: string[] (at most `limit`), count }. Never throws
 * on odd decoded values (getters that throw are reported, not raised).
 */
export function compareGraphs(original, decoded, limit = 3) {
  // Extra properties are listed after every other kind of difference: a
  // dropped field or a lost prototype says more than a leftover marker.
  const severe = [];
  const extra = [];
  let count = 0;
  const report = (path, what) => {
    count++;
    const list = what === 'extra property' ? extra : severe;
    if (list.length < limit) list.push(`${shortPath(path)}: ${what}`);
  };
  const seenA = new Map(); // original object -> decoded object
  const seenB = new Map(); // decoded object -> original object
  const stack = [[original, decoded, '']];
  while (stack.length > 0 && count < 1000) {
    const [a, b, path] = stack.pop();
    const ta = typeof a;
    if (ta !== 'object' || a === null) {
      if (!Object.is(a, b)) report(path, `expected ${show(a)}, got ${show(b)}`);
      continue;
    }
    if (typeof b !== 'object' || b === null) {
      report(path, `expected ${show(a)}, got ${show(b)}`);
      continue;
    }
    if (seenA.has(a)) {
      if (seenA.get(a) !== b) report(path, 'a shared reference / cycle came back as a copy');
      continue;
    }
    if (seenB.has(b)) {
      report(path, 'two distinct objects came back as one');
      continue;
    }
    seenA.set(a, b);
    seenB.set(b, a);
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) {
      report(path, `expected ${describeProto(a)}, got ${describeProto(b)}`);
      // Still compare the fields: the report says what else was lost.
    }
    if (a instanceof Date) {
      if (!(b instanceof Date) || !Object.is(a.getTime(), b.getTime())) {
        report(path, `Date ${a.toISOString()} came back as ${b instanceof Date ? b.toISOString() : show(b)}`);
      }
      continue;
    }
    if (a instanceof Map) {
      if (!(b instanceof Map)) continue; // prototype already reported
      if (a.size !== b.size) { report(path, `Map size ${a.size} came back as ${b.size}`); continue; }
      const ea = [...a];
      const eb = [...b];
      for (let i = ea.length - 1; i >= 0; i--) {
        stack.push([ea[i][1], eb[i][1], `${path}.get(${show(ea[i][0])})`]);
        stack.push([ea[i][0], eb[i][0], `${path}.keys[${i}]`]);
      }
      continue;
    }
    if (a instanceof Set) {
      if (!(b instanceof Set)) continue;
      if (a.size !== b.size) { report(path, `Set size ${a.size} came back as ${b.size}`); continue; }
      const ea = [...a];
      const eb = [...b];
      for (let i = ea.length - 1; i >= 0; i--) stack.push([ea[i], eb[i], `${path}.set[${i}]`]);
      continue;
    }
    if (Array.isArray(a)) {
      if (!Array.isArray(b)) continue;
      if (a.length !== b.length) { report(path, `length ${a.length} came back as ${b.length}`); continue; }
      for (let i = a.length - 1; i >= 0; i--) stack.push([a[i], b[i], `${path}[${i}]`]);
      continue;
    }
    const ka = Object.keys(a);
    let kb;
    try {
      kb = Object.keys(b);
    } catch (e) {
      report(path, `cannot list keys: ${e.message}`);
      continue;
    }
    const inB = new Set(kb);
    const inA = new Set(ka);
    for (const k of kb) if (!inA.has(k)) report(`${path}.${k}`, 'extra property');
    for (let i = ka.length - 1; i >= 0; i--) {
      const k = ka[i];
      if (!inB.has(k)) { report(`${path}.${k}`, `missing (was ${show(a[k])})`); continue; }
      stack.push([a[k], b[k], `${path}.${k}`]);
    }
  }
  return { ok: count === 0, problems: [...severe, ...extra].slice(0, limit), count };
}
