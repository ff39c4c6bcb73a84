'use strict';
/*
 * Default class keys: Class.name, as in tanagra, with a process warning
 * (DARMOK_MINIFIED_KEY, once per class) when the name looks minified or
 * generated - hand-made names and real esbuild --minify output. Both formats.
 */
const { test } = require('node:test');
const { assert, warningsOf, FORMATS, isolatedCodec } = require('../helpers.cjs');

for (const format of FORMATS) {
  test(`${format}: a default key that looks minified warns once per class (DARMOK_MINIFIED_KEY)`, async () => {
    const named = (name) => ({ [name]: class {} })[name];
    const generated = ['n', 'Ab', '_a', 't2', 'e10', '_class', '_class2', 'class_1', 'default', '_default', 'anonymous']
      .map(named);
    const fine = ['Post', 'User', 'Tag', 'OAuth2Token', 'V8Stats'].map(named);
    const c = isolatedCodec(format);
    const again = isolatedCodec(format);
    const warnings = await warningsOf(['DARMOK_MINIFIED_KEY'], /./, () => {
      for (const C of generated) c.serializable(C);
      for (const C of generated) again.serializable(C); // the same classes in another registry: no more
      for (const C of fine) c.serializable(C);
      c.serializable(named('k'), { key: 'app.K' }); // a key given: nothing to warn about
      c.serializable(named('q'), [], 'app.Q');
    });
    assert.deepStrictEqual(warnings.map((w) => w.message.match(/class "([^"]*)"/)[1]),
      generated.map((C) => C.name));
    assert.match(warnings[0].message, /looks minified or generated/);
    // The default stays the name (tanagra's): the bytes hold it.
    const n = generated[0];
    const out = c.decodeEntity(c.encodeEntity(new n()));
    assert.ok(out instanceof n);
    if (format === 'json') assert.strictEqual(c.encodeEntity(new n()), '{"$":"n"}');
  });

  test(`${format}: classes from esbuild --minify output warn; with keys they do not`, async () => {
    const esbuild = require('esbuild');
    const source = `
      const { serializable, encodeEntity, decodeEntity } = require('darmok-under-test');
      class Author { constructor(name) { this.name = name; } }
      class Article { constructor(title, author) { this.title = title; this.author = author; } }
      class Keyed { constructor() { this.k = 1; } }
      serializable(Article, [Author]);
      serializable(Keyed, { key: 'app.Keyed' });
      const blob = encodeEntity([new Article('t', new Author('a')), new Keyed()]);
      module.exports = { blob, back: decodeEntity(blob), Article, Author, Keyed };
    `;
    const { code } = esbuild.transformSync(source, { minify: true, format: 'cjs' });
    assert.ok(!/class Article|class Author/.test(code), 'esbuild renamed the classes');
    const c = isolatedCodec(format);
    const api = { serializable: c.serializable, encodeEntity: c.encodeEntity, decodeEntity: c.decodeEntity };
    const mod = { exports: {} };
    let exported = null;
    const warnings = await warningsOf(['DARMOK_MINIFIED_KEY'], /./, () => {
      new Function('require', 'module', code)((id) => { assert.strictEqual(id, 'darmok-under-test'); return api; }, mod);
      exported = mod.exports;
    });
    const { Article, Author, back } = exported;
    assert.deepStrictEqual(warnings.map((w) => w.message.match(/class "([^"]*)"/)[1]).sort(),
      [Article.name, Author.name].sort());
    assert.ok(back[0] instanceof Article && back[0].author instanceof Author && back[1] instanceof exported.Keyed);
  });

}
