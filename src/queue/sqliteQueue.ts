/**
 * JobQueue on SQLite (better-sqlite3, WAL): one table, claimed with a conditional UPDATE, leases
 * renewed while a job runs. A job whose owner process is gone (or whose lease ran out) goes back
 * to the queue at the next start, so a killed App resumes its work.
 */
import { errorLine } from '../util/errors.js';
import { pidAlive } from '../util/processes.js';
import type { Database } from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../util/logger.js';
import { runAttempt, type AttemptOutcome } from './attempt.js';
import { JOB_STATES, pruneDue, SUPERSEDED, type EnqueueResult, type JobEvent, type JobHandler, type JobQueue, type JobRecord, type BecomeSpec, type JobSpec, type JobState } from './queue.js';

export interface SqliteQueueOptions {
  /** How long a claim lasts without renewal; renewed every third of it. */
  leaseMs?: number;
  /** How often due jobs (delayed, retried) and expired leases are looked for. */
  pollMs?: number;
  /** Retry delays: see backoffMs. */
  backoff?: { baseMs?: number; maxMs?: number };
  /** A job resumed this many times after its process died is failed instead (it may be what kills it). */
  maxRecoveries?: number;
  /** Finished jobs older than this are deleted at start (default 30 days). */
  retentionMs?: number;
  logger?: Logger;
}

interface Row {
  id: number;
  kind: string;
  payload: string;
  key: string | null;
  grp: string | null;
  state: JobState;
  attempts: number;
  max_attempts: number;
  recoveries: number;
  run_at: number;
  owner: string | null;
  owner_host: string | null;
  owner_pid: number | null;
  lease_until: number | null;
  cancel_requested: number;
  priority: number;
  limit_key: string | null;
  limit_max: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  key TEXT UNIQUE,
  grp TEXT,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  recoveries INTEGER NOT NULL DEFAULT 0,
  run_at INTEGER NOT NULL,
  owner TEXT,
  owner_host TEXT,
  owner_pid INTEGER,
  lease_until INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 0,
  limit_key TEXT,
  limit_max INTEGER,
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, kind, run_at);
CREATE INDEX IF NOT EXISTS jobs_group ON jobs (grp, state);
`;

/** Columns added after the first release: a database made before them gets them. */
const ADDED_COLUMNS: Array<[string, string]> = [
  ['priority', 'INTEGER NOT NULL DEFAULT 0'],
  ['limit_key', 'TEXT'],
  ['limit_max', 'INTEGER'],
  // The key a job took when it became the work it decided on (JobQueue.become); unique, as `key`.
  ['work_key', 'TEXT'],
];

function toRecord<P>(r: Row): JobRecord<P> {
  return {
    id: String(r.id),
    kind: r.kind,
    payload: JSON.parse(r.payload) as P,
    key: r.key,
    group: r.grp,
    state: r.state,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    error: r.error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    runAt: r.run_at,
    limit: r.limit_key ? { key: r.limit_key, max: r.limit_max ?? 1 } : null,
  };
}


interface Worker {
  handler: JobHandler<unknown>;
  concurrency: number;
  running: number;
}

export class SqliteJobQueue implements JobQueue {
  readonly #db: Database;
  readonly #opts: Required<Omit<SqliteQueueOptions, 'logger' | 'backoff'>> & Pick<SqliteQueueOptions, 'logger' | 'backoff'>;
  readonly #owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  readonly #workers = new Map<string, Worker>();
  readonly #live = new Map<number, { controller: AbortController; done: Promise<void> }>();
  readonly #events = new EventEmitter();
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #stopping = false;
  #ticking = false;
  #tickAgain = false;

  constructor(db: Database, opts: SqliteQueueOptions = {}) {
    this.#db = db;
    this.#opts = { leaseMs: 30_000, pollMs: 250, maxRecoveries: 5, retentionMs: 30 * 86_400_000, ...opts };
    db.exec(SCHEMA);
    const have = new Set((db.prepare('PRAGMA table_info(jobs)').all() as Array<{ name: string }>).map((c) => c.name));
    for (const [name, type] of ADDED_COLUMNS) if (!have.has(name)) db.exec(`ALTER TABLE jobs ADD COLUMN ${name} ${type}`);
    db.exec('CREATE INDEX IF NOT EXISTS jobs_limit ON jobs (limit_key, state)');
    db.exec('CREATE UNIQUE INDEX IF NOT EXISTS jobs_work_key ON jobs (work_key)');
  }

  async enqueue<P>(spec: JobSpec<P>): Promise<EnqueueResult> {
    const now = Date.now();
    const tx = this.#db.transaction((): EnqueueResult => {
      if (spec.key) {
        const existing = this.#db.prepare('SELECT id FROM jobs WHERE key = ? OR work_key = ?').get(spec.key, spec.key) as { id: number } | undefined;
        if (existing) return { id: String(existing.id), created: false, superseded: [] };
      }
      const info = this.#db
        .prepare(
          `INSERT INTO jobs (kind, payload, key, grp, state, max_attempts, run_at, priority, limit_key, limit_max, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          spec.kind,
          JSON.stringify(spec.payload),
          spec.key ?? null,
          spec.group ?? null,
          Math.max(1, spec.maxAttempts ?? 3),
          now + (spec.delayMs ?? 0),
          spec.priority ?? 0,
          spec.limit?.key ?? null,
          spec.limit ? Math.max(1, spec.limit.max) : null,
          now,
          now,
        );
      const id = Number(info.lastInsertRowid);
      const superseded = spec.group ? this.#cancelGroupRows(spec.group, id) : [];
      return { id: String(id), created: true, superseded };
    });
    const result = tx.immediate();
    for (const id of result.superseded) this.#abortLocal(Number(id));
    if (result.created) this.#kick();
    return result;
  }

  work<P>(kind: string, handler: JobHandler<P>, opts: { concurrency?: number } = {}): void {
    this.#workers.set(kind, { handler: handler as JobHandler<unknown>, concurrency: Math.max(1, opts.concurrency ?? 1), running: 0 });
    if (this.#started) this.#kick();
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#stopping = false;
    await this.prune();
    this.#recover();
    const due = pruneDue();
    this.#timer = setInterval(() => {
      this.#recover();
      this.#kick();
      if (due()) void this.prune().catch((e) => this.#opts.logger?.warn({ err: errorLine(e, 1000) }, 'dropping old finished jobs failed'));
    }, this.#opts.pollMs);
    this.#timer.unref();
    this.#kick();
  }

  // Finished jobs are kept a while (their keys make redeliveries no-ops), then dropped.
  async prune(): Promise<number> {
    return this.#db.prepare(`DELETE FROM jobs WHERE state IN ('done', 'failed', 'cancelled') AND updated_at < ?`).run(Date.now() - this.#opts.retentionMs).changes;
  }

  async stop(opts: { timeoutMs?: number } = {}): Promise<void> {
    this.#stopping = true;
    this.#started = false;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const running = [...this.#live.values()].map((l) => l.done);
    if (running.length === 0) return;
    const timeout = opts.timeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(running), new Promise((r) => (timer = setTimeout(r, timeout)))]);
    clearTimeout(timer);
  }

  async get<P = unknown>(id: string): Promise<JobRecord<P> | undefined> {
    const r = this.#db.prepare('SELECT * FROM jobs WHERE id = ?').get(Number(id)) as Row | undefined;
    return r ? toRecord<P>(r) : undefined;
  }

  async findByKey<P = unknown>(key: string): Promise<JobRecord<P> | undefined> {
    const r = this.#db.prepare('SELECT * FROM jobs WHERE key = ? OR work_key = ?').get(key, key) as Row | undefined;
    return r ? toRecord<P>(r) : undefined;
  }

  async become<P>(id: string, spec: BecomeSpec<P>): Promise<{ taken: boolean; superseded: string[] }> {
    const n = Number(id);
    const tx = this.#db.transaction(() => {
      if (spec.key && this.#db.prepare('SELECT id FROM jobs WHERE (key = ? OR work_key = ?) AND id != ?').get(spec.key, spec.key, n)) return { taken: true, superseded: [] };
      this.#db.prepare('UPDATE jobs SET kind = ?, payload = ?, work_key = coalesce(?, work_key), grp = coalesce(?, grp), updated_at = ? WHERE id = ?').run(spec.kind, JSON.stringify(spec.payload), spec.key ?? null, spec.group ?? null, Date.now(), n);
      // Only older jobs: of two deliveries deciding at once, the later one wins, whichever decides last.
      return { taken: false, superseded: spec.group ? this.#cancelGroupRows(spec.group, n, n) : [] };
    });
    const result = tx.immediate();
    for (const s of result.superseded) this.#abortLocal(Number(s));
    return result;
  }

  async list<P = unknown>(filter: { kind?: string; state?: JobState; group?: string } = {}): Promise<JobRecord<P>[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.kind) (where.push('kind = ?'), args.push(filter.kind));
    if (filter.state) (where.push('state = ?'), args.push(filter.state));
    if (filter.group) (where.push('grp = ?'), args.push(filter.group));
    const rows = this.#db.prepare(`SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`).all(...args) as Row[];
    return rows.map((r) => toRecord<P>(r));
  }

  async recent<P = unknown>(n: number): Promise<JobRecord<P>[]> {
    const rows = this.#db.prepare('SELECT * FROM jobs ORDER BY id DESC LIMIT ?').all(Math.max(0, Math.floor(n))) as Row[];
    return rows.map((r) => toRecord<P>(r));
  }

  async counts(): Promise<Record<JobState, number>> {
    const rows = this.#db.prepare('SELECT state, COUNT(*) AS n FROM jobs GROUP BY state').all() as Array<{ state: JobState; n: number }>;
    const out = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    for (const r of rows) out[r.state] = r.n;
    return out;
  }

  async cancelGroup(group: string): Promise<string[]> {
    const ids = this.#db.transaction(() => this.#cancelGroupRows(group, -1)).immediate();
    for (const id of ids) this.#abortLocal(Number(id));
    return ids;
  }

  async drain(timeoutMs = 10 * 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const kinds = [...this.#workers.keys()];
    for (;;) {
      const marks = kinds.map(() => '?').join(',');
      const busy = this.#db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE kind IN (${marks}) AND state IN ('queued', 'running')`).get(...kinds) as { n: number };
      if (busy.n === 0 && this.#live.size === 0) return;
      if (Date.now() > deadline) throw new Error(`the queue did not drain within ${timeoutMs} ms (${busy.n} jobs left)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  on(event: JobEvent, listener: (job: JobRecord) => void): void {
    this.#events.on(event, listener);
  }

  /** Queued jobs of the group become cancelled; running ones are asked to stop. Returns their ids. */
  #cancelGroupRows(group: string, exceptId: number, below = Number.MAX_SAFE_INTEGER): string[] {
    const rows = this.#db.prepare(`SELECT id, state FROM jobs WHERE grp = ? AND id != ? AND id < ? AND state IN ('queued', 'running')`).all(group, exceptId, below) as Array<{ id: number; state: JobState }>;
    const now = Date.now();
    for (const r of rows) {
      if (r.state === 'queued') this.#db.prepare(`UPDATE jobs SET state = 'cancelled', updated_at = ?, error = 'superseded' WHERE id = ?`).run(now, r.id);
      else this.#db.prepare('UPDATE jobs SET cancel_requested = 1, updated_at = ? WHERE id = ?').run(now, r.id);
    }
    return rows.map((r) => String(r.id));
  }

  #abortLocal(id: number): void {
    this.#live.get(id)?.controller.abort(new Error(SUPERSEDED));
  }

  /**
   * Running jobs whose owner is gone go back to the queue: this host's owners that are not alive,
   * and any owner whose lease ran out. The lost attempt does not count against maxAttempts.
   */
  #recover(): void {
    const now = Date.now();
    const host = hostname();
    const rows = this.#db.prepare(`SELECT * FROM jobs WHERE state = 'running' AND owner != ?`).all(this.#owner) as Row[];
    for (const r of rows) {
      const dead = (r.owner_host === host && r.owner_pid !== null && r.owner_pid !== process.pid && !pidAlive(r.owner_pid)) || (r.lease_until ?? 0) < now;
      if (!dead) continue;
      const tooMany = r.recoveries + 1 > this.#opts.maxRecoveries;
      const changed = this.#db
        .prepare(
          `UPDATE jobs SET state = ?, attempts = MAX(0, attempts - 1), recoveries = recoveries + 1, owner = NULL, owner_pid = NULL, lease_until = NULL,
             run_at = ?, updated_at = ?, error = ? WHERE id = ? AND state = 'running' AND owner = ?`,
        )
        .run(tooMany ? 'failed' : 'queued', now, now, tooMany ? `its process died ${r.recoveries + 1} times while running it` : r.error, r.id, r.owner).changes;
      if (changed) this.#opts.logger?.warn({ job: r.id, kind: r.kind, owner: r.owner }, tooMany ? 'job failed: its process kept dying' : 'job resumed: its process is gone');
    }
  }

  #kick(): void {
    if (!this.#started || this.#stopping) return;
    if (this.#ticking) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = true;
    setImmediate(() => {
      try {
        do {
          this.#tickAgain = false;
          this.#claimAll();
        } while (this.#tickAgain && !this.#stopping);
      } finally {
        this.#ticking = false;
      }
    });
  }

  #claimAll(): void {
    for (const [kind, w] of this.#workers) {
      while (w.running < w.concurrency && !this.#stopping) {
        const row = this.#claim(kind);
        if (!row) break;
        this.#run(w, row);
      }
    }
  }

  #claim(kind: string): Row | undefined {
    const now = Date.now();
    return this.#db
      .prepare(
        `UPDATE jobs SET state = 'running', attempts = attempts + 1, owner = ?, owner_host = ?, owner_pid = ?, lease_until = ?, updated_at = ?
         WHERE id = (SELECT id FROM jobs j WHERE state = 'queued' AND kind = ? AND run_at <= ?
           AND (limit_key IS NULL OR (SELECT COUNT(*) FROM jobs r WHERE r.limit_key = j.limit_key AND r.state = 'running') < j.limit_max)
           ORDER BY priority, run_at, id LIMIT 1)
         RETURNING *`,
      )
      .get(this.#owner, hostname(), process.pid, now + this.#opts.leaseMs, now, kind, now) as Row | undefined;
  }

  #run(w: Worker, row: Row): void {
    w.running++;
    const controller = new AbortController();
    const job = toRecord(row);
    const renew = setInterval(() => {
      const r = this.#db.prepare('UPDATE jobs SET lease_until = ? WHERE id = ? AND owner = ? RETURNING cancel_requested').get(Date.now() + this.#opts.leaseMs, row.id, this.#owner) as
        | { cancel_requested: number }
        | undefined;
      if (r?.cancel_requested) controller.abort(new Error(SUPERSEDED));
    }, Math.max(50, Math.floor(this.#opts.leaseMs / 3)));
    renew.unref();
    if (row.cancel_requested) controller.abort(new Error(SUPERSEDED));
    this.#events.emit('started', job);
    const done = (async () => {
      let outcome: AttemptOutcome;
      try {
        const ctx = { job, attempt: row.attempts, lastAttempt: row.attempts >= row.max_attempts, signal: controller.signal };
        outcome = await runAttempt(w.handler, ctx, this.#opts.backoff, this.#opts.logger?.child({ job: row.id, kind: row.kind }));
      } finally {
        clearInterval(renew);
      }
      const now = Date.now();
      this.#db
        .prepare('UPDATE jobs SET state = ?, error = ?, run_at = ?, owner = NULL, owner_pid = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND owner = ?')
        .run(outcome.state, outcome.error ?? null, outcome.retryAt ?? row.run_at, now, row.id, this.#owner);
      this.#live.delete(row.id);
      w.running--;
      const after = (await this.get(String(row.id)))!;
      this.#events.emit(outcome.state === 'queued' ? 'retrying' : outcome.state, after);
      this.#kick();
    })();
    this.#live.set(row.id, { controller, done });
  }
}
