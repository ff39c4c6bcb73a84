'use strict';
/*
 * The Express app: GET /posts/:id through the cache. The response is built
 * with methods of the restored classes (summary, byline, lastCommentAt,
 * commenters), which only work if the cache gave back real instances.
 */
const express = require('express');
const { Post } = require('./model.cjs');

function createApp({ cache, data }) {
  const app = express();

  app.get('/posts/:id', async (req, res, next) => {
    try {
      const id = Number(req.params.id);
      const loadsBefore = data.loads;
      const post = await cache.getOrSet(`post:${id}`, Post, () => data.loadPost(id), { ttl: 300, grace: 3600 });
      res.set('X-Data-Source-Loads', String(data.loads - loadsBefore));
      if (post === null) return res.status(404).json({ error: `no post ${id}` });
      res.json({
        id: post.id,
        title: post.title,
        summary: post.summary(),
        byline: post.author.byline(),
        tags: [...post.tags],
        comments: post.comments.length,
        commenters: post.commenters(),
        lastCommentAt: post.lastCommentAt().toISOString(),
        reactions: Object.fromEntries(post.reactions),
        isPost: post instanceof Post
      });
    } catch (err) {
      next(err);
    }
  });

  app.get('/stats', (req, res) => res.json(cache.stats()));
  return app;
}

module.exports = { createApp };
