/** The persistent job queue on SQLite: idempotency, concurrency, retries, supersession, resume. */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { backoffMs, PermanentJobError, pruneDue, type JobRecord } from '../../src/queue/queue.js';
import { SqliteJobQueue } from '../../src/queue/sqliteQueue.js';
import { SwtError } from '../../src/util/errors.js';
import { tsChildRunner } from '../helpers/tsChild.js';

let dir: string;
const open: Array<{ q: SqliteJobQueue; db: Database.Database }> = [];

function makeQueue(file = join(dir, 'q.db'), opts: ConstructorParameters<typeof SqliteJobQueue>[1] = {}) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  const q = new SqliteJobQueue(db, { pollMs: 20, backoff: { baseMs: 30 }, ...opts });
  open.push({ q, db });
  return q;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), `swt-queuetest-${process.pid}-`));
});
afterEach(async () => {
  for (const { q, db } of open.splice(0)) {
    await q.stop({ timeoutMs: 1000 });
    db.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('SqliteJobQueue', () => {
  it('a key enqueued twice (a redelivered webhook) is one job, run once', async () => {
    const q = makeQueue();
    const runs: unknown[] = [];
    q.work<{ n: number }>('k', async ({ job }) => void runs.push(job.payload.n));
    await q.start();
    const first = await q.enqueue({ kind: 'k', payload: { n: 1 }, key: 'delivery-1' });
    const again = await Promise.all([1, 2, 3, 4].map(() => q.enqueue({ kind: 'k', payload: { n: 2 }, key: 'delivery-1' })));
    expect(first.created).toBe(true);
    expect(again.map((a) => [a.id, a.created])).toEqual([1, 2, 3, 4].map(() => [first.id, false]));
    await q.drain(5000);
    expect(runs).toEqual([1]);
    // Still a no-op once the job is done.
    expect((await q.enqueue({ kind: 'k', payload: { n: 3 }, key: 'delivery-1' })).created).toBe(false);
    await q.drain(5000);
    expect(runs).toEqual([1]);
    expect((await q.get(first.id))?.state).toBe('done');
  });

  it('runs at most `concurrency` jobs of a kind at once, and kinds do not block each other', async () => {
    const q = makeQueue();
    let live = 0;
    let peak = 0;
    const order: string[] = [];
    q.work('slow', async () => {
      peak = Math.max(peak, ++live);
      await sleep(60);
      live--;
      order.push('slow');
    }, { concurrency: 2 });
    q.work('fast', async () => void order.push('fast'), { concurrency: 1 });
    await q.start();
    for (let i = 0; i < 6; i++) await q.enqueue({ kind: 'slow', payload: i });
    await sleep(10);
    await q.enqueue({ kind: 'fast', payload: 0 });
    await q.drain(5000);
    expect(peak).toBe(2);
    // The fast job did not wait for the six slow ones.
    expect(order.indexOf('fast')).toBeLessThan(3);
  });

  it('retries a failed attempt with exponential backoff, then succeeds', async () => {
    const q = makeQueue();
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
    await q.drain(5000);
    const job = await q.get(id);
    expect(job).toMatchObject({ state: 'done', attempts: 3 });
    expect(seen).toEqual([
      { attempt: 1, lastAttempt: false },
      { attempt: 2, lastAttempt: false },
      { attempt: 3, lastAttempt: true },
    ]);
    expect(retries.map((r) => r.error)).toEqual(['GitHub answered 502 (attempt 1)', 'GitHub answered 502 (attempt 2)']);
    // 30 ms then 60 ms (±20 %), plus polling.
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(24);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(48);
    expect([1, 2, 3, 10].map((a) => backoffMs(a, { baseMs: 1000, maxMs: 5000, random: () => 0.5 }))).toEqual([1000, 2000, 4000, 5000]);
  });

  it('fails at once on a permanent error, and after maxAttempts on others; secrets never reach the stored error', async () => {
    process.env.SWT_TEST_TOKEN = 'ghs_queue_secret_value_123';
    try {
      const q = makeQueue();
      let calls = 0;
      q.work('bad', async ({ job }) => {
        calls++;
        if ((job.payload as { kind: string }).kind === 'config') throw new SwtError('BAD_CONFIG', '.github/swt.yml: gate.mode: Invalid option');
        if ((job.payload as { kind: string }).kind === 'perm') throw new PermanentJobError('no linked issue');
        throw new Error('token ghs_queue_secret_value_123 rejected\nsecond line');
      });
      await q.start();
      const a = await q.enqueue({ kind: 'bad', payload: { kind: 'config' } });
      const b = await q.enqueue({ kind: 'bad', payload: { kind: 'perm' } });
      const c = await q.enqueue({ kind: 'bad', payload: { kind: 'other' }, maxAttempts: 2 });
      await q.drain(5000);
      expect(await q.get(a.id)).toMatchObject({ state: 'failed', attempts: 1, error: '.github/swt.yml: gate.mode: Invalid option' });
      expect(await q.get(b.id)).toMatchObject({ state: 'failed', attempts: 1, error: 'no linked issue' });
      expect(await q.get(c.id)).toMatchObject({ state: 'failed', attempts: 2, error: 'token [REDACTED] rejected' });
      expect(calls).toBe(4);
    } finally {
      delete process.env.SWT_TEST_TOKEN;
    }
  });

  it('a newer job of a group cancels the queued ones and aborts the running one', async () => {
    const q = makeQueue();
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
    // Two pushes in quick succession: the second supersedes both the running and the queued job.
    const two = await q.enqueue({ kind: 'validate', payload: { n: 2 }, group: 'o/r#7', delayMs: 100 });
    const three = await q.enqueue({ kind: 'validate', payload: { n: 3 }, group: 'o/r#7' });
    expect(two.superseded).toEqual([one.id]);
    expect(three.superseded.sort()).toEqual([one.id, two.id].sort());
    await q.drain(5000);
    expect(aborted).toBe(true);
    expect(ran).toEqual([1, 3]);
    expect((await q.list({ group: 'o/r#7' })).map((j) => j.state)).toEqual(['cancelled', 'cancelled', 'done']);
    // Another group is untouched.
    const other = await q.enqueue({ kind: 'validate', payload: { n: 4 }, group: 'o/r#8' });
    expect(other.superseded).toEqual([]);
    await q.drain(5000);
  });

  it('finished jobs are dropped after the retention period; newer ones keep their keys', async () => {
    const file = join(dir, 'retention.db');
    const q1 = makeQueue(file);
    q1.work('k', async () => {});
    await q1.start();
    const old = await q1.enqueue({ kind: 'k', payload: {}, key: 'old' });
    const recent = await q1.enqueue({ kind: 'k', payload: {}, key: 'recent' });
    await q1.drain(5000);
    await q1.stop();
    open[0]!.db.prepare('UPDATE jobs SET updated_at = ? WHERE id = ?').run(Date.now() - 31 * 86_400_000, Number(old.id));
    const q2 = makeQueue(file);
    await q2.start();
    expect((await q2.list()).map((j) => j.key)).toEqual(['recent']);
    expect((await q2.enqueue({ kind: 'k', payload: {}, key: 'recent' })).created).toBe(false);
    expect(recent.created).toBe(true);
  });

  it('resumes a job whose process died, without counting the lost attempt', async () => {
    const file = join(dir, 'resume.db');
    const q1 = makeQueue(file);
    const { id } = await q1.enqueue({ kind: 'work', payload: { n: 1 }, maxAttempts: 1 });
    // As a killed process leaves it: running, owned by a pid that no longer exists.
    const db = open[0]!.db;
    db.prepare(`UPDATE jobs SET state = 'running', attempts = 1, owner = 'gone', owner_host = ?, owner_pid = 2147483646, lease_until = ? WHERE id = ?`).run(
      (await import('node:os')).hostname(),
      Date.now() + 3_600_000,
      Number(id),
    );
    const q2 = makeQueue(file);
    const runs: number[] = [];
    q2.work<{ n: number }>('work', async ({ job, attempt }) => void runs.push(job.payload.n * 10 + attempt));
    await q2.start();
    await q2.drain(5000);
    expect(runs).toEqual([11]);
    expect(await q2.get(id)).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('a real process killed with SIGKILL mid-job: the next start resumes the job and it completes once', async () => {
    const file = join(dir, 'kill.db');
    const runner = tsChildRunner();
    try {
      const src = pathToFileURL(resolve('src/queue/sqliteQueue.ts')).href;
      const child = runner.start(
        'worker',
        `import Database from '${pathToFileURL(resolve('node_modules/better-sqlite3/lib/index.js')).href}';
import { SqliteJobQueue } from '${src}';
const db = new Database(process.argv[2]);
db.pragma('journal_mode = WAL');
const q = new SqliteJobQueue(db, { pollMs: 20 });
q.work('work', async ({ job }) => { console.log('STARTED ' + job.id); await new Promise(() => {}); });
await q.start();
await q.enqueue({ kind: 'work', payload: { n: 1 }, key: 'only-once', maxAttempts: 1 });
`,
        [file],
      );
      await child.waitFor(/STARTED \d+/);
      child.child.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');

      const q = makeQueue(file);
      const runs: string[] = [];
      q.work('work', async ({ job }) => void runs.push(job.id));
      await q.start();
      await q.drain(5000);
      expect(runs).toEqual(['1']);
      expect(await q.list()).toMatchObject([{ id: '1', state: 'done', attempts: 1, key: 'only-once' }]);
    } finally {
      runner.cleanup();
    }
  });
});

describe('pruneDue', () => {
  it('says yes once an hour, counted from the last yes', () => {
    let t = 0;
    const due = pruneDue(() => t);
    t = 3_599_999;
    expect(due()).toBe(false);
    t = 3_600_000;
    expect([due(), due()]).toEqual([true, false]);
    t = 7_199_999;
    expect(due()).toBe(false);
    t = 7_200_000;
    expect(due()).toBe(true);
  });
});
