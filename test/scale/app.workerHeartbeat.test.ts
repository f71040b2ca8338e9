/**
 * A worker's heartbeats on Redis (real redis-server, the machine's Docker engine). The engine's
 * disk usage (seconds of I/O on a busy engine) is asked once however often the worker beats.
 * A worker closing in the middle of its beats: a report being written ends before the connection
 * does, and nothing is written or logged after. Before, a beat in flight wrote to the closed
 * connection and logged "heartbeat failed" after its process had shut down (seen in CI, on another
 * test's stderr).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { beatAsWorker } from '../../src/app/heartbeat.js';
import { openServices } from '../../src/app/services.js';
import { connectRedis } from '../../src/queue/redis.js';
import { createLogger } from '../../src/util/logger.js';
import { RedisHeartbeats } from '../../src/web/heartbeat.js';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';

let redis: RedisServer;
let dataDir: string;

beforeAll(async () => {
  redis = await startRedis();
  dataDir = mkdtempSync(join(tmpdir(), `swt-close-${process.pid}-`));
});
afterAll(async () => {
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a worker closing between beats writes no report after close and logs no failed beat', async () => {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
  const prefix = `close${process.pid}`;
  const conn = connectRedis(redis.url);
  const stored = () => new RedisHeartbeats(conn, { prefix }).list();
  try {
    // Several rounds, each closing at another point of the beats (every 100 ms: collecting or writing).
    for (let round = 0; round < 5; round++) {
      const services = await openServices({ role: 'worker', redisUrl: redis.url, dataDir, heartbeatMs: 100, logger: createLogger({ level: 'info', destination }), env: { ...process.env, SWT_REDIS_PREFIX: prefix } });
      await beatAsWorker(services, ['fast']);
      for (;;) {
        if ((await stored()).some((w) => w.id === services.id)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 130 + 70 * round));
      await services.close();
      const last = (await stored()).find((w) => w.id === services.id)!.seenAt;
      // Longer than a beat takes once the engine's disk usage is remembered: a beat cut off by the close would have failed by now.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await stored()).find((w) => w.id === services.id)!.seenAt).toBe(last);
    }
    expect(lines.filter((l) => JSON.parse(l).level >= 40)).toEqual([]);
  } finally {
    conn.disconnect();
  }
});


test("beats every 50 ms ask the engine's disk usage once: the figure is remembered between beats", async () => {
  // The worker's Docker client goes through a proxy of the test's own (a unix socket) that counts what it asks.
  // Each request with the engine's answer: the engine refuses a disk usage asked while another
  // process's runs (other test files share it in CI), and that refusal is asked again by design.
  const asked: string[] = [];
  const socket = join(dataDir, 'docker.sock');
  const proxy = createServer((req, res) => {
    const what = `${req.method} ${req.url!.replace(/^\/v[\d.]+/, '').split('?')[0]}`;
    const up = request({ socketPath: '/var/run/docker.sock', path: req.url, method: req.method, headers: req.headers }, (r) => {
      asked.push(`${what} ${r.statusCode}`);
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(socket, r));
  const before = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = `unix://${socket}`;
  const prefix = `df${process.pid}`;
  const conn = connectRedis(redis.url);
  try {
    const services = await openServices({ role: 'worker', redisUrl: redis.url, dataDir, heartbeatMs: 50, logger: createLogger({ level: 'silent' }), env: { ...process.env, SWT_REDIS_PREFIX: prefix } });
    await beatAsWorker(services, ['fast']);
    const seen = new Set<number>();
    while (seen.size < 6) {
      const me = (await new RedisHeartbeats(conn, { prefix }).list()).find((w) => w.id === services.id);
      if (me) seen.add(me.seenAt);
      await new Promise((r) => setTimeout(r, 25));
    }
    await services.close();
    expect(asked.filter((a) => a === 'GET /info 200').length).toBeGreaterThanOrEqual(6);
    // One measure: answered once; any other df request was the engine refusing while another's ran.
    const df = asked.filter((a) => a.startsWith('GET /system/df '));
    expect(df.filter((a) => a === 'GET /system/df 200')).toEqual(['GET /system/df 200']);
    expect(df.at(-1)).toBe('GET /system/df 200');
  } finally {
    if (before === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = before;
    conn.disconnect();
    await new Promise((r) => proxy.close(r));
  }
});
