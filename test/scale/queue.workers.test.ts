/**
 * The BullMQ queue with a real redis-server and two real worker processes: 20 jobs each run
 * exactly once; a worker SIGKILLed mid-job has its jobs finished by the other; Redis restarted
 * mid-run loses nothing; a per-repository limit holds across both workers. Each worker appends
 * what it runs to its own file (not to Redis, which the test restarts).
 */
import { appendFileSync, readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BullJobQueue } from '../../src/queue/bullQueue.js';
import { connectRedis } from '../../src/queue/redis.js';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';
import { tsChildRunner, type TsChild } from '../helpers/tsChild.js';

let redis: RedisServer;
let dir: string;
const runner = tsChildRunner();
const children: TsChild[] = [];
const PREFIX = `w${process.pid}`;

// Locks and limit leases of 10 s (30 s by default): they must outlast the Redis restart below, with
// ioredis's reconnect delays, or a live worker's job would be handed out again; a killed worker's
// jobs are then taken back within ~12 s.
const QUEUE_OPTS = { prefix: PREFIX, lockDurationMs: 10_000, stalledIntervalMs: 2000, limitLeaseMs: 10_000, limitRetryMs: 100, reconcileMs: 2000 };

function startWorker(name: string): TsChild {
  const src = (f: string) => JSON.stringify(pathToFileURL(resolve(f)).href);
  const log = join(dir, `${name}.log`);
  const child = runner.start(
    name,
    `import { appendFileSync } from 'node:fs';
import { BullJobQueue } from ${src('src/queue/bullQueue.ts')};
import { connectRedis } from ${src('src/queue/redis.ts')};
const q = new BullJobQueue(connectRedis(process.env.REDIS_URL), ${JSON.stringify(QUEUE_OPTS)});
q.work('exec', async ({ job, attempt }) => {
  appendFileSync(${JSON.stringify(log)}, ['start', job.id, job.payload.repo, Date.now(), attempt].join(' ') + '\\n');
  await new Promise((r) => setTimeout(r, job.payload.ms));
  appendFileSync(${JSON.stringify(log)}, ['end', job.id, job.payload.repo, Date.now()].join(' ') + '\\n');
}, { concurrency: 3 });
await q.start();
console.log('READY');
`,
    [],
    { REDIS_URL: redis.url },
  );
  children.push(child);
  return child;
}

interface Line {
  what: 'start' | 'end';
  id: string;
  repo: string;
  at: number;
  worker: string;
}

function lines(worker: string): Line[] {
  const file = join(dir, `${worker}.log`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [what, id, repo, at] = l.split(' ');
      return { what: what as Line['what'], id: id!, repo: repo!, at: Number(at), worker };
    });
}

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), `swt-workers-${process.pid}-`));
});

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  runner.cleanup();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('two worker processes on one Redis', () => {
  it('20 jobs run once each through a worker SIGKILL and a Redis restart, within the per-repository limit', async () => {
    const w1 = startWorker('w1');
    const w2 = startWorker('w2');
    await Promise.all([w1.waitFor('READY'), w2.waitFor('READY')]);

    // The "web" side: enqueues only.
    const conn = connectRedis(redis.url);
    const web = new BullJobQueue(conn, QUEUE_OPTS);
    const repos = ['a/noisy', 'a/noisy', 'a/noisy', 'b/one', 'c/two'];
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const repo = repos[i % repos.length]!;
      const r = await web.enqueue({ kind: 'exec', payload: { repo, ms: 600 + (i % 4) * 150 }, key: `delivery-${i}`, limit: { key: `repo:${repo}`, max: 2 } });
      ids.push(r.id);
    }
    // A redelivery of every webhook adds nothing.
    for (let i = 0; i < 20; i++) expect((await web.enqueue({ kind: 'exec', payload: { repo: 'x/x', ms: 1 }, key: `delivery-${i}` })).created).toBe(false);

    // Kill w1 while it runs something.
    const deadline = Date.now() + 30_000;
    while (!lines('w1').some((l) => l.what === 'start')) {
      if (Date.now() > deadline) throw new Error(`w1 never started a job: ${w1.output()} ${w2.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    w1.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await w1.exited).signal).toBe('SIGKILL');
    const w1Lines = lines('w1');
    const cut = w1Lines.filter((l) => l.what === 'start' && !w1Lines.some((e) => e.what === 'end' && e.id === l.id)).map((l) => l.id);
    expect(cut.length).toBeGreaterThan(0);

    // Redis goes away for a moment while w2 is busy.
    await new Promise((r) => setTimeout(r, 800));
    expect((await web.counts()).done).toBeLessThan(15);
    await redis.restart(700);
    const restartedAt = Date.now();

    // Everything completes.
    const doneBy = Date.now() + 120_000;
    for (;;) {
      const counts = await web.counts();
      if (counts.done === 20) break;
      if (Date.now() > doneBy) throw new Error(`not all jobs done: ${JSON.stringify(counts)}\n${w2.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const all = [...lines('w1'), ...lines('w2')];
    // Exactly once: one completed run per job; the only second starts are the runs w1's death cut short.
    for (const id of ids) {
      expect({ id, ends: all.filter((l) => l.what === 'end' && l.id === id).length }).toEqual({ id, ends: 1 });
      const starts = all.filter((l) => l.what === 'start' && l.id === id).length;
      expect({ id, starts }).toEqual({ id, starts: cut.includes(id) ? 2 : 1 });
    }
    for (const id of cut) expect(all.find((l) => l.what === 'end' && l.id === id)!.worker).toBe('w2');
    // Work went on after the restart: it did not all happen before.
    expect(all.filter((l) => l.what === 'start' && l.at > restartedAt).length).toBeGreaterThan(3);
    const records = await web.list({ kind: 'exec' });
    expect(records).toHaveLength(20);
    expect(records.every((r) => r.state === 'done' && r.attempts === 1 && r.error === null)).toBe(true);

    // The limit: at no moment more than 2 runs of one repository, counting both workers.
    for (const repo of new Set(repos)) {
      const spans = all
        .filter((l) => l.what === 'start' && l.repo === repo)
        .map((s) => {
          const end = all.find((e) => e.what === 'end' && e.id === s.id && e.worker === s.worker && e.at >= s.at);
          return [s.at, end ? end.at : killedAt] as const;
        });
      const events = spans.flatMap(([a, b]) => [
        [a, 1],
        [b, -1],
      ]) as Array<[number, number]>;
      events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      let live = 0;
      let peak = 0;
      for (const [, d] of events) peak = Math.max(peak, (live += d));
      expect({ repo, peak: peak <= 2 }).toEqual({ repo, peak: true });
    }

    await web.stop();
    conn.disconnect();
    w2.child.kill('SIGTERM');
    await w2.exited;
    appendFileSync(join(dir, 'done'), '');
  });
});
