'use strict';
/*
 * The .d.ts files as a TypeScript project sees them: one sample per
 * moduleResolution (node10 with CommonJS output, node16 as ESM, nodenext
 * as CommonJS, bundler as ESM), each compiled with skipLibCheck false,
 * lib ["es2022"] (no DOM) and @types/node, then run. The samples put
 * protobuf bytes straight into ioredis's RedisValue and node-redis's
 * RedisArgument, decode to the class given, narrow error codes, and call
 * init() with what it takes; one line that must not compile proves the
 * check is live.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');

const run = promisify(execFile);
const root = path.join(__dirname, '..', '..', '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
let dir;

const IMPORTS = {
  esm: `import darmok, { serializable, encodeEntity, decodeEntity, init, DarmokError, type Bytes } from 'darmok';
import pb from 'darmok/protobuf';
import { decodeEntity as decodeJson } from 'darmok/json';
import inline from 'darmok/inline';
import { keyvSerializer, bentoSerializer, createSerializer } from 'darmok/serializer';
import type { RedisValue } from 'ioredis';
import type { RedisArgument } from '@redis/client';`,
  cjs: `import darmok = require('darmok');
import pb = require('darmok/protobuf');
import json = require('darmok/json');
import inline = require('darmok/inline');
import ser = require('darmok/serializer');
import type { RedisValue } from 'ioredis';
import type { RedisArgument } from '@redis/client';
const { serializable, encodeEntity, decodeEntity, init, DarmokError } = darmok;
const decodeJson = json.decodeEntity;
const { keyvSerializer, bentoSerializer, createSerializer } = ser;
type Bytes = darmok.Bytes;`
};

const BODY = `
class Post {
  constructor(public title: string, public at: Date, public tags: Map<string, bigint>) {}
  age(now: Date): number { return now.getTime() - this.at.getTime(); }
}
serializable(Post, { key: 'Post' });

const post = new Post('hello', new Date(0), new Map([['views', 12n]]));
const bytes = pb.encodeEntity(post);
// ioredis set(key, value) and node-redis set(key, value) take these types: the bytes go in as they are.
const forIoredis: RedisValue = bytes;
const forNodeRedis: RedisArgument = bytes;
const asBuffer: Buffer = bytes;
const sameBytes: Bytes = darmok.transcode(encodeEntity(post), { from: 'json', to: 'protobuf' });
const back: Post | null = pb.decodeEntity(asBuffer, Post);
const list: Array<Post | null> | null = pb.decodeEntity(pb.encodeEntity([post]), Post, { collection: 'array' });
const byName: Map<unknown, Post | null> | null = decodeEntity(encodeEntity(new Map([['p', post]])), Post, { collection: 'map' });
const members: Set<Post | null> | null = darmok.fromPlain(darmok.toPlain(new Set([post])), Post, { collection: 'set' });
// With Class alone the value is a Post or null, never an Array (and an Array is ERR_UNEXPECTED_CLASS: not called).
// @ts-expect-error
const notList = (): Post[] => pb.decodeEntity(pb.encodeEntity([post]), Post);
const anything: number = decodeEntity<number>('1');
const text: string = encodeEntity(back);
const again: Post | null = decodeJson(text, Post);
const viaInline: Post | null = inline.decodeEntity(inline.encodeEntity(post), Post);
const fromKeyv = keyvSerializer.deserialize(keyvSerializer.serialize({ value: post, expires: 5 }));
const fromBento: unknown = bentoSerializer.deserialize(bentoSerializer.serialize(post));
// bytes: true: JSON as its UTF-8 bytes, typed Bytes, wherever JSON is written.
const jsonBytes: Bytes = encodeEntity(post, { bytes: true });
const viaPb: Buffer = pb.encodeEntity(post, { format: 'json', bytes: true });
const viaTranscode: Bytes = darmok.transcode(bytes, { from: 'protobuf', to: 'json', bytes: true });
const stored: Buffer = createSerializer({ bytes: true }).serialize(post);
// @ts-expect-error: without bytes, JSON is a string
const notBytes: Bytes = encodeEntity(post);
// A registry's defaults are given where it is made; createCodec may make one of its own.
class Row { constructor(public rowId: number) {} }
const snake = darmok.createCodec({ format: 'protobuf', transformKeys: 'snake' });
snake.serializable(Row, { key: 'Row' });
const renamed = darmok.createCodec({ registry: darmok.createRegistry({ rename: { rowId: 'id' } }) });
renamed.serializable(Row, { key: 'Row' });
const wireNames = [snake.toPlain(new Row(1)), renamed.toPlain(new Row(1))].map((p) => Object.keys(p as object).join());

let code = 'none';
try {
  decodeEntity('{"$":', Post);
} catch (err) {
  if (err instanceof DarmokError && err.code === 'ERR_SYNTAX') code = err.code + '@' + err.offset;
}

async function main(): Promise<void> {
  // Each form init() takes, with Node's own URL, Response and WebAssembly types.
  await init();
  await init(new URL('file:///nowhere/darmok.wasm'));
  await init(new Response(new Uint8Array(0)));
  await init(Promise.resolve(new Response(new Uint8Array(0))));
  await init(new Uint8Array(0));
  await init(new ArrayBuffer(0));
  // @ts-expect-error: init() takes no string (and refuses one at run time: ERR_INVALID_OPTION)
  await init('darmok.wasm').catch((err: DarmokError) => { if (err.code !== 'ERR_INVALID_OPTION') throw err; });
  console.log(JSON.stringify([forIoredis === forNodeRedis, Buffer.isBuffer(asBuffer), Buffer.compare(asBuffer, sameBytes),
    back?.age(new Date(10)), again?.tags.get('views') === 12n, viaInline instanceof Post,
    (fromKeyv.value as Post) instanceof Post, fromKeyv.expires, fromBento instanceof Post, code,
    Buffer.compare(jsonBytes, Buffer.from(encodeEntity(post))), Buffer.compare(viaPb, jsonBytes),
    Buffer.compare(viaTranscode, jsonBytes), Buffer.compare(stored, jsonBytes), typeof notBytes, wireNames, typeof notList,
    list?.[0] instanceof Post, byName?.get('p') instanceof Post, [...(members ?? [])][0] instanceof Post]));
}
main();
`;

const EXPECTED = [true, true, 0, 10, true, true, true, 5, true, 'ERR_SYNTAX@5', 0, 0, 0, 0, 'string', ['$,row_id', '$,id'], 'function', true, true, true];

/* mode -> [tsconfig compilerOptions, sample file name, imports, package.json type] */
const MODES = {
  node10: [{ module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true }, 'sample.ts', 'cjs', 'commonjs'],
  node16: [{ module: 'node16', moduleResolution: 'node16' }, 'sample.mts', 'esm', 'commonjs'],
  nodenext: [{ module: 'nodenext', moduleResolution: 'nodenext' }, 'sample.cts', 'cjs', 'commonjs'],
  bundler: [{ module: 'esnext', moduleResolution: 'bundler' }, 'sample.ts', 'esm', 'module']
};

let compiled = 'not run';

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-types-'));
  await Promise.all(Object.entries(MODES).map(async ([mode, [options, file, imports, type]]) => {
    const p = path.join(dir, mode);
    fs.mkdirSync(path.join(p, 'node_modules', '@redis'), { recursive: true });
    fs.symlinkSync(root, path.join(p, 'node_modules', 'darmok'), 'dir');
    fs.symlinkSync(path.join(root, 'node_modules', '@types'), path.join(p, 'node_modules', '@types'), 'dir');
    fs.symlinkSync(path.join(root, 'node_modules', 'ioredis'), path.join(p, 'node_modules', 'ioredis'), 'dir');
    fs.symlinkSync(path.join(root, 'node_modules', '@redis', 'client'), path.join(p, 'node_modules', '@redis', 'client'), 'dir');
    fs.writeFileSync(path.join(p, 'package.json'), JSON.stringify({ name: `sample-${mode}`, private: true, type }));
    fs.writeFileSync(path.join(p, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        ...options, target: 'es2022', lib: ['es2022'], types: ['node'], strict: true, skipLibCheck: false,
        outDir: 'out', rootDir: '.', noEmitOnError: true, composite: true
      },
      files: [file]
    }));
    fs.writeFileSync(path.join(p, file), IMPORTS[imports] + BODY);
  }));
  // One tsc --build over the four: its host parses @types/node and the Redis clients' types once.
  fs.writeFileSync(path.join(dir, 'tsconfig.json'),
    JSON.stringify({ files: [], references: Object.keys(MODES).map((mode) => ({ path: mode })) }));
  compiled = await run(process.execPath, [tsc, '-b', dir], { cwd: dir }).then(() => null, (err) => err.stdout + err.stderr);
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

for (const mode of Object.keys(MODES)) {
  test(`moduleResolution ${mode}: the sample compiles without the DOM lib and runs`, async () => {
    assert.equal(compiled, null, `tsc: ${compiled}`);
    const [, file] = MODES[mode];
    const { stdout } = await run(process.execPath, [path.join(dir, mode, 'out', file.replace(/ts$/, 'js'))]);
    assert.deepStrictEqual(JSON.parse(stdout), EXPECTED);
  });
}
