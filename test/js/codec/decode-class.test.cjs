'use strict';
/*
 * decodeEntity(blob, Class): Class's own key and aliases are read as Class
 * in that call whatever other class holds them (with a warning at
 * registration, DARMOK_DUPLICATE_KEY), and a top-level value that is no
 * Class (another class's instance, a collection) is ERR_UNEXPECTED_CLASS;
 * with { collection }, that collection's members are checked instead; in
 * both formats and on the tanagra-legacy path.
 */
const { test } = require('node:test');
const { assert, throwsCode, warningsOf, FORMATS, isolatedCodec } = require('../helpers.cjs');

for (const format of FORMATS) {
  test(`${format}: decodeEntity(blob, Class) reads Class's aliases as Class when another class holds the key`, () => {
    const c = isolatedCodec(format);
    class Old { constructor(v) { this.v = v; } }
    c.serializable(Old, { key: 'OldName' });
    const blob = c.encodeEntity(Object.assign(new Old(3), { inner: new Old(4) }));
    class Renamed { constructor(v) { this.v = v; } }
    c.serializable(Renamed, { key: 'NewName', aliases: ['OldName'] });
    const out = c.decodeEntity(blob, Renamed);
    assert.ok(out instanceof Renamed, `got ${out.constructor.name}`);
    assert.ok(out.inner instanceof Renamed, 'the whole call reads the alias as Renamed');
    assert.deepStrictEqual({ ...out, inner: { ...out.inner } }, { v: 3, inner: { v: 4 } });
    // Without Class, and with Old, the key is Old's.
    assert.ok(c.decodeEntity(blob) instanceof Old);
    assert.ok(c.decodeEntity(blob, Old) instanceof Old);
  });

  test(`${format}: two classes with one default key: decodeEntity(blob, A) gives an A`, () => {
    const c = isolatedCodec(format);
    const make = () => class User { constructor() { this.name = 'u'; } };
    const A = make();
    const B = make();
    c.serializable(A); // key "User"
    c.serializable(B); // takes "User" (DARMOK_KEY_REPLACED)
    const blob = c.encodeEntity(new A());
    assert.ok(c.decodeEntity(blob, A) instanceof A);
    assert.ok(c.decodeEntity(blob, B) instanceof B);
    assert.ok(c.decodeEntity(blob) instanceof B, 'without Class, the latest registration');
    // Inside a collection too, when Class is named.
    const list = c.decodeEntity(c.encodeEntity([new A(), new A()]), A, { collection: 'array' });
    assert.ok(list.every((u) => u instanceof A));
  });

  test(`${format}: a key that is one class's key and another's alias warns once (DARMOK_DUPLICATE_KEY)`, async () => {
    const c = isolatedCodec(format);
    class Old {}
    class Renamed {}
    class Third {}
    const warnings = await warningsOf(['DARMOK_DUPLICATE_KEY', 'DARMOK_KEY_REPLACED'], /dup\./, () => {
      c.serializable(Old, { key: 'dup.Old' });
      c.serializable(Renamed, { key: 'dup.New', aliases: ['dup.Old'] });
      c.serializable(Renamed, { key: 'dup.New', aliases: ['dup.Old'] }); // again: no second warning
      c.serializable(Third, { key: 'dup.Third', aliases: ['dup.Old'] }); // the same name: no second warning
    });
    assert.strictEqual(warnings.length, 1, warnings.map((w) => w.message).join('\n'));
    assert.strictEqual(warnings[0].code, 'DARMOK_DUPLICATE_KEY');
    assert.match(warnings[0].message, /"dup\.Old" is the class key of class Old and an alias of class Renamed/);
    assert.ok(c.decodeEntity(c.encodeEntity(new Old()), Third) instanceof Third);
  });

  test(`${format}: a top-level instance of another class is ERR_UNEXPECTED_CLASS`, () => {
    const c = isolatedCodec(format);
    class Post { constructor() { this.title = 't'; } }
    class User { constructor() { this.name = 'n'; } }
    class Draft extends Post {}
    c.serializable(Post, { key: 'x.Post' });
    c.serializable(User, { key: 'x.User' });
    c.serializable(Draft, { key: 'x.Draft' });
    throwsCode(() => c.decodeEntity(c.encodeEntity(new User()), Post), 'ERR_UNEXPECTED_CLASS', (err) => {
      assert.strictEqual(err.expected, 'x.Post');
      assert.strictEqual(err.actual, 'x.User');
      assert.match(err.message, /"x\.User" \(class User\), not of "x\.Post" \(class Post\)/);
    });
    // A subclass is a Post.
    assert.ok(c.decodeEntity(c.encodeEntity(new Draft()), Post) instanceof Draft);
    // A nested instance of the class, its key read from the tape again (protobuf: key references).
    const nested = Object.assign(new Post(), { next: Object.assign(new Post(), { next: new Post() }) });
    const out = c.decodeEntity(c.encodeEntity(nested), Post);
    assert.ok(out.next.next instanceof Post);
    assert.deepStrictEqual(JSON.stringify(out), JSON.stringify(nested));
    // A collection of Users is no Post, at the top or, with collection, as a member.
    throwsCode(() => c.decodeEntity(c.encodeEntity([new User()]), Post), 'ERR_UNEXPECTED_CLASS',
      (err) => assert.strictEqual(err.actual, 'Array'));
    throwsCode(() => c.decodeEntity(c.encodeEntity([new User()]), Post, { collection: 'array' }), 'ERR_UNEXPECTED_CLASS',
      (err) => assert.deepStrictEqual([err.actual, err.path], ['x.User', '$[0]']));
    throwsCode(() => c.decodeEntity(c.encodeEntity(new Map([['u', new User()]])), Post, { collection: 'map' }), 'ERR_UNEXPECTED_CLASS',
      (err) => assert.deepStrictEqual([err.actual, err.path], ['x.User', '$.$Map[0][1]']));
    // An unknown key: ERR_UNKNOWN_CLASS as before; as a plain object it is not a Post either.
    const other = isolatedCodec(format);
    class Gone {}
    other.serializable(Gone, { key: 'x.Gone' });
    const gone = other.encodeEntity(new Gone());
    throwsCode(() => c.decodeEntity(gone, Post), 'ERR_UNKNOWN_CLASS');
    throwsCode(() => c.decodeEntity(gone, Post, { unknownClass: 'plain' }), 'ERR_UNEXPECTED_CLASS',
      (err) => assert.strictEqual(err.actual, 'x.Gone'));
    assert.deepStrictEqual(c.decodeEntity(gone, { unknownClass: 'plain' }), {});
  });

  test(`${format}: decodeEntity(blob, Class) gives a Class or null: any other value, a collection too, is ERR_UNEXPECTED_CLASS (issue 32, 4)`, () => {
    const c = isolatedCodec(format);
    class User { constructor() { this.name = 'n'; } }
    c.serializable(User, { key: 'i32.User' });
    const others = [
      [{ name: 'n' }, 'plain object'], [7, 'number'], ['user', 'string'], [true, 'boolean'], [10n, 'bigint'],
      [undefined, 'undefined'], [new Error('x'), 'Error'], [new Date(0), 'Date'], [/u/g, 'RegExp'],
      [new Uint8Array(2), 'Uint8Array'], [Object.create(null), 'null-prototype object'],
      [[1, 2], 'Array'], [[new User()], 'Array'], [new Map([[1, new User()]]), 'Map'], [new Set([new User()]), 'Set']
    ];
    for (const [value, actual] of others) {
      throwsCode(() => c.decodeEntity(c.encodeEntity(value), User), 'ERR_UNEXPECTED_CLASS', (err) => {
        assert.strictEqual(err.expected, 'i32.User');
        assert.strictEqual(err.actual, actual);
        assert.match(err.message, /decodeEntity\(blob, User\)/);
      });
      // Without Class, the same document decodes.
      c.decodeEntity(c.encodeEntity(value));
    }
    assert.strictEqual(c.decodeEntity(c.encodeEntity(null), User), null);
    assert.ok(c.decodeEntity(c.encodeEntity(new User()), User) instanceof User);
    // fromPlain reads as decodeEntity does (JSON only).
    if (format === 'json') {
      throwsCode(() => c.fromPlain({ name: 'n' }, User), 'ERR_UNEXPECTED_CLASS');
      throwsCode(() => c.fromPlain([1], User), 'ERR_UNEXPECTED_CLASS');
    }
  });

  test(`${format}: decodeEntity(blob, Class, { collection }): that collection or null, each member a Class or null`, () => {
    const c = isolatedCodec(format);
    class User { constructor(name) { this.name = name; } }
    class Admin extends User {}
    class Other {}
    c.serializable(User, { key: 'col.User' });
    c.serializable(Admin, { key: 'col.Admin' });
    c.serializable(Other, { key: 'col.Other' });
    const u = new User('u');
    const good = {
      array: [u, null, new Admin('a'), u],
      set: new Set([u, null, new Admin('a')]),
      map: new Map([['a', u], [2, null], [{ k: 1 }, new Admin('a')]])
    };
    for (const [collection, value] of Object.entries(good)) {
      const out = c.decodeEntity(c.encodeEntity(value), User, { collection });
      assert.strictEqual(Object.prototype.toString.call(out), Object.prototype.toString.call(value), collection);
      assert.deepStrictEqual(out, value, collection);
      assert.strictEqual(c.decodeEntity(c.encodeEntity(null), User, { collection }), null);
      assert.deepStrictEqual(c.decodeEntity(c.encodeEntity(new value.constructor()), User, { collection }), new value.constructor());
      // Another kind of top-level value, an instance of Class too, is not that collection.
      for (const [other, actual] of [[u, 'col.User'], [{}, 'plain object'], [3, 'number'],
        ...Object.entries(good).filter(([k]) => k !== collection).map(([, v]) => [v, v.constructor.name])]) {
        throwsCode(() => c.decodeEntity(c.encodeEntity(other), User, { collection }), 'ERR_UNEXPECTED_CLASS', (err) => {
          assert.deepStrictEqual([err.expected, err.actual, err.path], ['col.User', actual, undefined], `${collection}: ${actual}`);
        });
      }
    }
    // The first member that is neither a Class nor null, with its path.
    const bad = [
      ['array', [u, null, new Other(), 5], 'col.Other', '$[2]'],
      ['array', [u, { name: 'n' }], 'plain object', '$[1]'],
      ['array', [u, [u]], 'Array', '$[1]'],
      ['set', new Set([u, 'u']), 'string', '$.$Set[1]'],
      ['map', new Map([['a', u], ['b', new Date(0)]]), 'Date', '$.$Map[1][1]'],
      ['map', new Map([['a', u], [u, 1]]), 'number', '$.$Map[1][1]']
    ];
    for (const [collection, value, actual, path] of bad) {
      throwsCode(() => c.decodeEntity(c.encodeEntity(value), User, { collection }), 'ERR_UNEXPECTED_CLASS', (err) => {
        assert.deepStrictEqual([err.expected, err.actual, err.path], ['col.User', actual, path], `${collection}: ${path}`);
      });
    }
    // The option is checked: a known collection, and a Class to hold.
    throwsCode(() => c.decodeEntity(c.encodeEntity([u]), User, { collection: 'list' }), 'ERR_INVALID_OPTION');
    throwsCode(() => c.decodeEntity(c.encodeEntity([u]), { collection: 'array' }), 'ERR_INVALID_OPTION');
    if (format === 'json') assert.deepStrictEqual(c.fromPlain(c.toPlain([u]), User, { collection: 'array' }), [u]);
  });

}

test('json: the tanagra-legacy path checks the top-level instance too', () => {
  const c = isolatedCodec('json');
  class Post {}
  class User {}
  c.serializable(Post, { key: 'lg.Post' });
  c.serializable(User, { key: 'lg.User' });
  const doc = '{"_serializationKey":"lg.User","name":"n"}';
  throwsCode(() => c.decodeEntity(doc, Post), 'ERR_UNEXPECTED_CLASS', (err) => {
    assert.strictEqual(err.expected, 'lg.Post');
    assert.strictEqual(err.actual, 'lg.User');
  });
  assert.ok(c.decodeEntity(doc, User) instanceof User);
  const list = '[{"_serializationKey":"lg.User"}]';
  throwsCode(() => c.decodeEntity(list, Post, { legacy: 'tanagra' }), 'ERR_UNEXPECTED_CLASS', (err) => assert.strictEqual(err.actual, 'Array'));
  throwsCode(() => c.decodeEntity(list, Post, { legacy: 'tanagra', collection: 'array' }), 'ERR_UNEXPECTED_CLASS',
    (err) => assert.deepStrictEqual([err.actual, err.path], ['lg.User', '$[0]']));
  assert.ok(c.decodeEntity(list, User, { legacy: 'tanagra', collection: 'array' })[0] instanceof User);
  // The alias of the named class wins over another class's key there too.
  class Renamed {}
  c.serializable(Renamed, { key: 'lg.Renamed', aliases: ['lg.User'] });
  assert.ok(c.decodeEntity(doc, Renamed) instanceof Renamed);
  assert.ok(c.decodeEntity(doc) instanceof User);
});
