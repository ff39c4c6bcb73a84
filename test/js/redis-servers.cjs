'use strict';
/*
 * redis-servers.cjs - real redis-server processes for the darmok/redis
 * tests and the cache benchmark: one server, or a 3-master Redis Cluster,
 * on free loopback ports, without persistence, each in a temporary
 * directory; stopped by PID (also when the process exits on a failure).
 *
 *   const server = await startRedis();          // { port, url, pid, stop() }
 *   await startRedis({ port: server.port });    // the same port again, after stop()
 *   const cluster = await startCluster();       // { ports, nodes, stop() }
 *   const sentinel = await startSentinel();     // { name, primary, replica, sentinel, stop() }
 *   await server.stop();
 *   await send(port, 'INFO', 'commandstats')   // one command, its reply
 */
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const calculateSlot = require('cluster-key-slot');

const HOST = '127.0.0.1';
const running = new Set();

process.on('exit', () => {
  for (const child of running) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/* A port nothing listens on now (the kernel's choice). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function portIsFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/* A free port p whose cluster bus port p + 10000 is free too. */
async function freeClusterPort(taken) {
  for (let i = 0; i < 50; i++) {
    const p = await freePort();
    if (p + 10000 < 65536 && !taken.includes(p) && await portIsFree(p + 10000)) return p;
  }
  throw new Error('no free port pair for a cluster node');
}

/*
 * Minimal RESP: sends one command on a fresh connection and resolves to
 * its reply (strings, integers, arrays, null; an error reply rejects).
 */
function send(port, ...args) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, HOST);
    let buf = Buffer.alloc(0);
    const parse = (at) => {
      const nl = buf.indexOf('\r\n', at);
      if (nl < 0) return null;
      const type = String.fromCharCode(buf[at]);
      const line = buf.toString('utf8', at + 1, nl);
      if (type === '+') return [line, nl + 2];
      if (type === '-') return [new Error(line), nl + 2];
      if (type === ':') return [Number(line), nl + 2];
      if (type === '$') {
        const n = Number(line);
        if (n < 0) return [null, nl + 2];
        if (buf.length < nl + 2 + n + 2) return null;
        return [buf.subarray(nl + 2, nl + 2 + n), nl + 2 + n + 2];
      }
      if (type === '*') {
        const n = Number(line);
        if (n < 0) return [null, nl + 2];
        const out = [];
        let pos = nl + 2;
        for (let i = 0; i < n; i++) {
          const r = parse(pos);
          if (r === null) return null;
          out.push(r[0]);
          pos = r[1];
        }
        return [out, pos];
      }
      return [new Error(`unexpected RESP type ${type}`), buf.length];
    };
    sock.setTimeout(5000, () => sock.destroy(new Error(`no answer from port ${port} to ${args[0]}`)));
    sock.on('error', reject);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      const r = parse(0);
      if (r === null) return;
      sock.end();
      if (r[0] instanceof Error) reject(r[0]);
      else resolve(r[0]);
    });
    const parts = [`*${args.length}\r\n`];
    for (const a of args) {
      const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a));
      parts.push(`$${b.length}\r\n`, b, '\r\n');
    }
    sock.write(Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p)))));
  });
}

const text = async (port, ...args) => {
  const r = await send(port, ...args);
  return Buffer.isBuffer(r) ? r.toString('utf8') : r;
};

async function waitFor(what, check, ms = 10000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/* Starts one redis-server with extra arguments; resolves when it answers PING. */
function spawnServer(port, extra, dir) {
  return spawnRedis(port, ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no',
    '--dir', dir, '--daemonize', 'no', '--protected-mode', 'no', '--loglevel', 'warning', ...extra]);
}

/*
 * Starts redis-server with args, listening on port; resolves to { port,
 * pid, stop() } when it answers PING and INFO names its own PID: a port
 * found free can be taken by another test file's server before ours binds
 * it, and that server would answer PING too. Rejects with err.portTaken
 * set when ours could not bind.
 */
async function spawnRedis(port, args) {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  running.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', () => running.delete(child));
  let gone = false;
  exited.then(() => { gone = true; });
  const stop = async () => {
    if (gone) return;
    process.kill(child.pid, 'SIGKILL');
    await exited;
  };
  try {
    await waitFor(`redis-server on port ${port}`, async () => {
      if (gone) throw new Error(`redis-server exited: ${stderr.trim()}`);
      if ((await text(port, 'PING')) !== 'PONG') return false;
      const pid = /^process_id:(\d+)/m.exec(await text(port, 'INFO', 'server'));
      if (pid && Number(pid[1]) === child.pid) return true;
      if (gone) throw new Error(`redis-server exited: ${stderr.trim()}`);
      return false; // another process's server on the port; ours exits when its bind fails
    });
  } catch (err) {
    await stop();
    if (/already in use|bind|Address in use/i.test(stderr)) err.portTaken = true;
    throw err;
  }
  return { port, pid: child.pid, stop };
}

/* spawn(port) on ports from pick(), again on another when the port was taken meanwhile. */
async function onFreePort(pick, spawnOn) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOn(await pick());
    } catch (err) {
      if (!err.portTaken || attempt === 5) throw err;
    }
  }
}

function tempDir(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `darmok-${name}-`));
}

/*
 * One server: { port, url, pid, stop() }; port: given for a restart on the
 * same port, extra: more redis-server arguments.
 */
async function startRedis({ port, extra = [] } = {}) {
  const dir = tempDir('redis');
  const server = port === undefined
    ? await onFreePort(freePort, (p) => spawnServer(p, extra, dir))
    : await spawnServer(port, extra, dir);
  return {
    ...server,
    host: HOST,
    url: `redis://${HOST}:${server.port}`,
    async stop() {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

/*
 * Three masters, no replicas, slots split by redis-cli --cluster create:
 * { ports, nodes: [{ port, pid }], stop() }. Resolves when every node says
 * cluster_state:ok and agrees on every slot. extra: more redis-server
 * arguments for every node (e.g. ['--cluster-require-full-coverage', 'no']).
 */
async function startCluster({ extra = [] } = {}) {
  const dir = tempDir('cluster');
  const ports = [];
  const nodes = [];
  try {
    for (let i = 0; i < 3; i++) {
      const node = await onFreePort(() => freeClusterPort(ports), (port) => {
        const nodeDir = path.join(dir, String(port));
        fs.mkdirSync(nodeDir, { recursive: true });
        return spawnServer(port, ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
          '--cluster-node-timeout', '5000', ...extra], nodeDir);
      });
      nodes.push(node);
      ports.push(node.port);
    }
    await new Promise((resolve, reject) => {
      execFile('redis-cli', ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`),
        '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`redis-cli --cluster create failed: ${stderr || stdout || err.message}`));
        else resolve();
      });
    });
    await waitFor('cluster_state:ok on every node', async () => {
      for (const port of ports) {
        const info = await text(port, 'CLUSTER', 'INFO');
        if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384/.test(info) || !/cluster_known_nodes:3/.test(info)) return false;
      }
      return true;
    }, 20000);
  } catch (err) {
    for (const n of nodes) await n.stop();
    throw err;
  }
  return {
    ports,
    nodes,
    host: HOST,
    async stop() {
      for (const n of nodes) await n.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

/*
 * A primary, its replica and one Sentinel (redis-server --sentinel, quorum
 * 1) watching them under `name`: { name, primary, replica, sentinel,
 * stop() }, each node { port, pid, stop() }. Resolves when the replica is
 * in sync and the Sentinel has found it. Failover with
 * `send(sentinel.port, 'SENTINEL', 'FAILOVER', name)`.
 */
async function startSentinel(name = 'darmok') {
  const dir = tempDir('sentinel');
  const nodes = [];
  try {
    const primaryDir = path.join(dir, 'primary');
    const replicaDir = path.join(dir, 'replica');
    fs.mkdirSync(primaryDir);
    fs.mkdirSync(replicaDir);
    const primary = await onFreePort(freePort, (p) => spawnServer(p, [], primaryDir));
    nodes.push(primary);
    const replica = await onFreePort(freePort, (p) => spawnServer(p, ['--replicaof', HOST, String(primary.port)], replicaDir));
    nodes.push(replica);
    await waitFor('the replica in sync', async () => /master_link_status:up/.test(await text(replica.port, 'INFO', 'replication')));
    const conf = path.join(dir, 'sentinel.conf');
    const sentinel = await onFreePort(freePort, (p) => {
      // Sentinel rewrites its config file (what it learns), so it gets one of its own.
      fs.writeFileSync(conf, [
        `port ${p}`, `bind ${HOST}`, 'protected-mode no', `dir ${dir}`, 'loglevel warning',
        `sentinel monitor ${name} ${HOST} ${primary.port} 1`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`, ''
      ].join('\n'));
      return spawnRedis(p, [conf, '--sentinel']);
    });
    const { port } = sentinel;
    nodes.push(sentinel);
    await waitFor('the Sentinel to see the replica', async () => {
      const replicas = await send(port, 'SENTINEL', 'REPLICAS', name);
      if (replicas.length !== 1) return false;
      const f = {};
      for (let i = 0; i < replicas[0].length; i += 2) f[String(replicas[0][i])] = String(replicas[0][i + 1]);
      return f.flags === 'slave' && f['master-link-status'] === 'ok';
    }, 20000);
    const primaryPort = async () => Number(String((await send(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name))[1]));
    return {
      name,
      primary,
      replica,
      sentinel,
      host: HOST,
      primaryPort,
      /*
       * SENTINEL FAILOVER, asked again while the Sentinel finds no replica
       * good enough yet (NOGOODSLAVE: its view of the replica is not fresh);
       * resolves once the Sentinel names the other node as the primary and
       * that node says it is one.
       */
      async failover() {
        const before = await primaryPort();
        const next = before === primary.port ? replica.port : primary.port;
        await waitFor('SENTINEL FAILOVER accepted', async () => {
          try {
            return (await text(port, 'SENTINEL', 'FAILOVER', name)) === 'OK';
          } catch (err) {
            if (/NOGOODSLAVE|INPROG/.test(err.message)) return false;
            throw err;
          }
        }, 30000);
        await waitFor('the failover', async () => await primaryPort() === next &&
          /role:master/.test(await text(next, 'INFO', 'replication')), 30000);
        return next;
      },
      async stop() {
        for (const n of nodes) await n.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    };
  } catch (err) {
    for (const n of nodes) await n.stop();
    throw err;
  }
}

/*
 * SIGSTOP pid, resolved once the kernel shows it stopped (/proc state T):
 * the signal is delivered asynchronously, and a command sent before the
 * process stops would still be answered.
 */
async function pause(pid) {
  process.kill(pid, 'SIGSTOP');
  await waitFor(`process ${pid} stopped`, () => /^\d+ \(.*\) [Tt] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')), 5000);
}

/* INFO commandstats of one server as { mget: { calls, failed, rejected }, ... }. */
async function commandStats(port) {
  const info = await text(port, 'INFO', 'commandstats');
  const out = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):(.*)$/gm)) {
    const f = Object.fromEntries(m[2].trim().split(',').map((kv) => kv.split('=')));
    out[m[1]] = { calls: Number(f.calls), failed: Number(f.failed_calls || 0), rejected: Number(f.rejected_calls || 0) };
  }
  return out;
}

/*
 * A single server or a 3-master cluster by name: { servers, ports,
 * raw(cmd, key, ...args) }, raw sending one command to the node that
 * serves key (its slot in CLUSTER SLOTS).
 */
async function startTopology(topology) {
  if (topology !== 'cluster') {
    const servers = await startRedis();
    return { servers, ports: [servers.port], raw: (cmd, key, ...args) => send(servers.port, cmd, key, ...args) };
  }
  const servers = await startCluster();
  const owners = new Map(); // slot -> port
  for (const [from, to, master] of await send(servers.ports[0], 'CLUSTER', 'SLOTS')) {
    for (let s = Number(from); s <= Number(to); s++) owners.set(s, Number(master[1]));
  }
  return { servers, ports: servers.ports, raw: (cmd, key, ...args) => send(owners.get(calculateSlot(key)), cmd, key, ...args) };
}

module.exports = { startRedis, startCluster, startSentinel, startTopology, send, text, commandStats, pause, freePort, waitFor, HOST };
