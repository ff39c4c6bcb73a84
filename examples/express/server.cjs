'use strict';
/*
 * node examples/express/server.cjs
 *   REDIS_URL     default redis://127.0.0.1:6379
 *   PORT          default 3000 (0: any free port)
 *   DARMOK_FORMAT json (default) or protobuf
 * Prints "listening on http://127.0.0.1:<port>" once it serves.
 */
const { createClient } = require('redis');
const { createCache } = require('darmok/redis');
const { createApp } = require('./app.cjs');
const { createDataSource } = require('./data.cjs');

async function main() {
  const client = createClient({ url: process.env.REDIS_URL || 'redis://127.0.0.1:6379' });
  client.on('error', (err) => console.error('redis:', err.message));
  await client.connect();

  const cache = createCache({
    client,
    format: process.env.DARMOK_FORMAT || 'json',
    prefix: 'blog:v1:', // bump v1 to drop every entry of this app at once
    lock: true, //         one loader call across all the app's processes
    onError: (err, key) => console.error(`cache ${key}: ${err.code} ${err.message}`)
  });

  const app = createApp({ cache, data: createDataSource() });
  const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${server.address().port}`);
  });
  const stop = () => server.close(() => client.close ? client.close() : client.quit());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
