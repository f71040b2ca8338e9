/**
 * One contract, two engines: the embedded SQLite queue and the BullMQ queue on a real
 * redis-server behave the same for keys, concurrency, retries, permanent errors, supersession,
 * per-key limits shared by several workers, and the status page's reads.
 */
import Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BullJobQueue } from '../../src/queue/bullQueue.js';
import { PermanentJobError, type JobQueue, type JobRecord } from '../../src/queue/queue.js';
import { connectRedis } from '../../src/queue/redis.js';
import { SqliteJobQueue } from '../../src/queue/sqliteQueue.js';
import { SwtError } from '../../src/util/errors.js';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: RedisServer;
let dir: string;
let cleanups: Array<() => Promise<void> | void> = [];
let round = 0;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), `swt-contract-${process.pid}-`));
  round++;
});
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  rmSync(dir, { recursive: true, force: true });
});

type Engine = 'sqlite' | 'bullmq';

/** A queue of the engine; every call within one test shares the same store (file or Redis prefix). */
function makeQueue(engine: Engine, opts: { retentionMs?: number } = {}): JobQueue {
  if (engine === 'sqlite') {
    const db = new Database(join(dir, 'q.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    const q = new SqliteJobQueue(db, { pollMs: 20, backoff: { baseMs: 30 }, ...opts });
    cleanups.push(async () => {
      await q.stop({ timeoutMs: 1000 });
      db.close();
    });
    return q;
  }
  const conn: Redis = connectRedis(redis.url);
  const q = new BullJobQueue(conn, { prefix: `t${process.pid}-${round}`, backoff: { baseMs: 30 }, lockDurationMs: 3000, stalledIntervalMs: 1000, limitRetryMs: 40, ...opts });
  cleanups.push(async () => {
    await q.stop({ timeoutMs: 1000 });
    conn.disconnect();
  });
  return q;
}

describe.each<Engine>(['sqlite', 'bullmq'])('JobQueue contract on %s', (engine) => {
  it('a key enqueued twice (a redelivered webhook) is one job, run once, and still blocks its key when done', async () => {
    const q = makeQueue(engine);
    const runs: unknown[] = [];
    q.work<{ n: number }>('k', async ({ job }) => void runs.push(job.payload.n));
    await q.start();
    const first = await q.enqueue({ kind: 'k', payload: { n: 1 }, key: 'delivery-1' });
    const again = await Promise.all([1, 2, 3, 4].map(() => q.enqueue({ kind: 'k', payload: { n: 2 }, key: 'delivery-1' })));
    expect(first.created).toBe(true);
    expect(again.map((a) => [a.id, a.created])).toEqual([1, 2, 3, 4].map(() => [first.id, false]));
    await q.drain(10_000);
    expect(runs).toEqual([1]);
    expect((await q.enqueue({ kind: 'k', payload: { n: 3 }, key: 'delivery-1' })).created).toBe(false);
    await q.drain(10_000);
    expect(runs).toEqual([1]);
    expect(await q.findByKey('delivery-1')).toMatchObject({ id: first.id, state: 'done', attempts: 1, payload: { n: 1 } });
  });

  it('drops finished jobs past the retention, their keys with them; open and recent jobs stay', async () => {
    const q = makeQueue(engine, { retentionMs: 1000 });
    q.work('k', async () => undefined);
    q.work('bad', async () => {
      throw new PermanentJobError('no');
    });
    await q.start();
    const old = await q.enqueue({ kind: 'k', payload: 1, key: 'delivery-old' });
    const failed = await q.enqueue({ kind: 'bad', payload: 2, key: 'delivery-bad', group: 'g' });
    const waiting = await q.enqueue({ kind: 'nobody-works-this', payload: 3, key: 'delivery-open' });
    await q.drain(10_000);
    await sleep(1100);
    const fresh = await q.enqueue({ kind: 'k', payload: 4, key: 'delivery-fresh' });
    await q.drain(10_000);
    expect(await q.prune()).toBe(2);
    expect(await q.get(old.id)).toBeUndefined();
    expect(await q.get(failed.id)).toBeUndefined();
    expect(await q.findByKey('delivery-old')).toBeUndefined();
    expect((await q.recent(10)).map((j) => j.id)).toEqual([fresh.id, waiting.id]);
    expect(await q.counts()).toEqual({ queued: 1, running: 0, done: 1, failed: 0, cancelled: 0 });
    expect(await q.findByKey('delivery-fresh')).toMatchObject({ id: fresh.id, state: 'done' });
    // A key whose job is gone can be used again; the group is free too.
    expect((await q.enqueue({ kind: 'k', payload: 5, key: 'delivery-old', group: 'g' })).created).toBe(true);
    await q.drain(10_000);
    expect(await q.prune()).toBe(0);
  });

  it('runs at most `concurrency` jobs of a kind at once, and kinds do not block each other', async () => {
    const q = makeQueue(engine);
    let live = 0;
    let peak = 0;
    const order: string[] = [];
    q.work('slow', async () => {
      peak = Math.max(peak, ++live);
      await sleep(80);
      live--;
      order.push('slow');
    }, { concurrency: 2 });
    q.work('fast', async () => void order.push('fast'), { concurrency: 1 });
    await q.start();
    for (let i = 0; i < 6; i++) await q.enqueue({ kind: 'slow', payload: i });
    await sleep(10);
    await q.enqueue({ kind: 'fast', payload: 0 });
    await q.drain(10_000);
    expect(peak).toBe(2);
    expect(order.indexOf('fast')).toBeLessThan(3);
  });

  it('retries a failed attempt with exponential backoff, then succeeds', async () => {
    const q = makeQueue(engine);
    const at: number[] = [];
    const seen: Array<{ attempt: number; lastAttempt: boolean }> = [];
    q.work('flaky', async ({ attempt, lastAttempt }) => {
      at.push(Date.now());
      seen.push({ attempt, lastAttempt });
      if (attempt < 3) throw new Error(`GitHub answered 502 (attempt ${attempt})`);
    });
    const retries: JobRecord[] = [];
    q.on('retrying', (j) => retries.push(j));
    await q.start();
    const { id } = await q.enqueue({ kind: 'flaky', payload: {}, maxAttempts: 3 });
    await q.drain(10_000);
    expect(await q.get(id)).toMatchObject({ state: 'done', attempts: 3, error: null });
    expect(seen).toEqual([
      { attempt: 1, lastAttempt: false },
      { attempt: 2, lastAttempt: false },
      { attempt: 3, lastAttempt: true },
    ]);
    expect(retries.map((r) => r.error)).toEqual(['GitHub answered 502 (attempt 1)', 'GitHub answered 502 (attempt 2)']);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(24);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(48);
  });

  it('fails at once on a permanent error, and after maxAttempts on others; secrets never reach the stored error', async () => {
    process.env.SWT_TEST_TOKEN = 'ghs_queue_secret_value_123';
    try {
      const q = makeQueue(engine);
      let calls = 0;
      q.work('bad', async ({ job }) => {
        calls++;
        if ((job.payload as { kind: string }).kind === 'config') throw new SwtError('BAD_CONFIG', '.github/swt.yml: gate.mode: Invalid option');
        if ((job.payload as { kind: string }).kind === 'perm') throw new PermanentJobError('no linked issue');
        throw new Error('token ghs_queue_secret_value_123 rejected\nsecond line');
      });
      const failed: string[] = [];
      q.on('failed', (j) => failed.push(j.id));
      await q.start();
      const a = await q.enqueue({ kind: 'bad', payload: { kind: 'config' } });
      const b = await q.enqueue({ kind: 'bad', payload: { kind: 'perm' } });
      const c = await q.enqueue({ kind: 'bad', payload: { kind: 'other' }, maxAttempts: 2 });
      await q.drain(10_000);
      expect(await q.get(a.id)).toMatchObject({ state: 'failed', attempts: 1, error: '.github/swt.yml: gate.mode: Invalid option' });
      expect(await q.get(b.id)).toMatchObject({ state: 'failed', attempts: 1, error: 'no linked issue' });
      expect(await q.get(c.id)).toMatchObject({ state: 'failed', attempts: 2, error: 'token [REDACTED] rejected' });
      expect(calls).toBe(4);
      expect(failed.sort()).toEqual([a.id, b.id, c.id].sort());
    } finally {
      delete process.env.SWT_TEST_TOKEN;
    }
  });

  it('a newer job of a group cancels the queued ones and aborts the running one', async () => {
    const q = makeQueue(engine);
    const ran: number[] = [];
    let aborted = false;
    q.work<{ n: number }>('validate', async ({ job, signal }) => {
      ran.push(job.payload.n);
      if (job.payload.n === 1) {
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        aborted = signal.aborted;
      }
    });
    await q.start();
    const one = await q.enqueue({ kind: 'validate', payload: { n: 1 }, group: 'o/r#7' });
    while ((await q.get(one.id))?.state !== 'running') await sleep(5);
    const two = await q.enqueue({ kind: 'validate', payload: { n: 2 }, group: 'o/r#7', delayMs: 150 });
    const three = await q.enqueue({ kind: 'validate', payload: { n: 3 }, group: 'o/r#7' });
    expect(two.superseded).toEqual([one.id]);
    // The running job may already have stopped (cancelled by two) by the time three arrives.
    expect(three.superseded).toContain(two.id);
    expect(three.superseded.every((id) => id === one.id || id === two.id)).toBe(true);
    await q.drain(10_000);
    await sleep(300); // the cancelled delayed job must not run later either
    expect(aborted).toBe(true);
    expect(ran).toEqual([1, 3]);
    expect((await q.list({ group: 'o/r#7' })).map((j) => [j.state, j.error])).toEqual([
      ['cancelled', 'superseded'],
      ['cancelled', 'superseded'],
      ['done', null],
    ]);
    expect((await q.enqueue({ kind: 'validate', payload: { n: 4 }, group: 'o/r#8' })).superseded).toEqual([]);
    await q.drain(10_000);
  });

  it('a running job becomes its work: kind, payload, a second key that runs it once, and a group where it supersedes older jobs only', async () => {
    const q = makeQueue(engine);
    const outcome: Record<number, { taken: boolean; superseded: string[] }> = {};
    const gates: Record<number, Promise<void>> = {};
    let open10: () => void = () => {};
    gates[10] = new Promise((r) => (open10 = r));
    q.work<{ n: number; key: string }>('work', async ({ job, signal }) => {
      await gates[job.payload.n];
      outcome[job.payload.n] = await q.become(job.id, { kind: 'validate', payload: { n: job.payload.n, decided: true }, key: job.payload.key, group: 'o/r#9' });
      if (!outcome[job.payload.n]!.taken) await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    }, { concurrency: 6 });
    q.work('validate', async () => {});
    await q.start();
    const one = await q.enqueue({ kind: 'work', payload: { n: 1, key: 'v:a' }, key: 'd1' });
    while (!outcome[1]) await sleep(5);
    expect(outcome[1]).toEqual({ taken: false, superseded: [] });
    expect(await q.get(one.id)).toMatchObject({ kind: 'validate', payload: { n: 1, decided: true }, key: 'd1', group: 'o/r#9', state: 'running' });
    if (q instanceof BullJobQueue) {
      // Quiet past the reconciler's grace: it finds the job in the BullMQ queue it was enqueued in, and adds no second run.
      await sleep(5200);
      expect(await q.reconcile()).toBe(0);
    }
    // The work key blocks like a key: a lookup finds the job, an enqueue under it adds nothing.
    expect((await q.findByKey('v:a'))?.id).toBe(one.id);
    expect((await q.enqueue({ kind: 'validate', payload: {}, key: 'v:a' })).created).toBe(false);
    // A newer job taking the same work key: taken, and it stays what it was.
    const dup = await q.enqueue({ kind: 'work', payload: { n: 2, key: 'v:a' }, key: 'd2' });
    while (!outcome[2]) await sleep(5);
    expect(outcome[2]).toEqual({ taken: true, superseded: [] });
    // A newer job of the group supersedes the running older one.
    const three = await q.enqueue({ kind: 'work', payload: { n: 3, key: 'v:b' }, key: 'd3' });
    while (!outcome[3]) await sleep(5);
    expect(outcome[3]).toEqual({ taken: false, superseded: [one.id] });
    // An older job deciding last supersedes nothing newer.
    const ten = await q.enqueue({ kind: 'work', payload: { n: 10, key: 'v:c' }, key: 'd10' });
    expect(Number(ten.id)).toBeGreaterThan(Number(three.id));
    const eleven = await q.enqueue({ kind: 'work', payload: { n: 11, key: 'v:d' }, key: 'd11' });
    while (!outcome[11]) await sleep(5);
    expect(outcome[11]).toEqual({ taken: false, superseded: [three.id] });
    open10();
    while (!outcome[10]) await sleep(5);
    expect(outcome[10]).toEqual({ taken: false, superseded: [] });
    await q.cancelGroup('o/r#9');
    await q.drain(10_000);
    expect((await q.get(one.id))?.state).toBe('cancelled');
    expect(await q.get(dup.id)).toMatchObject({ kind: 'work', state: 'done', payload: { n: 2 } });
  }, 30_000);

  it('a per-key limit holds across two workers, and other keys are not starved', async () => {
    // Two workers with 3 slots each, one store: repository a/noisy may use at most 2 at once.
    const workers = [makeQueue(engine), makeQueue(engine)];
    const live = new Map<string, number>();
    const peak = new Map<string, number>();
    const finished: string[] = [];
    for (const q of workers) {
      q.work<{ repo: string; n: number }>('heavy', async ({ job }) => {
        const r = job.payload.repo;
        live.set(r, (live.get(r) ?? 0) + 1);
        peak.set(r, Math.max(peak.get(r) ?? 0, live.get(r)!));
        await sleep(120);
        live.set(r, live.get(r)! - 1);
        finished.push(`${r}#${job.payload.n}`);
      }, { concurrency: 3 });
    }
    for (let n = 0; n < 8; n++) await workers[0]!.enqueue({ kind: 'heavy', payload: { repo: 'a/noisy', n }, limit: { key: 'repo:a/noisy', max: 2 } });
    for (let n = 0; n < 2; n++) await workers[0]!.enqueue({ kind: 'heavy', payload: { repo: 'b/quiet', n }, limit: { key: 'repo:b/quiet', max: 2 } });
    await Promise.all(workers.map((q) => q.start()));
    await Promise.all(workers.map((q) => q.drain(30_000)));
    expect(peak.get('a/noisy')).toBe(2);
    expect(finished).toHaveLength(10);
    // b/quiet's two jobs ran beside the noisy ones, not after all eight of them.
    const lastQuiet = Math.max(finished.indexOf('b/quiet#0'), finished.indexOf('b/quiet#1'));
    expect(lastQuiet).toBeLessThan(6);
    const all = await workers[0]!.list({ kind: 'heavy' });
    expect(all.every((j) => j.state === 'done' && j.attempts === 1)).toBe(true);
    expect(all[0]!.limit).toEqual({ key: 'repo:a/noisy', max: 2 });
  });

  it('counts jobs by state and lists the newest first', async () => {
    const q = makeQueue(engine);
    q.work('ok', async () => undefined);
    q.work('no', async () => {
      throw new PermanentJobError('nope');
    });
    await q.start();
    for (let i = 0; i < 3; i++) await q.enqueue({ kind: 'ok', payload: i });
    const last = await q.enqueue({ kind: 'no', payload: 9 });
    await q.drain(10_000);
    expect(await q.counts()).toEqual({ queued: 0, running: 0, done: 3, failed: 1, cancelled: 0 });
    const recent = await q.recent(2);
    expect(recent.map((j) => j.id)).toEqual([last.id, String(Number(last.id) - 1)]);
    expect(recent[0]).toMatchObject({ kind: 'no', state: 'failed', error: 'nope' });
  });
});
