'use strict';
/*
 * A real redis-server for the tests that need one: on a free loopback
 * port, nothing saved to disk, stopped by its PID (stop(), in an after hook).
 */
const net = require('node:net');
const { spawn } = require('node:child_process');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--dir', require('node:os').tmpdir()], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${log}`)), 10000);
    child.stdout.on('data', (d) => {
      log += d;
      if (/Ready to accept connections/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${log}`));
    });
  });
  child.stdout.resume();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGTERM');
      await exited;
    }
  };
}

module.exports = { startRedis };
