/**
 * What the App remembers, in the same SQLite database as its queue: webhook deliveries seen,
 * reproductions (so a later PR check finds its test), PR verdicts per linked issue (for the
 * ranking), check runs by head sha, and the one refusal each thread may get.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reproduction } from '../generation/types.js';
import type { RepoRef } from '../github/port.js';
import type { ValidationView } from '../github/types.js';
import type { Candidate, CandidateVerdict } from '../pipeline/rank.js';

export function openDatabase(file: string): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  return db;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS deliveries (
  id TEXT PRIMARY KEY,
  event TEXT NOT NULL,
  received_at INTEGER NOT NULL
);
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
CREATE TABLE IF NOT EXISTS refusals (
  owner TEXT NOT NULL, repo TEXT NOT NULL, thread INTEGER NOT NULL, at INTEGER NOT NULL,
  PRIMARY KEY (owner, repo, thread)
);
`;

export interface StoredReproduction extends Pick<Reproduction, 'status' | 'strategy' | 'testPatch' | 'failureExcerpt' | 'reason'> {
  id: number;
  issue: number;
  branch: string;
  baseSha: string;
  costUsd: number;
  tokens: number;
  wallMs: number;
  createdAt: number;
}

export class Store {
  readonly #db: Database.Database;

  constructor(db: Database.Database, opts: { retentionDays?: number } = {}) {
    this.#db = db;
    db.exec(SCHEMA);
    // GitHub redelivers for three days at most: a month of delivery ids is plenty.
    db.prepare('DELETE FROM deliveries WHERE received_at < ?').run(Date.now() - (opts.retentionDays ?? 30) * 86_400_000);
  }

  hasDelivery(id: string): boolean {
    return Boolean(this.#db.prepare('SELECT 1 FROM deliveries WHERE id = ?').get(id));
  }

  /** False when the delivery was already recorded. */
  recordDelivery(id: string, event: string): boolean {
    return this.#db.prepare('INSERT OR IGNORE INTO deliveries (id, event, received_at) VALUES (?, ?, ?)').run(id, event, Date.now()).changes === 1;
  }

  saveReproduction(r: RepoRef, issue: number, where: { branch: string; sha: string }, rep: Reproduction): number {
    const u = rep.usage;
    const info = this.#db
      .prepare(
        `INSERT INTO reproductions (owner, repo, issue, branch, base_sha, status, strategy, test_patch, failure_excerpt, reason, cost_usd, tokens, wall_ms, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.owner, r.repo, issue, where.branch, where.sha, rep.status, rep.strategy, rep.testPatch, rep.failureExcerpt ?? null, rep.reason, u.costUsd, u.promptTokens + u.completionTokens, u.wallMs, Date.now());
    return Number(info.lastInsertRowid);
  }

  /** The newest reproduction of the issue that did reproduce it. */
  latestReproduction(r: RepoRef, issue: number): StoredReproduction | undefined {
    const row = this.#db
      .prepare(`SELECT * FROM reproductions WHERE owner = ? AND repo = ? AND issue = ? AND status = 'reproduced' ORDER BY id DESC LIMIT 1`)
      .get(r.owner, r.repo, issue) as Record<string, unknown> | undefined;
    if (!row) return undefined;
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
    };
  }

  countReproductions(r: RepoRef, issue: number): number {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM reproductions WHERE owner = ? AND repo = ? AND issue = ?').get(r.owner, r.repo, issue) as { n: number }).n;
  }

  saveVerdict(
    r: RepoRef,
    v: { pr: number; issue: number; headSha: string; title: string; author: string; verdict: CandidateVerdict; f2p: number; failing: number; durationMs: number; diffSize: number; validation?: ValidationView },
  ): void {
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

  /** The open PRs with a verdict for the issue (unranked). */
  candidates(r: RepoRef, issue: number): Candidate[] {
    const rows = this.#db.prepare('SELECT * FROM verdicts WHERE owner = ? AND repo = ? AND issue = ? AND open = 1').all(r.owner, r.repo, issue) as Array<Record<string, unknown>>;
    return rows.map((row) => ({
      pr: row.pr as number,
      title: row.title as string,
      author: row.author as string,
      headSha: row.head_sha as string,
      verdict: row.verdict as CandidateVerdict,
      f2p: row.f2p as number,
      failing: row.failing as number,
      durationMs: row.duration_ms as number,
      diffSize: row.diff_size as number,
    }));
  }

  /** Marks a closed PR's verdicts; returns the issues whose ranking changes. */
  closePull(r: RepoRef, pr: number): number[] {
    const issues = this.#db.prepare('SELECT issue FROM verdicts WHERE owner = ? AND repo = ? AND pr = ? AND open = 1').all(r.owner, r.repo, pr) as Array<{ issue: number }>;
    this.#db.prepare('UPDATE verdicts SET open = 0, updated_at = ? WHERE owner = ? AND repo = ? AND pr = ?').run(Date.now(), r.owner, r.repo, pr);
    return issues.map((i) => i.issue);
  }

  checkRunFor(r: RepoRef, headSha: string): number | undefined {
    const row = this.#db.prepare('SELECT check_run_id FROM check_runs WHERE owner = ? AND repo = ? AND head_sha = ?').get(r.owner, r.repo, headSha) as { check_run_id: number } | undefined;
    return row?.check_run_id;
  }

  saveCheckRun(r: RepoRef, headSha: string, pr: number, id: number): void {
    this.#db
      .prepare('INSERT INTO check_runs (owner, repo, head_sha, pr, check_run_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, repo, head_sha) DO UPDATE SET check_run_id = excluded.check_run_id, pr = excluded.pr')
      .run(r.owner, r.repo, headSha, pr, id, Date.now());
  }

  /** The PR a check run belongs to (check_run events of forks carry no pull_requests). */
  pullOfCheckRun(r: RepoRef, checkRunId: number): { pr: number; headSha: string } | undefined {
    const row = this.#db.prepare('SELECT pr, head_sha FROM check_runs WHERE owner = ? AND repo = ? AND check_run_id = ?').get(r.owner, r.repo, checkRunId) as
      | { pr: number; head_sha: string }
      | undefined;
    return row ? { pr: row.pr, headSha: row.head_sha } : undefined;
  }

  /** The head sha of the PR's newest check run. */
  latestHead(r: RepoRef, pr: number): string | undefined {
    const row = this.#db.prepare('SELECT head_sha FROM check_runs WHERE owner = ? AND repo = ? AND pr = ? ORDER BY created_at DESC, rowid DESC LIMIT 1').get(r.owner, r.repo, pr) as
      | { head_sha: string }
      | undefined;
    return row?.head_sha;
  }

  /** True the first time a thread is refused; false ever after (one polite refusal per thread). */
  claimRefusal(r: RepoRef, thread: number): boolean {
    return this.#db.prepare('INSERT OR IGNORE INTO refusals (owner, repo, thread, at) VALUES (?, ?, ?, ?)').run(r.owner, r.repo, thread, Date.now()).changes === 1;
  }

  /** A maintainer's `/swt validate` on a fork's PR approves installing its head's dependencies. */
  approve(r: RepoRef, pr: number, headSha: string): void {
    this.#db.prepare('INSERT OR IGNORE INTO approvals (owner, repo, pr, head_sha, at) VALUES (?, ?, ?, ?, ?)').run(r.owner, r.repo, pr, headSha, Date.now());
  }

  isApproved(r: RepoRef, pr: number, headSha: string): boolean {
    return Boolean(this.#db.prepare('SELECT 1 FROM approvals WHERE owner = ? AND repo = ? AND pr = ? AND head_sha = ?').get(r.owner, r.repo, pr, headSha));
  }
}
