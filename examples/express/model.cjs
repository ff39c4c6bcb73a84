'use strict';
/*
 * The blog's classes. What the cache gives back must be these classes
 * again: GET /posts/:id calls their methods, so a lost prototype is a 500.
 */
const { serializable } = require('darmok');

class Author {
  constructor(id, name, joined) {
    this.id = id;
    this.name = name;
    this.joined = joined; // a Date
  }

  byline() {
    return `by ${this.name}, writing since ${this.joined.getUTCFullYear()}`;
  }
}

class Comment {
  constructor(id, author, body, at) {
    this.id = id;
    this.author = author; // an Author, shared with other comments and posts
    this.body = body;
    this.at = at; // a Date
  }
}

class Post {
  constructor(id, title, body, author, tags) {
    this.id = id;
    this.title = title;
    this.body = body;
    this.author = author;
    this.tags = new Set(tags);
    this.comments = [];
    this.reactions = new Map(); // emoji -> count
  }

  summary(words = 8) {
    const w = this.body.split(' ');
    return w.length <= words ? this.body : `${w.slice(0, words).join(' ')}…`;
  }

  lastCommentAt() {
    let last = null;
    for (const c of this.comments) if (last === null || c.at > last) last = c.at;
    return last;
  }

  commenters() {
    return [...new Set(this.comments.map((c) => c.author.name))];
  }
}

// Keys in the bytes are fixed names, so a minifier renaming the classes
// does not orphan cached entries.
serializable(Author, { key: 'blog.Author' });
serializable(Comment, { key: 'blog.Comment' });
serializable(Post, { key: 'blog.Post', nested: [Author, Comment] });

module.exports = { Post, Author, Comment };
