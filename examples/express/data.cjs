'use strict';
/*
 * A slow data source standing in for a database: every load takes
 * DELAY_MS and is counted, so the app can say whether a response came from
 * it or from the cache.
 */
const { Post, Author, Comment } = require('./model.cjs');

const DELAY_MS = Number(process.env.DATA_DELAY_MS || 200);

function createDataSource() {
  const ada = new Author(1, 'Ada Lovelace', new Date(Date.UTC(2015, 11, 10)));
  const grace = new Author(2, 'Grace Hopper', new Date(Date.UTC(2017, 5, 1)));
  let loads = 0;
  return {
    get loads() {
      return loads;
    },
    /* The Post with this id (a fresh graph each time), or null. */
    async loadPost(id) {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
      if (id !== 1 && id !== 2) return null;
      const post = new Post(id, id === 1 ? 'Notes on the Analytical Engine' : 'Compilers for everyone',
        'The engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves, and it might act upon other things besides number.',
        ada, ['history', 'computing']);
      post.comments.push(
        new Comment(10, grace, 'A fine program for Bernoulli numbers.', new Date(Date.UTC(2024, 0, 2, 9, 30))),
        new Comment(11, ada, 'Thank you!', new Date(Date.UTC(2024, 0, 3, 12, 0))),
        new Comment(12, grace, 'Next: a compiler.', new Date(Date.UTC(2024, 0, 4, 8, 15))));
      post.reactions.set('👍', 12).set('🚀', 3);
      return post;
    }
  };
}

module.exports = { createDataSource };
