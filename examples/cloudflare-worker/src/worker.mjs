// A Cloudflare Worker that keeps a class instance through darmok's bytes.
// Workers compile no WebAssembly from bytes at run time: the .wasm is
// imported as a module (wrangler does so for every .wasm import) and
// handed to init(), after which darmok is ready.
import { init, serializable, encodeEntity, decodeEntity } from 'darmok';
import wasm from 'darmok/darmok.wasm';

class Post {
  constructor(title) {
    this.title = title;
    this.at = new Date(Date.UTC(2026, 0, 1));
    this.tags = new Set(['edge']);
  }

  summary() {
    return `${this.title}, ${this.at.getUTCFullYear()}, ${[...this.tags].join(' ')}`;
  }
}
serializable(Post, { key: 'example.Post' });

export default {
  async fetch(request) {
    await init(wasm); // the first call sets the core up; later calls return at once
    const title = new URL(request.url).searchParams.get('title') || 'Hello';
    const text = encodeEntity(new Post(title)); // e.g. for KV: env.POSTS.put(key, text)
    const post = decodeEntity(text, Post); // a real Post: methods, Date and Set work
    return Response.json({ summary: post.summary(), stored: text });
  }
};
