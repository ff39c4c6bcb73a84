/*
 * workloads.mjs - the object graphs the benchmarks round-trip.
 *
 * Every workload is built from classes with methods, by a model function
 * that takes the peer's `register(Class, nested)` hook: a peer such as
 * darmok or tanagra returns its own constructor (a Proxy, a decorated
 * class) and the workload builds its instances through that, exactly as an
 * application would. So each child process defines fresh classes, registers
 * them with one peer only, and no registry is shared between peers.
 *
 * The data is deterministic: one seeded PRNG per workload, no clock, no
 * Math.random, so every peer and every run sees the same bytes to encode.
 *
 * A model also carries a small schema (field -> Date / class / array of class
 * / Map of class) for the one peer that needs types spelled out
 * (class-transformer); the other peers ignore it.
 */

/*
 * xorshift32 (Marsaglia 2003), seeded; returns floats in [0, 1). The state
 * must never be 0, hence the `|| 1`.
 */
export function makeRng(seed) {
  let s = (seed >>> 0) || 1;
  const next = () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
  return {
    next,
    int(lo, hi) { return lo + Math.floor(next() * (hi - lo + 1)); },
    pick(list) { return list[Math.floor(next() * list.length)]; },
    // A timestamp between 2019 and 2025, whole milliseconds.
    date() { return new Date(Date.UTC(2019, 0, 1) + Math.floor(next() * 6 * 365 * 86400000)); },
  };
}

// Words for titles and bodies. A few are non-ASCII: Latin-1 accents, CJK and
// one astral-plane emoji (a surrogate pair in JS), so UTF-8 paths get work.
const WORDS = [
  'redis', 'cache', 'object', 'graph', 'prototype', 'class', 'instance', 'map',
  'date', 'bytes', 'round', 'trip', 'encode', 'decode', 'shared', 'reference',
  'the', 'a', 'of', 'and', 'with', 'for', 'every', 'quick', 'brown', 'fox',
  'latency', 'throughput', 'memory', 'heap', 'tape', 'core', 'value', 'field',
  'café', 'naïve', 'Zürich', 'façade', 'über', 'señor', '東京', '日本語', 'données', '🚀',
];
const TAGS = ['node', 'redis', 'wasm', 'json', 'perf', 'cache', 'c', 'api', 'graph', 'bench', 'v8', 'tips'];
const FIRST = ['Ada', 'Grace', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Frances', 'Zoë', 'José'];
const LAST = ['Lovelace', 'Hopper', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie', 'Allen', 'Müller', 'Núñez'];

/*
 * Strings are made flat, by join(): a string built with += is a rope (a
 * tree of V8 ConsStrings) that the first call reading its characters
 * flattens, a copy. Strings read from a database, a socket or JSON.parse
 * are flat, and the first-call figure is meant to be the cold JIT, not a
 * one-time flattening of the test data (on 10,000 Posts about 80 of the
 * ~200 ms of darmok's first walk).
 */
function words(rng, minChars) {
  const parts = [];
  let length = 0;
  while (length < minChars) {
    const word = (length ? ' ' : '') + rng.pick(WORDS);
    parts.push(word);
    length += word.length;
    if (rng.next() < 0.08) {
      parts.push('.');
      length++;
    }
  }
  return parts.join('');
}

/* "first last", flat (see words). */
function fullName(first, last) {
  return [first, last].join(' ');
}

/* ---- the tanagra article's model: Foo { Bar, Bar, Map<Baz> } ---------------- */

export function defineFooModel(register) {
  class Baz {
    constructor(label, counts) {
      this.label = label;
      this.counts = counts; // Map<string, number>
    }
    total() { let n = 0; for (const v of this.counts.values()) n += v; return n; }
  }
  class Bar {
    constructor(name, when, baz) {
      this.name = name;
      this.when = when; // Date
      this.baz = baz; // Baz
    }
    get year() { return this.when.getUTCFullYear(); }
  }
  class Foo {
    constructor(title, count, bars, bazById) {
      this.title = title;
      this.count = count;
      this.bars = bars; // Bar[]
      this.bazById = bazById; // Map<string, Baz>
    }
    describe() { return `${this.title}: ${this.bars.length} bars`; }
  }
  const BazC = register(Baz, []);
  const BarC = register(Bar, [BazC]);
  const FooC = register(Foo, [BarC, BazC]);
  return {
    classes: { Foo: FooC, Bar: BarC, Baz: BazC },
    raw: { Foo, Bar, Baz },
    root: FooC,
    schema: {
      Foo: { bars: ['array', 'Bar'], bazById: ['map', 'Baz'] },
      Bar: { when: ['date'], baz: ['class', 'Baz'] },
      Baz: { counts: ['map', 'Number'] },
    },
  };
}

function buildFoo(model, rng) {
  const { Foo, Bar, Baz } = model.classes;
  const baz = (label) => new Baz(label, new Map([
    ['x', rng.int(1, 1000)], ['y', rng.int(1, 1000) / 8], ['z', rng.int(-50, 50)],
  ]));
  return new Foo(
    'the tanagra article',
    42,
    [new Bar('first', rng.date(), baz('one')), new Bar('second', rng.date(), baz('two'))],
    new Map([['a', baz('a')], ['b', baz('b')], ['c', baz('c')]]),
  );
}

/* ---- a blog: Post { User, Comment[] } --------------------------------------- */

export function definePostModel(register) {
  class User {
    constructor(id, name, email, createdAt) {
      this.id = id;
      this.name = name;
      this.email = email;
      this.createdAt = createdAt; // Date
    }
    displayName() { return `${this.name} <${this.email}>`; }
  }
  class Comment {
    constructor(id, body, createdAt) {
      this.id = id;
      this.body = body;
      this.createdAt = createdAt; // Date
    }
    preview() { return this.body.slice(0, 20); }
  }
  class Post {
    constructor(id, title, body, published, createdAt, tags, author, comments) {
      this.id = id;
      this.title = title;
      this.body = body;
      this.published = published;
      this.createdAt = createdAt; // Date
      this.tags = tags; // string[5]
      this.author = author; // User
      this.comments = comments; // Comment[3]
    }
    wordCount() { return this.body.split(/\s+/).length; }
    isRecent(now) { return now - this.createdAt < 30 * 86400000; }
  }
  const UserC = register(User, []);
  const CommentC = register(Comment, []);
  const PostC = register(Post, [UserC, CommentC]);
  return {
    classes: { Post: PostC, User: UserC, Comment: CommentC },
    raw: { Post, User, Comment },
    root: PostC,
    schema: {
      Post: { createdAt: ['date'], author: ['class', 'User'], comments: ['array', 'Comment'] },
      User: { createdAt: ['date'] },
      Comment: { createdAt: ['date'] },
    },
  };
}

function buildPost(model, rng, id) {
  const { Post, User, Comment } = model.classes;
  const first = rng.pick(FIRST);
  const last = rng.pick(LAST);
  const author = new User(rng.int(1, 1e6), fullName(first, last),
    `${first}.${last}@example.com`.toLowerCase(), rng.date());
  const comments = [];
  for (let i = 0; i < 3; i++) comments.push(new Comment(id * 10 + i, words(rng, 60), rng.date()));
  const tags = [];
  for (let i = 0; i < 5; i++) tags.push(rng.pick(TAGS));
  return new Post(id, words(rng, 40), words(rng, 500), rng.next() < 0.7, rng.date(), tags, author, comments);
}

/* ---- a deep graph with shared references and one cycle ---------------------- */

export function defineDocModel(register) {
  class Person {
    constructor(id, name) { this.id = id; this.name = name; }
    initials() { return this.name.split(' ').map((w) => w[0]).join(''); }
  }
  class Tag {
    constructor(name, weight) { this.name = name; this.weight = weight; }
    toString() { return `#${this.name}`; }
  }
  class Section {
    constructor(id, depth, heading, author, tags, updated) {
      this.id = id;
      this.depth = depth;
      this.heading = heading;
      this.author = author; // Person, shared with Doc.authors
      this.tags = tags; // Tag[], shared with Doc.tags
      this.updated = updated; // Date
      this.children = []; // Section[]
      this.owner = null; // the Doc on the deepest section: the cycle
    }
    size() { let n = 1; for (const c of this.children) n += c.size(); return n; }
  }
  class Doc {
    constructor(id, title, created, authors, tags, root) {
      this.id = id;
      this.title = title;
      this.created = created; // Date
      this.authors = authors; // Map<string, Person>
      this.tags = tags; // Set<Tag>
      this.root = root; // Section
    }
    outline() { return this.root.size(); }
  }
  const PersonC = register(Person, []);
  const TagC = register(Tag, []);
  const SectionC = register(Section, [PersonC, TagC]);
  const DocC = register(Doc, [SectionC, PersonC, TagC]);
  return {
    classes: { Doc: DocC, Section: SectionC, Person: PersonC, Tag: TagC },
    raw: { Doc, Section, Person, Tag },
    root: DocC,
    schema: {
      Doc: { created: ['date'], authors: ['map', 'Person'], tags: ['set', 'Tag'], root: ['class', 'Section'] },
      Section: { author: ['class', 'Person'], tags: ['array', 'Tag'], updated: ['date'],
        children: ['array', 'Section'], owner: ['class', 'Doc'] },
    },
  };
}

/* Spine depth: the graph nests about 2 * DOC_DEPTH JSON levels deep. */
const DOC_DEPTH = 48;

/*
 * A spine of DOC_DEPTH sections, each with two leaf sections beside the next
 * spine section (3 * DOC_DEPTH + 1 sections). Four Persons and six Tags are
 * each referenced from many places. With `cycle`, the deepest section's
 * owner is the Doc itself; without it (the twin JSON can encode) it is null.
 */
function buildDoc(model, rng, cycle) {
  const { Doc, Section, Person, Tag } = model.classes;
  const people = [];
  for (let i = 0; i < 4; i++) people.push(new Person(i + 1, fullName(rng.pick(FIRST), rng.pick(LAST))));
  const tags = [];
  for (let i = 0; i < 6; i++) tags.push(new Tag(TAGS[i], rng.int(1, 9)));
  let id = 0;
  const section = (depth) => new Section(++id, depth, words(rng, 24), rng.pick(people),
    [rng.pick(tags), rng.pick(tags)], rng.date());
  const root = section(0);
  let at = root;
  for (let d = 1; d <= DOC_DEPTH; d++) {
    const next = section(d);
    at.children.push(section(d), next, section(d));
    at = next;
  }
  const doc = new Doc(1, 'a deep document', rng.date(),
    new Map(people.map((p) => [`p${p.id}`, p])), new Set(tags), root);
  if (cycle) at.owner = doc;
  return doc;
}

/* ---- the list ---------------------------------------------------------------- */

/*
 * name -> { model, build(model) -> value, control?(model) -> value for
 * native JSON when `value` has a cycle, cyclic, shared, description }.
 */
export const WORKLOADS = {
  foo: {
    title: 'Foo (tanagra article)',
    description: 'Foo{string, number, Bar[2] each with a Date and a Baz, Map of 3 Baz}, each Baz with a Map of 3 numbers',
    model: defineFooModel,
    build: (m) => buildFoo(m, makeRng(0xF00)),
    isArray: false,
  },
  post: {
    title: '1 Post',
    description: 'Post{id, title, ~500-char body with non-ASCII, published, Date, 5 tags, User{id, name, email, Date}, 3 Comment{id, body, Date}}',
    model: definePostModel,
    build: (m) => buildPost(m, makeRng(0x9057), 1),
    isArray: false,
  },
  posts100: {
    title: '100 Posts',
    description: 'an array of 100 Posts (no sharing)',
    model: definePostModel,
    build: (m) => { const r = makeRng(0x100); return Array.from({ length: 100 }, (_, i) => buildPost(m, r, i + 1)); },
    isArray: true,
  },
  posts10k: {
    title: '10,000 Posts',
    description: 'an array of 10,000 Posts (no sharing)',
    model: definePostModel,
    build: (m) => { const r = makeRng(0x10000); return Array.from({ length: 10000 }, (_, i) => buildPost(m, r, i + 1)); },
    isArray: true,
    large: true,
  },
  deep: {
    title: 'Deep graph, shared refs + cycle',
    description: `Doc{Date, Map of 4 Person, Set of 6 Tag, ${3 * DOC_DEPTH + 1} Sections nested ${DOC_DEPTH} deep}; Persons and Tags shared, deepest Section.owner = the Doc`,
    model: defineDocModel,
    build: (m) => buildDoc(m, makeRng(0xDEE9), true),
    // JSON cannot encode the cycle: the in-process JSON baseline runs on the
    // same graph built without it (its shared objects are then written
    // once per reference, as JSON does).
    control: (m) => buildDoc(m, makeRng(0xDEE9), false),
    isArray: false,
    cyclic: true,
  },
};

export const WORKLOAD_ORDER = ['foo', 'post', 'posts100', 'posts10k', 'deep'];

/*
 * darmok decodeEntity's options for a workload's value with the model's
 * root class: an array of roots is a collection, which darmok checks only
 * when told (its `collection` option).
 */
export function rootOptions(workload) {
  return workload.isArray ? { collection: 'array' } : undefined;
}
