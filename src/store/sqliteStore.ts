/**
 * What the App remembers, in the same SQLite database as its queue (whose event keys are the
 * webhook deliveries seen): reproductions (so a later PR check finds its test), PR verdicts per linked issue (for the
 * ranking), check runs by head sha, the one refusal each thread may get, and what live accuracy
 * counts (job outcomes, merged PRs, confirmations at merge commits), and what limits spend (each
 * installation's spend per day, each author's recent runs). The Store interface is in
 * types.ts; redisStore.ts keeps the same in Redis.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reproduction } from '../generation/types.js';
import type { Candidate, CandidateVerdict } from '../pipeline/rank.js';
import type { Spend } from './types.js';
import { KNOWN_FLAKY_LIMIT, type Confirmation, type JobOutcome, type MergeRecord, type ReproductionCost, type StoredReproduction, type Store, type VerdictInput } from './types.js';
import type { RepoRef } from '../github/types.js';

export type { Store, StoredReproduction } from './types.js';

export function openDatabase(file: string): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  return db;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS reproductions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner TEXT NOT NULL, repo TEXT NOT NULL, issue INTEGER NOT NULL,
  branch TEXT NOT NULL, base_sha TEXT NOT NULL,
  status TEXT NOT NULL, strategy TEXT NOT NULL, test_patch TEXT NOT NULL,
  failure_excerpt TEXT, reason TEXT NOT NULL,
  cost_usd REAL NOT NULL, tokens INTEGER NOT NULL, wall_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS reproductions_issue ON reproductions (owner, repo, issue, id);
CREATE TABLE IF NOT EXISTS verdicts (
  owner TEXT NOT NULL, repo TEXT NOT NULL, pr INTEGER NOT NULL, issue INTEGER NOT NULL,
  head_sha TEXT NOT NULL, title TEXT NOT NULL, author TEXT NOT NULL,
  verdict TEXT NOT NULL, f2p INTEGER NOT NULL, failing INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL, diff_size INTEGER NOT NULL,
  open INTEGER NOT NULL DEFAULT 1, validation TEXT, updated_at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, pr, issue)
);
CREATE TABLE IF NOT EXISTS check_runs (
  owner TEXT NOT NULL, repo TEXT NOT NULL, head_sha TEXT NOT NULL, pr INTEGER NOT NULL,
  check_run_id INTEGER NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, head_sha)
);
CREATE INDEX IF NOT EXISTS check_runs_id ON check_runs (check_run_id);
CREATE TABLE IF NOT EXISTS approvals (
  owner TEXT NOT NULL, repo TEXT NOT NULL, pr INTEGER NOT NULL, head_sha TEXT NOT NULL, at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, pr, head_sha)
);
CREATE TABLE IF NOT EXISTS heads (
  owner TEXT NOT NULL, repo TEXT NOT NULL, pr INTEGER NOT NULL, head_sha TEXT NOT NULL, seen_at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, pr, head_sha)
);
CREATE TABLE IF NOT EXISTS refusals (
  owner TEXT NOT NULL, repo TEXT NOT NULL, thread INTEGER NOT NULL, at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, thread)
);
CREATE TABLE IF NOT EXISTS outcomes (
  job_id TEXT PRIMARY KEY, body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS merges (
  owner TEXT NOT NULL, repo TEXT NOT NULL, pr INTEGER NOT NULL, merged_at INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (owner, repo, pr)
);
CREATE TABLE IF NOT EXISTS spend (
  scope TEXT NOT NULL, day TEXT NOT NULL, tokens INTEGER NOT NULL, usd REAL NOT NULL, container_ms INTEGER NOT NULL,
  PRIMARY KEY (scope, day)
);
CREATE TABLE IF NOT EXISTS author_runs (
  scope TEXT NOT NULL, login TEXT NOT NULL, at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS author_runs_by ON author_runs (scope, login, at);
CREATE TABLE IF NOT EXISTS flaky_tests (
  owner TEXT NOT NULL, repo TEXT NOT NULL, test_id TEXT NOT NULL, seen INTEGER NOT NULL, last_at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, test_id)
);
CREATE TABLE IF NOT EXISTS confirmations (
  owner TEXT NOT NULL, repo TEXT NOT NULL, issue INTEGER NOT NULL, merge_sha TEXT NOT NULL, at INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (owner, repo, issue, merge_sha)
);
`;

function reproOf(row: Record<string, unknown>): StoredReproduction {
  return {
    id: row.id as number,
    issue: row.issue as number,
    branch: row.branch as string,
    baseSha: row.base_sha as string,
    status: row.status as Reproduction['status'],
    strategy: row.strategy as string,
    testPatch: row.test_patch as string,
    failureExcerpt: (row.failure_excerpt as string | null) ?? undefined,
    reason: row.reason as string,
    costUsd: row.cost_usd as number,
    tokens: row.tokens as number,
    wallMs: row.wall_ms as number,
    createdAt: row.created_at as number,
    answers: JSON.parse((row.answers as string | undefined) ?? '[]'),
    ...(row.model ? { model: row.model as string } : {}),
  };
}

function candidateOf(row: Record<string, unknown>): Candidate {
  return {
    pr: row.pr as number,
    title: row.title as string,
    author: row.author as string,
    headSha: row.head_sha as string,
    verdict: row.verdict as CandidateVerdict,
    f2p: row.f2p as number,
    failing: row.failing as number,
    durationMs: row.duration_ms as number,
    diffSize: row.diff_size as number,
  };
}

export class SqliteStore implements Store {
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    this.#db = db;
    db.exec(SCHEMA);
    // Databases from before the raw answers were kept gain their columns.
    const columns = (db.prepare('PRAGMA table_info(reproductions)').all() as Array<{ name: string }>).map((c) => c.name);
    if (!columns.includes('answers')) db.exec("ALTER TABLE reproductions ADD COLUMN answers TEXT NOT NULL DEFAULT '[]'");
    if (!columns.includes('model')) db.exec('ALTER TABLE reproductions ADD COLUMN model TEXT');
    // Deliveries seen are the queue's event keys now; databases from before keep no copy.
    db.exec('DROP TABLE IF EXISTS deliveries');
  }

  async saveReproduction(r: RepoRef, issue: number, where: { branch: string; sha: string }, rep: Reproduction): Promise<number> {
    const u = rep.usage;
    const info = this.#db
      .prepare(
        `INSERT INTO reproductions (owner, repo, issue, branch, base_sha, status, strategy, test_patch, failure_excerpt, reason, cost_usd, tokens, wall_ms, created_at, answers, model)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.owner, r.repo, issue, where.branch, where.sha, rep.status, rep.strategy, rep.testPatch, rep.failureExcerpt ?? null, rep.reason, u.costUsd, u.promptTokens + u.completionTokens, u.wallMs, Date.now(), JSON.stringify(rep.evidence?.answers ?? []), rep.model?.name ?? null);
    return Number(info.lastInsertRowid);
  }

  async latestReproduction(r: RepoRef, issue: number): Promise<StoredReproduction | undefined> {
    const row = this.#db
      .prepare(`SELECT * FROM reproductions WHERE owner = ? AND repo = ? AND issue = ? AND status = 'reproduced' ORDER BY id DESC LIMIT 1`)
      .get(r.owner, r.repo, issue) as Record<string, unknown> | undefined;
    return row ? reproOf(row) : undefined;
  }

  async countReproductions(r: RepoRef, issue: number): Promise<number> {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM reproductions WHERE owner = ? AND repo = ? AND issue = ?').get(r.owner, r.repo, issue) as { n: number }).n;
  }

  async reproductionAt(r: RepoRef, issue: number, sha: string, since: number): Promise<StoredReproduction | undefined> {
    const row = this.#db
      .prepare('SELECT * FROM reproductions WHERE owner = ? AND repo = ? AND issue = ? AND base_sha = ? AND created_at >= ? ORDER BY id DESC LIMIT 1')
      .get(r.owner, r.repo, issue, sha, since) as Record<string, unknown> | undefined;
    return row ? reproOf(row) : undefined;
  }

  async addSpend(scope: string, day: string, x: Spend): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO spend (scope, day, tokens, usd, container_ms) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (scope, day) DO UPDATE SET tokens = tokens + excluded.tokens, usd = usd + excluded.usd, container_ms = container_ms + excluded.container_ms`,
      )
      .run(scope, day, Math.round(x.tokens), x.usd, Math.round(x.containerMs));
  }

  async spendOf(scope: string, day: string): Promise<Spend> {
    const row = this.#db.prepare('SELECT tokens, usd, container_ms FROM spend WHERE scope = ? AND day = ?').get(scope, day) as { tokens: number; usd: number; container_ms: number } | undefined;
    return row ? { tokens: row.tokens, usd: row.usd, containerMs: row.container_ms } : { tokens: 0, usd: 0, containerMs: 0 };
  }

  async takeAuthorRun(scope: string, login: string, now: number, windowMs: number, limit: number): Promise<boolean> {
    login = login.toLowerCase();
    const take = this.#db.transaction(() => {
      this.#db.prepare('DELETE FROM author_runs WHERE scope = ? AND login = ? AND at <= ?').run(scope, login, now - windowMs);
      const { n } = this.#db.prepare('SELECT COUNT(*) AS n FROM author_runs WHERE scope = ? AND login = ?').get(scope, login) as { n: number };
      if (n >= limit) return false;
      this.#db.prepare('INSERT INTO author_runs (scope, login, at) VALUES (?, ?, ?)').run(scope, login, now);
      return true;
    });
    return take.immediate();
  }

  async reproductionCosts(r?: RepoRef): Promise<ReproductionCost[]> {
    const rows = (
      r
        ? this.#db.prepare('SELECT owner, repo, issue, strategy, status, cost_usd, tokens FROM reproductions WHERE owner = ? AND repo = ? ORDER BY id').all(r.owner, r.repo)
        : this.#db.prepare('SELECT owner, repo, issue, strategy, status, cost_usd, tokens FROM reproductions ORDER BY id').all()
    ) as Array<Record<string, unknown>>;
    return rows.map((x) => ({ owner: x.owner as string, repo: x.repo as string, issue: x.issue as number, strategy: x.strategy as string, status: x.status as Reproduction['status'], costUsd: x.cost_usd as number, tokens: x.tokens as number }));
  }

  async saveVerdict(r: RepoRef, v: VerdictInput): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO verdicts (owner, repo, pr, issue, head_sha, title, author, verdict, f2p, failing, duration_ms, diff_size, open, validation, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
         ON CONFLICT (owner, repo, pr, issue) DO UPDATE SET head_sha = excluded.head_sha, title = excluded.title, author = excluded.author,
           verdict = excluded.verdict, f2p = excluded.f2p, failing = excluded.failing, duration_ms = excluded.duration_ms,
           diff_size = excluded.diff_size, open = 1, validation = excluded.validation, updated_at = excluded.updated_at`,
      )
      .run(r.owner, r.repo, v.pr, v.issue, v.headSha, v.title, v.author, v.verdict, v.f2p, v.failing, v.durationMs, v.diffSize, v.validation ? JSON.stringify(v.validation) : null, Date.now());
  }

  async verdictOf(r: RepoRef, pr: number, issue: number): Promise<(Candidate & { open: boolean }) | undefined> {
    const row = this.#db.prepare('SELECT * FROM verdicts WHERE owner = ? AND repo = ? AND pr = ? AND issue = ?').get(r.owner, r.repo, pr, issue) as Record<string, unknown> | undefined;
    return row ? { ...candidateOf(row), open: row.open === 1 } : undefined;
  }

  async candidates(r: RepoRef, issue: number): Promise<Candidate[]> {
    const rows = this.#db.prepare('SELECT * FROM verdicts WHERE owner = ? AND repo = ? AND issue = ? AND open = 1').all(r.owner, r.repo, issue) as Array<Record<string, unknown>>;
    return rows.map(candidateOf);
  }

  async closePull(r: RepoRef, pr: number): Promise<number[]> {
    const issues = this.#db.prepare('SELECT issue FROM verdicts WHERE owner = ? AND repo = ? AND pr = ? AND open = 1 ORDER BY issue').all(r.owner, r.repo, pr) as Array<{ issue: number }>;
    this.#db.prepare('UPDATE verdicts SET open = 0, updated_at = ? WHERE owner = ? AND repo = ? AND pr = ?').run(Date.now(), r.owner, r.repo, pr);
    return issues.map((i) => i.issue);
  }

  async checkRunFor(r: RepoRef, headSha: string): Promise<number | undefined> {
    const row = this.#db.prepare('SELECT check_run_id FROM check_runs WHERE owner = ? AND repo = ? AND head_sha = ?').get(r.owner, r.repo, headSha) as { check_run_id: number } | undefined;
    return row?.check_run_id;
  }

  async saveCheckRun(r: RepoRef, headSha: string, pr: number, id: number): Promise<void> {
    this.#db
      .prepare('INSERT INTO check_runs (owner, repo, head_sha, pr, check_run_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, repo, head_sha) DO UPDATE SET check_run_id = excluded.check_run_id, pr = excluded.pr, created_at = excluded.created_at')
      .run(r.owner, r.repo, headSha, pr, id, Date.now());
  }

  async pullOfCheckRun(r: RepoRef, checkRunId: number): Promise<{ pr: number; headSha: string } | undefined> {
    const row = this.#db.prepare('SELECT pr, head_sha FROM check_runs WHERE owner = ? AND repo = ? AND check_run_id = ?').get(r.owner, r.repo, checkRunId) as
      | { pr: number; head_sha: string }
      | undefined;
    return row ? { pr: row.pr, headSha: row.head_sha } : undefined;
  }

  async latestHead(r: RepoRef, pr: number): Promise<string | undefined> {
    const row = this.#db.prepare('SELECT head_sha FROM check_runs WHERE owner = ? AND repo = ? AND pr = ? ORDER BY created_at DESC, rowid DESC LIMIT 1').get(r.owner, r.repo, pr) as
      | { head_sha: string }
      | undefined;
    return row?.head_sha;
  }

  async claimRefusal(r: RepoRef, thread: number): Promise<boolean> {
    return this.#db.prepare('INSERT OR IGNORE INTO refusals (owner, repo, thread, at) VALUES (?, ?, ?, ?)').run(r.owner, r.repo, thread, Date.now()).changes === 1;
  }

  async approve(r: RepoRef, pr: number, headSha: string): Promise<void> {
    this.#db.prepare('INSERT OR IGNORE INTO approvals (owner, repo, pr, head_sha, at) VALUES (?, ?, ?, ?, ?)').run(r.owner, r.repo, pr, headSha, Date.now());
  }

  async seeHead(r: RepoRef, pr: number, headSha: string, at: number = Date.now()): Promise<number> {
    this.#db.prepare('INSERT OR IGNORE INTO heads (owner, repo, pr, head_sha, seen_at) VALUES (?, ?, ?, ?, ?)').run(r.owner, r.repo, pr, headSha, at);
    return (this.#db.prepare('SELECT seen_at FROM heads WHERE owner = ? AND repo = ? AND pr = ? AND head_sha = ?').get(r.owner, r.repo, pr, headSha) as { seen_at: number }).seen_at;
  }

  async isApproved(r: RepoRef, pr: number, headSha: string): Promise<boolean> {
    return Boolean(this.#db.prepare('SELECT 1 FROM approvals WHERE owner = ? AND repo = ? AND pr = ? AND head_sha = ?').get(r.owner, r.repo, pr, headSha));
  }

  async recordOutcome(o: JobOutcome): Promise<void> {
    this.#db.prepare('INSERT INTO outcomes (job_id, body) VALUES (?, ?) ON CONFLICT (job_id) DO UPDATE SET body = excluded.body').run(o.jobId, JSON.stringify(o));
  }

  async outcomes(jobIds: string[]): Promise<Map<string, JobOutcome>> {
    const get = this.#db.prepare('SELECT body FROM outcomes WHERE job_id = ?');
    const out = new Map<string, JobOutcome>();
    for (const id of jobIds) {
      const row = get.get(id) as { body: string } | undefined;
      if (row) out.set(id, JSON.parse(row.body) as JobOutcome);
    }
    return out;
  }

  async recordMerge(m: MergeRecord): Promise<void> {
    this.#db
      .prepare('INSERT INTO merges (owner, repo, pr, merged_at, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (owner, repo, pr) DO UPDATE SET merged_at = excluded.merged_at, body = excluded.body')
      .run(m.owner, m.repo, m.pr, m.mergedAt, JSON.stringify(m));
  }

  async merges(r?: RepoRef): Promise<MergeRecord[]> {
    const rows = (
      r ? this.#db.prepare('SELECT body FROM merges WHERE owner = ? AND repo = ? ORDER BY merged_at, pr').all(r.owner, r.repo) : this.#db.prepare('SELECT body FROM merges ORDER BY merged_at, pr').all()
    ) as Array<{ body: string }>;
    return rows.map((x) => JSON.parse(x.body) as MergeRecord);
  }

  async setFollowUp(r: RepoRef, pr: number, followUp: NonNullable<MergeRecord['followUp']>): Promise<void> {
    const row = this.#db.prepare('SELECT body FROM merges WHERE owner = ? AND repo = ? AND pr = ?').get(r.owner, r.repo, pr) as { body: string } | undefined;
    if (!row) return;
    const m = JSON.parse(row.body) as MergeRecord;
    if (m.followUp) return;
    this.#db.prepare('UPDATE merges SET body = ? WHERE owner = ? AND repo = ? AND pr = ?').run(JSON.stringify({ ...m, followUp }), r.owner, r.repo, pr);
  }

  async saveConfirmation(c: Confirmation): Promise<void> {
    this.#db
      .prepare('INSERT INTO confirmations (owner, repo, issue, merge_sha, at, body) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, repo, issue, merge_sha) DO UPDATE SET at = excluded.at, body = excluded.body')
      .run(c.owner, c.repo, c.issue, c.mergeSha, c.at, JSON.stringify(c));
  }

  async confirmations(r?: RepoRef): Promise<Confirmation[]> {
    const rows = (
      r ? this.#db.prepare('SELECT body FROM confirmations WHERE owner = ? AND repo = ? ORDER BY at').all(r.owner, r.repo) : this.#db.prepare('SELECT body FROM confirmations ORDER BY at').all()
    ) as Array<{ body: string }>;
    return rows.map((x) => JSON.parse(x.body) as Confirmation);
  }

  async recordFlaky(r: RepoRef, testIds: readonly string[]): Promise<void> {
    const at = Date.now();
    const up = this.#db.prepare(
      'INSERT INTO flaky_tests (owner, repo, test_id, seen, last_at) VALUES (?, ?, ?, 1, ?) ON CONFLICT (owner, repo, test_id) DO UPDATE SET seen = seen + 1, last_at = excluded.last_at',
    );
    this.#db.transaction(() => {
      for (const id of new Set(testIds)) up.run(r.owner, r.repo, id, at);
    })();
  }

  async knownFlaky(r: RepoRef): Promise<string[]> {
    const rows = this.#db
      .prepare('SELECT test_id FROM flaky_tests WHERE owner = ? AND repo = ? ORDER BY seen DESC, test_id DESC LIMIT ?')
      .all(r.owner, r.repo, KNOWN_FLAKY_LIMIT) as Array<{ test_id: string }>;
    return rows.map((x) => x.test_id);
  }

  async close(): Promise<void> {
    // The database belongs to the services that opened it.
  }
}
