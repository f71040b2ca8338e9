/**
 * The App's Store in Redis, for a web process and workers that share nothing but Redis and GitHub.
 * Records are JSON strings under `<prefix>:st:`; sets and sorted sets index them. (The deliveries
 * seen are the queue's event keys.)
 */
import type { Redis } from 'ioredis';
import type { Reproduction } from '../generation/types.js';
import type { Candidate } from '../pipeline/rank.js';
import { randomUUID } from 'node:crypto';
import type { Spend } from './types.js';
import { KNOWN_FLAKY_LIMIT, type Confirmation, type JobOutcome, type MergeRecord, type ReproductionCost, type StoredReproduction, type Store, type VerdictInput } from './types.js';
import { repoSlug, type RepoRef } from '../github/types.js';

interface VerdictRow extends Candidate {
  issue: number;
  open: boolean;
  validation?: unknown;
  updatedAt: number;
}

interface ReproRow extends StoredReproduction {
  owner: string;
  repo: string;
}

/** Drops an author's runs older than the window, then counts one more if the limit allows. */
const TAKE_AUTHOR_RUN = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;
/** A day's spend is kept a little past the day, for the status of yesterday. */
const SPEND_TTL_SECONDS = 3 * 86_400;

const parse = <T>(s: string | null): T | undefined => (s === null ? undefined : (JSON.parse(s) as T));

export class RedisStore implements Store {
  readonly #r: Redis;
  readonly #p: string;

  /** `redis` from connectRedis; the store does not close it. */
  constructor(redis: Redis, opts: { prefix?: string } = {}) {
    this.#r = redis;
    this.#p = `${opts.prefix ?? 'swt'}:st`;
  }

  #k(...parts: Array<string | number>): string {
    return [this.#p, ...parts].join(':');
  }

  async #all<T>(keys: string[]): Promise<T[]> {
    if (keys.length === 0) return [];
    return (await this.#r.mget(keys)).flatMap((s) => (s === null ? [] : [JSON.parse(s) as T]));
  }

  async saveReproduction(r: RepoRef, issue: number, where: { branch: string; sha: string }, rep: Reproduction): Promise<number> {
    const id = await this.#r.incr(this.#k('repro', 'seq'));
    const u = rep.usage;
    const row: ReproRow = {
      id,
      owner: r.owner,
      repo: r.repo,
      issue,
      branch: where.branch,
      baseSha: where.sha,
      status: rep.status,
      strategy: rep.strategy,
      testPatch: rep.testPatch,
      failureExcerpt: rep.failureExcerpt,
      reason: rep.reason,
      costUsd: u.costUsd,
      tokens: u.promptTokens + u.completionTokens,
      wallMs: u.wallMs,
      createdAt: Date.now(),
      answers: rep.evidence?.answers ?? [],
      ...(rep.model ? { model: rep.model.name } : {}),
    };
    await this.#r
      .multi()
      .set(this.#k('repro', id), JSON.stringify(row))
      .rpush(this.#k('repros', repoSlug(r), issue), String(id))
      .rpush(this.#k('repros', repoSlug(r)), String(id))
      .rpush(this.#k('repros'), String(id))
      .exec();
    return id;
  }

  async #reproRows(listKey: string): Promise<ReproRow[]> {
    const ids = await this.#r.lrange(listKey, 0, -1);
    // Rows saved before the raw answers were kept have none.
    return (await this.#all<ReproRow>(ids.map((id) => this.#k('repro', id)))).map((row) => ({ ...row, answers: row.answers ?? [] }));
  }

  async latestReproduction(r: RepoRef, issue: number): Promise<StoredReproduction | undefined> {
    const rows = await this.#reproRows(this.#k('repros', repoSlug(r), issue));
    const row = rows.filter((x) => x.status === 'reproduced').at(-1);
    if (!row) return undefined;
    const { owner: _o, repo: _r, ...rest } = row;
    return rest;
  }

  async countReproductions(r: RepoRef, issue: number): Promise<number> {
    return this.#r.llen(this.#k('repros', repoSlug(r), issue));
  }

  async reproductionAt(r: RepoRef, issue: number, sha: string, since: number): Promise<StoredReproduction | undefined> {
    const rows = await this.#reproRows(this.#k('repros', repoSlug(r), issue));
    const row = rows.filter((x) => x.baseSha === sha && x.createdAt >= since).at(-1);
    if (!row) return undefined;
    const { owner: _o, repo: _r, ...rest } = row;
    return rest;
  }

  async addSpend(scope: string, day: string, x: Spend): Promise<void> {
    const key = this.#k('spend', scope, day);
    await this.#r
      .multi()
      .hincrby(key, 'tokens', Math.round(x.tokens))
      .hincrbyfloat(key, 'usd', x.usd)
      .hincrby(key, 'containerMs', Math.round(x.containerMs))
      .expire(key, SPEND_TTL_SECONDS)
      .exec();
  }

  async spendOf(scope: string, day: string): Promise<Spend> {
    const h = await this.#r.hgetall(this.#k('spend', scope, day));
    return { tokens: Number(h.tokens ?? 0), usd: Number(h.usd ?? 0), containerMs: Number(h.containerMs ?? 0) };
  }

  async takeAuthorRun(scope: string, login: string, now: number, windowMs: number, limit: number): Promise<boolean> {
    const taken = await this.#r.eval(TAKE_AUTHOR_RUN, 1, this.#k('author-runs', scope, login.toLowerCase()), String(now), String(windowMs), String(limit), `${now}:${randomUUID()}`);
    return taken === 1;
  }

  async reproductionCosts(r?: RepoRef): Promise<ReproductionCost[]> {
    const rows = await this.#reproRows(r ? this.#k('repros', repoSlug(r)) : this.#k('repros'));
    return rows.map((x) => ({ owner: x.owner, repo: x.repo, issue: x.issue, strategy: x.strategy, status: x.status, costUsd: x.costUsd, tokens: x.tokens }));
  }

  async saveVerdict(r: RepoRef, v: VerdictInput): Promise<void> {
    const row: VerdictRow = {
      pr: v.pr,
      issue: v.issue,
      title: v.title,
      author: v.author,
      headSha: v.headSha,
      verdict: v.verdict,
      f2p: v.f2p,
      failing: v.failing,
      durationMs: v.durationMs,
      diffSize: v.diffSize,
      open: true,
      validation: v.validation,
      updatedAt: Date.now(),
    };
    await this.#r
      .multi()
      .set(this.#k('verdict', repoSlug(r), v.pr, v.issue), JSON.stringify(row))
      .sadd(this.#k('verdicts-of-issue', repoSlug(r), v.issue), String(v.pr))
      .sadd(this.#k('verdicts-of-pr', repoSlug(r), v.pr), String(v.issue))
      .exec();
  }

  async verdictOf(r: RepoRef, pr: number, issue: number): Promise<(Candidate & { open: boolean }) | undefined> {
    const row = parse<VerdictRow>(await this.#r.get(this.#k('verdict', repoSlug(r), pr, issue)));
    return row ? toCandidate(row, true) : undefined;
  }

  async candidates(r: RepoRef, issue: number): Promise<Candidate[]> {
    const prs = await this.#r.smembers(this.#k('verdicts-of-issue', repoSlug(r), issue));
    const rows = await this.#all<VerdictRow>(prs.map((pr) => this.#k('verdict', repoSlug(r), pr, issue)));
    return rows.filter((x) => x.open).map((x) => toCandidate(x, false));
  }

  async closePull(r: RepoRef, pr: number): Promise<number[]> {
    const issues = await this.#r.smembers(this.#k('verdicts-of-pr', repoSlug(r), pr));
    const changed: number[] = [];
    for (const issue of issues) {
      const key = this.#k('verdict', repoSlug(r), pr, issue);
      const row = parse<VerdictRow>(await this.#r.get(key));
      if (!row?.open) continue;
      await this.#r.set(key, JSON.stringify({ ...row, open: false, updatedAt: Date.now() }));
      changed.push(Number(issue));
    }
    return changed.sort((a, b) => a - b);
  }

  async checkRunFor(r: RepoRef, headSha: string): Promise<number | undefined> {
    return parse<{ id: number }>(await this.#r.get(this.#k('checkrun', repoSlug(r), headSha)))?.id;
  }

  async saveCheckRun(r: RepoRef, headSha: string, pr: number, id: number): Promise<void> {
    const order = await this.#r.incr(this.#k('checkrun', 'seq'));
    await this.#r
      .multi()
      .set(this.#k('checkrun', repoSlug(r), headSha), JSON.stringify({ id, pr }))
      .set(this.#k('checkrun-id', repoSlug(r), id), JSON.stringify({ pr, headSha }))
      .zadd(this.#k('heads', repoSlug(r), pr), order, headSha)
      .exec();
  }

  async pullOfCheckRun(r: RepoRef, checkRunId: number): Promise<{ pr: number; headSha: string } | undefined> {
    return parse(await this.#r.get(this.#k('checkrun-id', repoSlug(r), checkRunId)));
  }

  async latestHead(r: RepoRef, pr: number): Promise<string | undefined> {
    return (await this.#r.zrevrange(this.#k('heads', repoSlug(r), pr), 0, 0))[0];
  }

  async claimRefusal(r: RepoRef, thread: number): Promise<boolean> {
    return (await this.#r.set(this.#k('refusal', repoSlug(r), thread), String(Date.now()), 'NX')) === 'OK';
  }

  async approve(r: RepoRef, pr: number, headSha: string): Promise<void> {
    await this.#r.sadd(this.#k('approvals', repoSlug(r), pr), headSha);
  }

  async seeHead(r: RepoRef, pr: number, headSha: string, at: number = Date.now()): Promise<number> {
    const key = this.#k('heads-seen', repoSlug(r), pr);
    await this.#r.hsetnx(key, headSha, String(at));
    return Number(await this.#r.hget(key, headSha));
  }

  async isApproved(r: RepoRef, pr: number, headSha: string): Promise<boolean> {
    return (await this.#r.sismember(this.#k('approvals', repoSlug(r), pr), headSha)) === 1;
  }

  async recordOutcome(o: JobOutcome): Promise<void> {
    await this.#r.set(this.#k('outcome', o.jobId), JSON.stringify(o));
  }

  async outcomes(jobIds: string[]): Promise<Map<string, JobOutcome>> {
    const rows = await this.#all<JobOutcome>(jobIds.map((id) => this.#k('outcome', id)));
    return new Map(rows.map((o) => [o.jobId, o]));
  }

  async recordMerge(m: MergeRecord): Promise<void> {
    await this.#r
      .multi()
      .set(this.#k('merge', repoSlug(m), m.pr), JSON.stringify(m))
      .zadd(this.#k('merges', repoSlug(m)), m.mergedAt, String(m.pr))
      .sadd(this.#k('merge-repos'), repoSlug(m))
      .exec();
  }

  async merges(r?: RepoRef): Promise<MergeRecord[]> {
    const repos = r ? [repoSlug(r)] : await this.#r.smembers(this.#k('merge-repos'));
    const out: MergeRecord[] = [];
    for (const s of repos) {
      const prs = await this.#r.zrange(this.#k('merges', s), 0, -1);
      out.push(...(await this.#all<MergeRecord>(prs.map((pr) => this.#k('merge', s, pr)))));
    }
    return out.sort((a, b) => a.mergedAt - b.mergedAt || a.pr - b.pr);
  }

  async setFollowUp(r: RepoRef, pr: number, followUp: NonNullable<MergeRecord['followUp']>): Promise<void> {
    const key = this.#k('merge', repoSlug(r), pr);
    const m = parse<MergeRecord>(await this.#r.get(key));
    if (m && !m.followUp) await this.#r.set(key, JSON.stringify({ ...m, followUp }));
  }

  async saveConfirmation(c: Confirmation): Promise<void> {
    const id = `${repoSlug(c)}#${c.issue}@${c.mergeSha}`;
    await this.#r.multi().set(this.#k('confirm', id), JSON.stringify(c)).zadd(this.#k('confirms', repoSlug(c)), c.at, id).sadd(this.#k('confirm-repos'), repoSlug(c)).exec();
  }

  async confirmations(r?: RepoRef): Promise<Confirmation[]> {
    const repos = r ? [repoSlug(r)] : await this.#r.smembers(this.#k('confirm-repos'));
    const out: Confirmation[] = [];
    for (const s of repos) out.push(...(await this.#all<Confirmation>((await this.#r.zrange(this.#k('confirms', s), 0, -1)).map((id) => this.#k('confirm', id)))));
    return out.sort((a, b) => a.at - b.at);
  }

  async recordFlaky(r: RepoRef, testIds: readonly string[]): Promise<void> {
    const ids = [...new Set(testIds)];
    if (ids.length === 0) return;
    const m = this.#r.multi();
    // Score = validations that saw the test flaky.
    for (const id of ids) m.zincrby(this.#k('flaky', repoSlug(r)), 1, id);
    await m.exec();
  }

  async knownFlaky(r: RepoRef): Promise<string[]> {
    return this.#r.zrevrange(this.#k('flaky', repoSlug(r)), 0, KNOWN_FLAKY_LIMIT - 1);
  }

  async close(): Promise<void> {
    // The connection belongs to whoever made it.
  }
}

function toCandidate(x: VerdictRow, withOpen: true): Candidate & { open: boolean };
function toCandidate(x: VerdictRow, withOpen: false): Candidate;
function toCandidate(x: VerdictRow, withOpen: boolean): Candidate | (Candidate & { open: boolean }) {
  const c: Candidate = { pr: x.pr, title: x.title, author: x.author, headSha: x.headSha, verdict: x.verdict, f2p: x.f2p, failing: x.failing, durationMs: x.durationMs, diffSize: x.diffSize };
  return withOpen ? { ...c, open: x.open } : c;
}
