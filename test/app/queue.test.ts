/**
 * The persistent job queue on SQLite, what only it does: resuming a dead process's job. Idempotency,
 * concurrency, retries, supersession and retention hold for both engines in test/scale/queue.contract.test.ts.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pruneDue } from '../../src/queue/queue.js';
import { SqliteJobQueue } from '../../src/queue/sqliteQueue.js';
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
