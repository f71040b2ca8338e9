/**
 * The App's workers: what runs each job kind (see jobs/payloads.ts). Fast-lane jobs acknowledge
 * and post; heavy-lane jobs fetch the repository into the cache and call the pipeline
 * (`reproduceIssue`, `validate`) on the Docker sandbox, then post what the real runs showed.
 */
import { appSettings, type RepoConfig } from '../config/repoConfig.js';
import { budgetLimitsFrom, type BudgetLimits, type ReproduceOptions } from '../generation/index.js';
import { modelRefusal } from '../generation/models.js';
import type { IssueInput, Reproduction } from '../generation/types.js';
import type { IssueData } from '../github/port.js';
import { approvalOf, fixFilterPasses, gateConclusion, headInstallOf, matchesAuthor, MAX_ISSUE_BODY, needsApproval, shouldReproduce } from '../github/decide.js';
import { closingIssueNumbers } from '../github/links.js';
import { WriteAccess } from '../github/permissions.js';
import type { GitHubPort, PullData, RepoRef } from '../github/port.js';
import {
  annotationsFor,
  batches,
  CHECK_NAME,
  renderApprovalNotBound,
  renderAwaitingApproval,
  renderBadConfigCheck,
  renderCheckProgress,
  renderCheckResult,
  renderJobError,
  renderLimitCheck,
  renderLimitReached,
  renderLinksLeftOut,
  renderNoLinkedIssue,
  renderPrComment,
  renderRanking,
  renderReproductionResult,
  renderReproductionStarted,
  renderStats,
  renderSuperseded,
  RERUN_ACTION,
  type LimitHit,
} from '../github/render.js';
import type { IssueOutcome, ValidationView } from '../github/types.js';
import {
  issueGroup,
  JOB,
  LOW_PRIORITY,
  prGroup,
  repoLimit,
  type AckPayload,
  type ConfirmPayload,
  type MergedPayload,
  type NoticePayload,
  type RankPayload,
  type ReproducePayload,
  type StatsPayload,
  type Target,
  type ValidatePayload,
} from '../jobs/payloads.js';
import { judgedTests, reproduces } from '../harness/classify.js';
import { isPermanent, type JobContext, type JobQueue, type JobRecord } from '../jobs/queue.js';
import { accuracyRowsWithTotals, followUpsOf } from '../pipeline/liveAccuracy.js';
import type { ContextInput } from '../pipeline/context.js';
import type { Progress } from '../pipeline/progress.js';
import { candidateVerdict, rank } from '../pipeline/rank.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import { headManifestChanges, validate, type HeadInstall, type ValidationResult } from '../pipeline/validate.js';
import { cloneUrl, type RepoCache } from '../repo/cache.js';
import { filesAfterPatch } from '../repo/patchedFiles.js';
import type { Sandbox } from '../sandbox/types.js';
import { isSwtError, SwtError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { redact } from '../util/secrets.js';
import { countUsage, timed, type ProcessMetrics } from '../web/metrics.js';
import { AUTHOR_WINDOW_MS, budgetReached, capLinks, NO_SPEND, remaining, spendLimitsFrom, spendScope, utcDay, type Spend } from './limits.js';
import { liveAccuracyRows, type Store, type StoredReproduction } from './storeTypes.js';

export interface WorkerDeps {
  queue: JobQueue;
  store: Store;
  cache: RepoCache;
  sandbox: Sandbox;
  /** The GitHub of a job: an installation's Octokit in the App, a token's in the CLI. */
  github(target: Target): Promise<GitHubPort>;
  /** `<protocol>://<host>` that repositories are cloned from. */
  gitBaseUrl: string;
  logger: Logger;
  /** Generation overrides (the demo and tests: no LLM, a strategy). */
  generation?: Pick<ReproduceOptions, 'llm' | 'strategy'>;
  concurrency?: { fast?: number; heavy?: number };
  /**
   * Which lanes this process works: `fast` (acknowledge, post) and `heavy` (containers). Default
   * both; a deployment may run webhook receivers and container workers as separate processes.
   */
  lanes?: ReadonlyArray<'fast' | 'heavy'>;
  /** At most one live progress update of a check run per this many ms (default 3000; the App: 10 s under GitHub's throttling, else 2 s). */
  progressIntervalMs?: number;
  /** Ranking edits of one issue are batched over windows of this many ms (default 5000). */
  rankWindowMs?: number;
  /** The operator's ceilings (SWT_BUDGET_*), which a repository's budget cannot raise; SWT_REPO_CONCURRENCY. */
  env?: NodeJS.ProcessEnv;
  /** Phase durations and LLM usage are counted here (the App's /metrics). */
  metrics?: ProcessMetrics;
}

/** SwtError codes that a later attempt may not hit again (the engine, a pull): the job is retried. */
const TRANSIENT = new Set(['DOCKER_UNREACHABLE', 'IMAGE_UNAVAILABLE', 'INTERRUPTED', 'LLM_TIMEOUT']);

const short = (sha: string) => sha.slice(0, 7);
const refOf = (t: Target): RepoRef => ({ owner: t.owner, repo: t.repo });

function oneLine(e: unknown): string {
  const text = isSwtError(e) ? e.oneLine() : ((e as Error)?.message ?? String(e));
  return redact(text.split('\n')[0]!.slice(0, 500));
}

export function registerWorkers(deps: WorkerDeps): void {
  const { queue, store, logger } = deps;
  const log = logger.child({ mod: 'workers' });
  const env = deps.env ?? process.env;
  /** A job's logger: its id and the webhook delivery it came from, in whichever process runs it. */
  const jobLog = (job: JobRecord<{ delivery?: string }>) => log.child({ job: job.id, kind: job.kind, ...(job.payload?.delivery ? { delivery: job.payload.delivery } : {}) });
  const fast = deps.concurrency?.fast ?? 4;
  const heavy = deps.concurrency?.heavy ?? 2;
  const lanes = new Set(deps.lanes ?? ['fast', 'heavy']);

  const ceiling = budgetLimitsFrom(env);
  const limits = spendLimitsFrom(env);
  /** Why the config's model may not be used (not on SWT_LLM_MODELS, or unpriced); undefined when it may, or none is chosen. */
  const modelRefused = (config: RepoConfig): string | undefined => {
    if (deps.generation && 'llm' in deps.generation) return undefined; // the operator's own model (the demo, tests)
    return config.generation?.model ? modelRefusal(config.generation.model, env) : undefined;
  };
  /** Generation settings within the per-issue ceilings and what is left of the installation's day. */
  const generationFor = (config: RepoConfig, logger: Logger = log, left: Spend = limits.daily): ReproduceOptions => {
    const refused = modelRefused(config);
    if (refused) throw new SwtError('BAD_CONFIG', refused);
    const b = config.budget ?? {};
    const budget: BudgetLimits = {
      tokens: Math.max(1, Math.min(ceiling.tokens, b.tokens ?? Infinity, left.tokens)),
      usd: Math.max(1e-6, Math.min(ceiling.usd, b.usd ?? Infinity, left.usd)),
      steps: Math.min(ceiling.steps, b.steps ?? Infinity),
      wallMs: Math.min(ceiling.wallMs, b.wall_seconds === undefined ? Infinity : b.wall_seconds * 1000),
    };
    const llm = deps.generation && 'llm' in deps.generation ? deps.generation.llm : config.generation?.model ? { model: config.generation.model } : undefined;
    return { strategy: deps.generation?.strategy ?? config.generation?.strategy, llm, budget, logger };
  };
  const contextFor = (dir: string, base: string, config: RepoConfig, r: RepoRef): ContextInput => ({
    repo: dir,
    base,
    // One package cache per repository, by its name: a fork's PR writes into the cache of the repository it targets only.
    cacheScope: `${r.owner}/${r.repo}`,
    // The config the fast lane read (default branch, `_extends` merged, validated), not the file at base again.
    config,
  });
  // Write access as GitHub's permission API says it, asked whenever a decision needs it (kept a minute).
  const writeAccess = new WriteAccess();
  const writes = (gh: GitHubPort, t: Target, login: string) => writeAccess.writes({ installationId: t.installationId, owner: t.owner, repo: t.repo, login }, () => gh.collaboratorPermission(refOf(t), login));
  const fetchRepo = async (kind: string, gh: GitHubPort, r: RepoRef, want: Array<{ sha: string; ref?: string }>) =>
    timed(deps.metrics, kind, 'fetch', async () => deps.cache.ensure({ ...r, url: cloneUrl(deps.gitBaseUrl, r), token: await gh.gitToken(), want }));

  /** The installation's daily budget, when it is used up. */
  const budgetHit = async (t: Target): Promise<LimitHit | undefined> => {
    const spent = await store.spendOf(spendScope(t), utcDay());
    const dim = budgetReached(spent, limits.daily);
    return dim ? { kind: 'daily-budget', dimension: dim, spent: spent[dim], limit: limits.daily[dim] } : undefined;
  };
  /**
   * Before new work is queued: the daily budget, then the rate of whoever caused it (counted
   * here). A maintainer's command or re-run is not rate-limited.
   */
  const limitHit = async (t: Target, sender: string | undefined, forced: boolean): Promise<LimitHit | undefined> => {
    const over = await budgetHit(t);
    if (over || forced || !sender) return over;
    if (await store.takeAuthorRun(spendScope(t), sender, Date.now(), AUTHOR_WINDOW_MS, limits.authorStartsPerHour)) return undefined;
    return { kind: 'author-rate', login: sender, perHour: limits.authorStartsPerHour };
  };
  const addSpend = (t: Target, x: Spend) => (x.tokens || x.usd || x.containerMs ? store.addSpend(spendScope(t), utcDay(), x) : Promise.resolve());
  const leftToday = async (t: Target): Promise<Spend> => remaining(await store.spendOf(spendScope(t), utcDay()), limits.daily);

  // ─── fast lane ───────────────────────────────────────────────────────────────────────────

  if (lanes.has('fast')) {
    queue.work<NoticePayload>(
      JOB.notice,
      async ({ job }) => {
        const p = job.payload;
        const gh = await deps.github(p.target);
        await gh.upsertComment(refOf(p.target), p.number, p.kind, p.body);
      },
      { concurrency: fast },
    );

    queue.work<RankPayload>(
      JOB.rank,
      async ({ job }) => {
        const gh = await deps.github(job.payload.target);
        await updateRanking(gh, refOf(job.payload.target), job.payload.issues);
      },
      { concurrency: fast },
    );

    queue.work<AckPayload>(
      JOB.ack,
      async ({ job }) => {
        const p = job.payload;
        if (p.type === 'issue') await ackIssue(p, jobLog(job));
        else await ackPull(p, jobLog(job));
      },
      { concurrency: fast },
    );

    queue.work<MergedPayload>(JOB.merged, (ctx) => mergedJob(ctx), { concurrency: fast });

    queue.work<StatsPayload>(
      JOB.stats,
      async ({ job }) => {
        const p = job.payload;
        const r = refOf(p.target);
        const rows = accuracyRowsWithTotals(await liveAccuracyRows(store, r));
        const gh = await deps.github(p.target);
        await gh.upsertComment(r, p.number, 'stats', renderStats(`${r.owner}/${r.repo}`, rows));
      },
      { concurrency: fast },
    );
  }

  /**
   * A merged PR, for live accuracy: later merges that revert it or fix its issues again mark the
   * earlier ones; the merge is recorded (gated when its author is one the gate watches and the
   * bot checked it); each linked issue with a stored reproduction gets a low-priority confirmation.
   */
  async function mergedJob({ job }: JobContext<MergedPayload>): Promise<void> {
    const p = job.payload;
    const log = jobLog(job);
    const gh = await deps.github(p.target);
    const r = refOf(p.target);
    const s = appSettings(p.config);
    const fromGraphql = await gh.closingIssues(r, p.pull.number).catch(() => [] as number[]);
    const issues = [...new Set([...closingIssueNumbers(p.pull.body, r.owner, r.repo), ...fromGraphql])].sort((a, b) => a - b);
    for (const f of followUpsOf({ pr: p.pull.number, title: p.pull.title, body: p.pull.body, issues }, await store.merges(r))) {
      await store.setFollowUp(r, f.pr, { kind: f.kind, pr: p.pull.number });
    }
    const checked = (await Promise.all(issues.map((i) => store.verdictOf(r, p.pull.number, i)))).some(Boolean);
    const reproductions = (await Promise.all(issues.map(async (issue) => ({ issue, rep: await store.latestReproduction(r, issue) })))).filter((x) => x.rep);
    await store.recordMerge({
      owner: r.owner,
      repo: r.repo,
      pr: p.pull.number,
      mergeSha: p.mergeSha,
      author: p.pull.author.login,
      gated: checked && matchesAuthor(p.pull.author.login, s.gate.authors),
      issues,
      strategy: reproductions[0]?.rep?.strategy ?? null,
      mergedAt: p.mergedAt,
      followUp: null,
    });
    for (const { issue } of reproductions) {
      await queue.enqueue<ConfirmPayload>({
        kind: JOB.confirm,
        payload: { target: p.target, issue, pr: p.pull.number, mergeSha: p.mergeSha, baseSha: p.pull.base.sha, baseRef: p.pull.base.ref, config: p.config, delivery: p.delivery },
        key: `confirm:${r.owner}/${r.repo}#${issue}@${p.mergeSha}`,
        priority: LOW_PRIORITY,
        limit: repoLimit(p.target, env),
      });
    }
    log.info({ pr: p.pull.number, issues, confirmations: reproductions.length }, 'merged PR recorded');
  }

  async function ackIssue(p: Extract<AckPayload, { type: 'issue' }>, log: Logger): Promise<void> {
    const gh = await deps.github(p.target);
    const r = refOf(p.target);
    const s = appSettings(p.config);
    const where = await gh.defaultBranch(r);
    // One reproduction per issue and default-branch sha, unless a maintainer asks again.
    const key = `reproduce:${r.owner}/${r.repo}#${p.issue}@${where.sha}${p.force ? `:${p.force}` : ''}`;
    if (await queue.findByKey(key)) {
      log.info({ issue: p.issue, sha: where.sha }, 'issue already reproduced at this sha');
      return;
    }
    const refused = modelRefused(p.config);
    if (refused) {
      await gh.upsertComment(r, p.issue, 'reproduction', renderJobError('reproducing this issue', refused));
      return;
    }
    const hit = await limitHit(p.target, p.sender, Boolean(p.force));
    if (hit) {
      log.warn({ issue: p.issue, limit: hit }, 'a limit stops this reproduction');
      await gh.upsertComment(r, p.issue, 'limit', renderLimitReached(hit, 'reproducing this issue'));
      return;
    }
    if (s.issues.comment_on_failure) await gh.upsertComment(r, p.issue, 'reproduction', renderReproductionStarted(where));
    await queue.enqueue<ReproducePayload>({
      kind: JOB.reproduce,
      payload: { target: p.target, issue: p.issue, config: p.config, ...where, delivery: p.delivery },
      key,
      group: issueGroup(p.target, p.issue),
      limit: repoLimit(p.target, env),
    });
  }

  async function ackPull(p: Extract<AckPayload, { type: 'pr' }>, log: Logger): Promise<void> {
    const gh = await deps.github(p.target);
    const r = refOf(p.target);
    if (p.configError) {
      const id = await gh.createCheckRun(r, p.configError.headSha, CHECK_NAME, { status: 'completed', conclusion: 'action_required', output: renderBadConfigCheck(p.configError.message), detailsUrl: `${deps.gitBaseUrl}/${r.owner}/${r.repo}/blob/HEAD/.github/swt.yml` });
      await store.saveCheckRun(r, p.configError.headSha, p.pr, id);
      return;
    }
    const pull: PullData = p.pull ?? (await gh.getPull(r, p.pr));
    if (pull.state !== 'open') return;
    const headSha = pull.head.sha;
    // When the App first saw this head: an approval reaches only heads seen before it was written. GitHub's
    // updated_at (set by the push) keeps a host clock behind GitHub's from dating a later push too early.
    const seenAt = await store.seeHead(r, pull.number, headSha, Math.max(Date.now(), pull.updatedAt ?? 0));
    // The first thing a PR author sees: the check is running. Links and approval come after.
    const existing = await store.checkRunFor(r, headSha);
    let checkId = p.force || existing === undefined ? undefined : existing;
    if (checkId === undefined) {
      checkId = await gh.createCheckRun(r, headSha, CHECK_NAME, { status: 'in_progress', output: renderCheckProgress('queued: finding the linked issues, then waiting for a free worker', []) });
      await store.saveCheckRun(r, headSha, pull.number, checkId);
    }
    const fresh = checkId !== existing;
    const fromGraphql = await gh.closingIssues(r, pull.number).catch((e) => {
      log.warn({ pr: pull.number, err: oneLine(e) }, 'closingIssuesReferences failed; using the body only');
      return [] as number[];
    });
    // A body can name hundreds of issues: each may cost a reproduction, so one check covers a few.
    const { checked: links, left } = capLinks([...new Set([...closingIssueNumbers(pull.body, r.owner, r.repo), ...fromGraphql])].sort((a, b) => a - b), limits.maxLinkedIssues);
    if (links.length === 0) {
      await gh.updateCheckRun(r, checkId, { status: 'completed', conclusion: 'neutral', output: renderNoLinkedIssue() });
      return;
    }
    // Whether a fork's head must wait is decided by the validation job, from the git diff of the fetched base and head.
    if (p.approval && pull.fork) {
      const d = approvalOf({ named: p.approval.sha, head: headSha, headSeenAt: seenAt, commentAt: p.approval.at });
      if (d.approve) await store.approve(r, pull.number, headSha);
      else {
        log.info({ pr: pull.number, headSha, by: p.approval.by, reason: d.reason }, 'approval not bound to this head');
        await gh.upsertComment(r, pull.number, 'notice', renderApprovalNotBound(p.approval.by, headSha, d.reason, p.approval.sha));
      }
    }
    const key = `validate:${r.owner}/${r.repo}#${pull.number}@${headSha}:${links.join(',')}${p.force ? `:${p.force}` : ''}`;
    if (await queue.findByKey(key)) {
      log.info({ pr: pull.number, headSha }, 'this head with these links is already checked');
      return;
    }
    const hit = await limitHit(p.target, p.sender, Boolean(p.force || p.approval));
    if (hit) {
      log.warn({ pr: pull.number, limit: hit }, 'a limit stops this check');
      // Unchecked is not passed: a gated author's PR must not get through the gate by exhausting a limit.
      const { conclusion } = gateConclusion(pull.author.login, false, appSettings(p.config).gate);
      await gh.updateCheckRun(r, checkId, { status: 'completed', conclusion, output: renderLimitCheck(hit) });
      await gh.upsertComment(r, pull.number, 'limit', renderLimitReached(hit, 'checking this pull request'));
      return;
    }
    if (!fresh) {
      // The same head, other links (an edited description): a new check run for the new question.
      checkId = await gh.createCheckRun(r, headSha, CHECK_NAME, { status: 'in_progress', output: renderCheckProgress('queued: waiting for a free worker', links) });
      await store.saveCheckRun(r, headSha, pull.number, checkId);
    }
    // (A fresh check run already says it is queued; the worker's first step names the issues. Every
    // write counts against GitHub's secondary rate limit, which Probot's throttling enforces.)
    const { superseded } = await queue.enqueue<ValidatePayload>({
      kind: JOB.validate,
      payload: { target: p.target, pr: pull.number, config: p.config, headSha, issues: links, ...(left.length ? { linksLeftOut: left } : {}), checkRunId: checkId, delivery: p.delivery },
      key,
      group: prGroup(p.target, pull.number),
      limit: repoLimit(p.target, env),
    });
    // A newer push: the older checks that had not started are closed here (running ones close themselves).
    for (const id of superseded) {
      const old = await queue.get<ValidatePayload>(id);
      if (old?.state === 'cancelled' && old.payload.checkRunId !== checkId) {
        await gh.updateCheckRun(r, old.payload.checkRunId, { status: 'completed', conclusion: 'cancelled', output: renderSuperseded(headSha) });
      }
    }
  }

  // ─── heavy lane ──────────────────────────────────────────────────────────────────────────

  if (lanes.has('heavy')) {
    queue.work<ReproducePayload>(JOB.reproduce, (ctx) => reproduceJob(ctx), { concurrency: heavy });
    queue.work<ValidatePayload>(JOB.validate, (ctx) => validateJob(ctx), { concurrency: heavy });
    // Off the hot path: one at a time, after the webhook-driven work of the same kind.
    queue.work<ConfirmPayload>(JOB.confirm, (ctx) => confirmJob(ctx), { concurrency: 1 });
  }

  async function reproduceJob({ job, lastAttempt, signal }: JobContext<ReproducePayload>): Promise<void> {
    const p = job.payload;
    const log = jobLog(job);
    const gh = await deps.github(p.target);
    const r = refOf(p.target);
    const s = appSettings(p.config);
    const where = { branch: p.branch, sha: p.sha };
    try {
      const issue = await gh.getIssue(r, p.issue);
      // A retry (after a crash, or GitHub failing the last post) reuses what this job already paid for.
      const stored = await store.reproductionAt(r, p.issue, p.sha, job.createdAt);
      let rep: Reproduction;
      let dir: string | undefined;
      if (stored) {
        log.info({ issue: p.issue, sha: p.sha, reproduction: stored.id }, 'reusing the reproduction this job made before it was interrupted');
        rep = reproductionOf(stored);
      } else {
        // Queued before the day's budget ran out: nothing more starts.
        const over = await budgetHit(p.target);
        if (over) {
          await gh.upsertComment(r, p.issue, 'limit', renderLimitReached(over, 'reproducing this issue'));
          return;
        }
        const generation = generationFor(p.config, log, await leftToday(p.target));
        dir = await fetchRepo(job.kind, gh, r, [{ sha: p.sha, ref: `refs/heads/${p.branch}` }]);
        const checkout = dir;
        rep = await timed(deps.metrics, job.kind, 'reproduce', () => reproduceIssue(deps.sandbox, { ...contextFor(checkout, p.sha, p.config, r), issue: issueInput(issue), generation, signal }));
        countUsage(deps.metrics, rep.strategy, rep.usage);
        await addSpend(p.target, { tokens: rep.usage.promptTokens + rep.usage.completionTokens, usd: rep.usage.costUsd, containerMs: rep.usage.wallMs });
        if (signal.aborted) return;
        await store.saveReproduction(r, p.issue, where, rep);
      }
      await store.recordOutcome({ jobId: job.id, owner: r.owner, repo: r.repo, target: `#${p.issue}`, verdict: rep.status, costUsd: rep.usage.costUsd, tokens: rep.usage.promptTokens + rep.usage.completionTokens, wallMs: rep.usage.wallMs, at: Date.now() });
      log.info({ issue: p.issue, status: rep.status, strategy: rep.strategy }, 'reproduction done');
      const ok = rep.status === 'reproduced';
      const [add, other] = ok ? [s.labels.reproduced, s.labels.not_reproduced] : [s.labels.not_reproduced, s.labels.reproduced];
      await gh.setLabels(r, p.issue, { add: [add], remove: issue.labels.includes(other) ? [other] : [] });
      const extra = ok && s.issues.draft_pr ? await draftFor(gh, p, issue.author.login, dir ?? (await fetchRepo(job.kind, gh, r, [{ sha: p.sha, ref: `refs/heads/${p.branch}` }])), rep) : {};
      if (ok || s.issues.comment_on_failure) await gh.upsertComment(r, p.issue, 'reproduction', renderReproductionResult(rep, where, extra));
    } catch (e) {
      if ((lastAttempt || isPermanent(e)) && s.issues.comment_on_failure) {
        await gh.upsertComment(r, p.issue, 'reproduction', renderJobError('reproducing this issue', oneLine(e))).catch((x) => log.warn({ err: oneLine(x) }, 'could not post the error'));
      }
      throw e;
    }
  }

  /**
   * The draft PR pushes model-written code to a branch of this repository, where push workflows run
   * with its secrets: only for an issue opened by someone with write access.
   */
  async function draftFor(gh: GitHubPort, p: ReproducePayload, author: string, dir: string, rep: Reproduction): Promise<{ draftPr?: number; draftPrError?: string }> {
    if (!(await writes(gh, p.target, author))) {
      return { draftPrError: `not for an issue opened by @${author}, who cannot write to this repository: a branch here would run its push workflows, with its secrets, on code a model wrote.` };
    }
    return openDraft(gh, refOf(p.target), dir, p, rep);
  }

  async function openDraft(gh: GitHubPort, r: RepoRef, dir: string, p: ReproducePayload, rep: Reproduction): Promise<{ draftPr?: number; draftPrError?: string }> {
    try {
      const files = await filesAfterPatch(dir, p.sha, rep.testPatch);
      const draftPr = await gh.openDraftPull(r, {
        baseBranch: p.branch,
        baseSha: p.sha,
        branch: `swt/reproduce-${p.issue}`,
        title: `Test reproducing #${p.issue}`,
        body: `The test swt-bot wrote for #${p.issue}. It fails on ${short(p.sha)}; a fix makes it pass.`,
        files,
      });
      return { draftPr };
    } catch (e) {
      const status = (e as { status?: number }).status;
      return { draftPrError: status === 403 ? 'the App needs the Contents: write permission for that.' : oneLine(e) };
    }
  }

  async function validateJob({ job, lastAttempt, signal }: JobContext<ValidatePayload>): Promise<void> {
    const p = job.payload;
    const log = jobLog(job);
    const started = Date.now();
    const spent = { costUsd: 0, tokens: 0 };
    const gh = await deps.github(p.target);
    const r = refOf(p.target);
    const s = appSettings(p.config);
    const progress = checkProgress(gh, r, p.checkRunId, p.issues, deps.progressIntervalMs ?? 3000, log);
    let author = 'unknown';
    // Queued before the day's budget ran out: nothing more starts.
    const over = await budgetHit(p.target);
    if (over) {
      await progress.close();
      const { conclusion } = gateConclusion((await gh.getPull(r, p.pr)).author.login, false, s.gate);
      await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion, output: renderLimitCheck(over) });
      await gh.upsertComment(r, p.pr, 'limit', renderLimitReached(over, 'checking this pull request'));
      return;
    }
    try {
      progress.step('fetching the base and the head');
      const pull = await gh.getPull(r, p.pr);
      author = pull.author.login;
      const dir = await fetchRepo(job.kind, gh, r, [
        { sha: pull.base.sha, ref: `refs/heads/${pull.base.ref}` },
        { sha: p.headSha, ref: `refs/pull/${p.pr}/head` },
      ]);
      // One diff decides both: whether this head waits for a maintainer, and whether it gets its own install.
      const manifests = await headManifestChanges(dir, pull.base.sha, { rev: p.headSha, patches: [] });
      const approved = await store.isApproved(r, p.pr, p.headSha);
      const waiting = needsApproval({ fork: pull.fork, files: manifests, approved });
      if (waiting) {
        await progress.close();
        log.info({ pr: p.pr, headSha: p.headSha, manifests: waiting }, "a fork's head changes dependency manifests: waiting for a maintainer");
        await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion: 'action_required', output: renderAwaitingApproval(waiting, p.headSha), detailsUrl: `${deps.gitBaseUrl}/${r.owner}/${r.repo}/pull/${p.pr}` });
        return;
      }
      const authorWrites = !pull.fork && manifests.length > 0 && (await writes(gh, p.target, author));
      const headInstall = headInstallOf({ fork: pull.fork, approved, authorWrites });
      const outcomes: IssueOutcome[] = [];
      for (const issue of p.issues) {
        if (signal.aborted) break;
        outcomes.push(await checkIssue(gh, r, dir, pull, p, issue, headInstall, progress, log, spent, signal, job.createdAt));
      }
      await progress.close();
      if (signal.aborted) {
        // A newer push is being checked: close this head's check unless the new job reuses it.
        const latest = await store.latestHead(r, p.pr);
        if ((await store.checkRunFor(r, p.headSha)) !== p.checkRunId || latest !== p.headSha) {
          await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion: 'cancelled', output: renderSuperseded(latest ?? '') });
        }
        return;
      }
      const { conclusion, gated } = gateConclusion(author, fixFilterPasses(outcomes), s.gate);
      const rendered = renderCheckResult({ conclusion, gated, author, issues: outcomes });
      const result = p.linksLeftOut?.length ? { ...rendered, summary: `${renderLinksLeftOut(p.linksLeftOut, p.issues.length)}\n\n${rendered.summary}` } : rendered;
      const chunks = batches(outcomes.flatMap((o) => (o.kind === 'validated' ? annotationsFor(o.validation, o.reproduction.testPatch) : [])));
      // More than 50 annotations: the first batches go in updates while the run is still in progress.
      for (const chunk of chunks.slice(0, -1)) await gh.updateCheckRun(r, p.checkRunId, { output: { ...result, annotations: chunk } });
      await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion, output: { ...result, annotations: chunks.at(-1) ?? [] }, actions: [RERUN_ACTION] });
      await gh.upsertComment(r, p.pr, 'validation', renderPrComment({ conclusion, gated, author, issues: outcomes }));
      for (const o of outcomes) {
        if (o.kind === 'no-reproduction') continue;
        const v = o.kind === 'validated' ? o.validation : undefined;
        await store.saveVerdict(r, {
          pr: p.pr,
          issue: o.issue,
          headSha: p.headSha,
          title: pull.title,
          author,
          verdict: v ? candidateVerdict(v) : 'error',
          f2p: v ? judgedTests(v).filter(reproduces).length : 0,
          failing: v ? judgedTests(v).filter((t) => t.head === 'fail').length : 0,
          durationMs: v?.durationMs ?? 0,
          diffSize: pull.additions + pull.deletions,
          validation: v,
        });
      }
      await scheduleRanking(p.target, p.issues);
      await store.recordOutcome({ jobId: job.id, owner: r.owner, repo: r.repo, target: `#${p.pr}`, verdict: conclusion, ...spent, wallMs: Date.now() - started, at: Date.now() });
      log.info({ pr: p.pr, conclusion }, 'check done');
    } catch (e) {
      await progress.close();
      if (lastAttempt || isPermanent(e)) {
        const outcomes: IssueOutcome[] = p.issues.map((issue) => ({ issue, kind: 'error', message: oneLine(e) }));
        const { conclusion, gated } = gateConclusion(author, false, s.gate);
        await gh
          .updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion, output: renderCheckResult({ conclusion, gated, author, issues: outcomes }), actions: [RERUN_ACTION] })
          .catch((x) => log.warn({ err: oneLine(x) }, 'could not post the error'));
        await gh.upsertComment(r, p.pr, 'validation', renderJobError('checking this pull request', oneLine(e))).catch(() => undefined);
      }
      throw e;
    } finally {
      // The installation's day: the LLM spend of any reproductions written here, and the containers' time.
      await addSpend(p.target, { tokens: spent.tokens, usd: spent.costUsd, containerMs: Date.now() - started }).catch((x) => log.warn({ err: oneLine(x) }, 'could not record the spend'));
    }
  }

  /**
   * Live accuracy's ground truth: the issue's stored test at the PR's base and at the merge
   * commit. F→P confirms the reproduction. Posts nothing; the status page and `/swt stats` show it.
   */
  async function confirmJob({ job }: JobContext<ConfirmPayload>): Promise<void> {
    const p = job.payload;
    const log = jobLog(job);
    const r = refOf(p.target);
    const rep = await store.latestReproduction(r, p.issue);
    if (!rep) return;
    const gh = await deps.github(p.target);
    const started = Date.now();
    const dir = await fetchRepo(job.kind, gh, r, [
      { sha: p.baseSha, ref: `refs/heads/${p.baseRef}` },
      { sha: p.mergeSha, ref: `refs/heads/${p.baseRef}` },
    ]);
    const v = await timed(deps.metrics, job.kind, 'confirm', () => validate(deps.sandbox, { ...contextFor(dir, p.baseSha, p.config, r), head: p.mergeSha, testPatch: rep.testPatch, reruns: p.config.reruns }));
    const judged = judgedTests(v);
    const confirmed = judged.some(reproduces);
    await store.saveConfirmation({
      owner: r.owner,
      repo: r.repo,
      issue: p.issue,
      pr: p.pr,
      mergeSha: p.mergeSha,
      baseSha: p.baseSha,
      strategy: rep.strategy,
      reproductionId: rep.id,
      confirmed,
      transitions: judged.map((t) => t.transition),
      at: Date.now(),
    });
    await store.recordOutcome({ jobId: job.id, owner: r.owner, repo: r.repo, target: `#${p.issue} by #${p.pr}`, verdict: confirmed ? 'confirmed' : 'not confirmed', costUsd: 0, tokens: 0, wallMs: Date.now() - started, at: Date.now() });
    log.info({ issue: p.issue, pr: p.pr, confirmed, transitions: judged.map((t) => t.transition) }, 'live accuracy: reproduction checked at the merge commit');
  }

  /** One linked issue: its stored test (or a new one written at the PR's base), run on base and head. */
  async function checkIssue(
    gh: GitHubPort,
    r: RepoRef,
    dir: string,
    pull: PullData,
    p: ValidatePayload,
    issue: number,
    headInstall: HeadInstall,
    progress: Progress,
    log: Logger,
    spent: { costUsd: number; tokens: number },
    signal: AbortSignal,
    since: number,
  ): Promise<IssueOutcome> {
    try {
      let rep = await store.latestReproduction(r, issue);
      if (!rep) {
        // What this job wrote before a crash or a retry is reused, not paid for again.
        const own = await store.reproductionAt(r, issue, pull.base.sha, since);
        if (own && own.status !== 'reproduced') return { issue, kind: 'no-reproduction', reason: own.reason };
      }
      if (!rep) {
        progress.step(`#${issue} has no reproducing test yet: writing one at the base ${short(pull.base.sha)}`);
        const data = await gh.getIssue(r, issue);
        if (data.isPullRequest) return { issue, kind: 'no-reproduction', reason: `#${issue} is a pull request, not an issue` };
        if (data.body.length > MAX_ISSUE_BODY) return { issue, kind: 'no-reproduction', reason: `the issue body has ${data.body.length} characters, more than the ${MAX_ISSUE_BODY} swt-bot reads` };
        // A linked issue is reproduced only where the issue itself would have been (issues.auto, skip labels, events.issues, …).
        const rules = shouldReproduce({ kind: 'opened' }, issueFactsOfData(data), appSettings(p.config));
        if (!rules.act) return { issue, kind: 'no-reproduction', reason: `#${issue} is not reproduced automatically here (${rules.reason}); a maintainer can comment \`/swt reproduce\` on it` };
        const generation = generationFor(p.config, log, await leftToday(p.target));
        const made = await timed(deps.metrics, JOB.validate, 'reproduce', () =>
          reproduceIssue(deps.sandbox, { ...contextFor(dir, pull.base.sha, p.config, r), issue: issueInput(data), generation, signal }, progress),
        );
        countUsage(deps.metrics, made.strategy, made.usage);
        spent.costUsd += made.usage.costUsd;
        spent.tokens += made.usage.promptTokens + made.usage.completionTokens;
        await store.saveReproduction(r, issue, { branch: pull.base.ref, sha: pull.base.sha }, made);
        if (made.status !== 'reproduced') return { issue, kind: 'no-reproduction', reason: made.reason };
        rep = (await store.latestReproduction(r, issue))!;
      }
      progress.step(`#${issue}: running the reproducing test on the base ${short(pull.base.sha)} and the head ${short(p.headSha)}`);
      // Tests this repository has shown flaky are confirmed first and labelled; new ones are remembered.
      const knownFlaky = await store.knownFlaky(r);
      const v = await timed(deps.metrics, JOB.validate, 'validate', () =>
        validate(deps.sandbox, { ...contextFor(dir, pull.base.sha, p.config, r), head: p.headSha, headInstall, testPatch: rep.testPatch, reruns: p.config.reruns, knownFlaky, signal, ...(p.config.coverage ? { coverage: {} } : {}) }, progress),
      );
      await store.recordFlaky(r, v.tests.filter((t) => t.flaky).map((t) => t.id));
      return { issue, kind: 'validated', validation: viewOf(v), reproduction: { strategy: rep.strategy, sha: rep.baseSha, testPatch: rep.testPatch } };
    } catch (e) {
      // The engine or an image may come back: retry the job. Anything else belongs to this issue's row.
      if (!isSwtError(e) || TRANSIENT.has(e.code)) throw e;
      return { issue, kind: 'error', message: oneLine(e) };
    }
  }

  /**
   * The ranking table is refreshed by a fast-lane job at the end of a short window: several PRs
   * finishing together cost one edit of the issue's table, not one each (every edit is a write
   * that counts against GitHub's rate limits). The job reads the store when it runs, so it shows all.
   */
  async function scheduleRanking(target: Target, issues: number[]): Promise<void> {
    const windowMs = deps.rankWindowMs ?? 5000;
    const now = Date.now();
    const bucket = Math.floor(now / windowMs);
    for (const issue of issues) {
      await queue.enqueue<RankPayload>({
        kind: JOB.rank,
        payload: { target, issues: [issue] },
        key: `rank:${target.owner}/${target.repo}#${issue}@${bucket}`,
        delayMs: (bucket + 1) * windowMs - now,
      });
    }
  }

  async function updateRanking(gh: GitHubPort, r: RepoRef, issues: number[]): Promise<void> {
    for (const issue of issues) {
      const ranked = rank(await store.candidates(r, issue));
      if (ranked.length >= 2) await gh.upsertComment(r, issue, 'ranking', renderRanking(issue, ranked));
    }
  }
}

function issueFactsOfData(d: IssueData) {
  return { number: d.number, title: d.title, body: d.body, author: d.author, locked: d.locked, labels: d.labels, isPullRequest: d.isPullRequest };
}

/** A stored reproduction as the pipeline returned it (what a retried job posts instead of paying again). */
function reproductionOf(x: StoredReproduction): Reproduction {
  return {
    status: x.status,
    strategy: x.strategy,
    testPatch: x.testPatch,
    ...(x.failureExcerpt ? { failureExcerpt: x.failureExcerpt } : {}),
    reason: x.reason,
    usage: { promptTokens: x.tokens, completionTokens: 0, costUsd: x.costUsd, steps: 0, wallMs: x.wallMs },
  };
}

function issueInput(issue: { title: string; body: string }): IssueInput {
  return { title: issue.title, body: issue.body };
}

function viewOf(v: ValidationResult): ValidationView {
  const view: ValidationView = { tests: v.tests, counts: v.counts, success: v.success, likelyCorrect: v.likelyCorrect, base: v.base, head: v.head, durationMs: v.durationMs, warnings: v.warnings, ...(v.testEnvironment ? { testEnvironment: v.testEnvironment } : {}) };
  if (v.coverage) view.coverage = { dC: v.coverage.dC, referenceDC: v.coverage.referenceDC, covered: v.coverage.covered, lines: v.coverage.lines };
  if (v.coverageError) view.coverageError = v.coverageError;
  return view;
}

/**
 * Live progress on the check run: at most one update per interval, the latest step wins, and
 * nothing is sent after close() (so a late update can never overwrite the result).
 */
function checkProgress(gh: GitHubPort, r: RepoRef, id: number, issues: number[], intervalMs: number, log: Logger): Progress & { close(): Promise<void> } {
  let last = 0;
  let pending: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let inflight: Promise<void> = Promise.resolve();
  const send = (message: string) => {
    last = Date.now();
    inflight = inflight.then(async () => {
      if (closed) return;
      await gh.updateCheckRun(r, id, { status: 'in_progress', output: renderCheckProgress(message, issues) }).catch((e) => log.warn({ err: oneLine(e) }, 'progress update failed'));
    });
  };
  return {
    step(message) {
      if (closed) return;
      const wait = intervalMs - (Date.now() - last);
      if (wait <= 0) {
        pending = undefined;
        send(message);
        return;
      }
      pending = message;
      timer ??= setTimeout(() => {
        timer = undefined;
        if (pending !== undefined && !closed) {
          const m = pending;
          pending = undefined;
          send(m);
        }
      }, wait);
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await inflight;
    },
  };
}
