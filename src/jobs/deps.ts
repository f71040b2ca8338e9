/**
 * What every job kind is handed: the services of the process (queue, store, repository cache,
 * sandbox, GitHub) and the operator's settings, built once per process by `jobDeps`. The helpers
 * here are the steps several kinds share; each kind's own steps live in its module.
 */
import type { RepoConfig } from '../config/repoConfig.js';
import type { BudgetLimits, ReproduceOptions } from '../generation/index.js';
import { modelRefusal } from '../generation/models.js';
import { WriteAccess } from '../github/permissions.js';
import { repoSlug, type GitHubPort, type RepoRef, type Target } from '../github/types.js';
import type { ContextInput } from '../pipeline/context.js';
import type { JobContext, JobQueue, JobRecord } from '../queue/queue.js';
import { cloneUrl, type RepoCache } from '../repo/cache.js';
import type { Sandbox } from '../sandbox/types.js';
import type { Store } from '../store/types.js';
import { isSwtError, SwtError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { timed, type ProcessMetrics } from '../web/metrics.js';
import { settingsFrom, type Environment, type Settings, type Spend, type SpendLimits } from '../settings/index.js';

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
  /** The operator's settings (budget ceilings, daily limits, SWT_REPO_CONCURRENCY); default read from `env`. */
  settings?: Settings;
  /** Where the settings and the model list (SWT_LLM_MODELS) are read; default the process's environment. */
  env?: Environment;
  /** Phase durations and LLM usage are counted here (the App's /metrics). */
  metrics?: ProcessMetrics;
  /**
   * What runs a decided reproduction or validation in place of its module (tests of the decisions,
   * webhooks.handlers, that run the heavy lane without containers); default the module's `handle`.
   */
  runWork?: (ctx: JobContext<unknown>) => Promise<void>;
}

/** WorkerDeps with the settings read once: what a job kind's `handle(deps, job)` receives. */
export interface JobDeps extends WorkerDeps {
  settings: Settings;
  log: Logger;
  /** The per-issue generation ceilings (SWT_BUDGET_*). */
  ceiling: BudgetLimits;
  limits: SpendLimits;
  // Write access as GitHub's permission API says it, asked whenever a decision needs it (kept a minute).
  writeAccess: WriteAccess;
}

export function jobDeps(deps: WorkerDeps): JobDeps {
  const settings = deps.settings ?? settingsFrom(deps.env);
  return { ...deps, settings, log: deps.logger.child({ mod: 'workers' }), ceiling: settings.budget, limits: settings.spend, writeAccess: new WriteAccess() };
}

/** A job's logger: its id and the webhook delivery it came from, in whichever process runs it. */
export const jobLog = (d: JobDeps, job: JobRecord<{ delivery?: string }>): Logger =>
  d.log.child({ job: job.id, kind: job.kind, ...(job.payload?.delivery ? { delivery: job.payload.delivery } : {}) });

export const short = (sha: string) => sha.slice(0, 7);
export const refOf = (t: Target): RepoRef => ({ owner: t.owner, repo: t.repo });

/** Why the config's model may not be used (not on SWT_LLM_MODELS, or unpriced); undefined when it may, or none is chosen. */
export function modelRefused(d: JobDeps, config: RepoConfig): string | undefined {
  if (d.generation && 'llm' in d.generation) return undefined; // the operator's own model (the demo, tests)
  return config.generation?.model ? modelRefusal(config.generation.model, d.env) : undefined;
}

/** Generation settings within the per-issue ceilings and what is left of the installation's day. */
export function generationFor(d: JobDeps, config: RepoConfig, logger: Logger, left: Spend): ReproduceOptions {
  const refused = modelRefused(d, config);
  if (refused) throw new SwtError('BAD_CONFIG', refused);
  const b = config.budget ?? {};
  const budget: BudgetLimits = {
    tokens: Math.max(1, Math.min(d.ceiling.tokens, b.tokens ?? Infinity, left.tokens)),
    usd: Math.max(1e-6, Math.min(d.ceiling.usd, b.usd ?? Infinity, left.usd)),
    steps: Math.min(d.ceiling.steps, b.steps ?? Infinity),
    wallMs: Math.min(d.ceiling.wallMs, b.wall_seconds === undefined ? Infinity : b.wall_seconds * 1000),
  };
  const llm = d.generation && 'llm' in d.generation ? d.generation.llm : config.generation?.model ? { model: config.generation.model } : undefined;
  return { strategy: d.generation?.strategy ?? config.generation?.strategy, llm, budget, logger };
}

export const contextFor = (dir: string, base: string, config: RepoConfig, r: RepoRef): ContextInput => ({
  repo: dir,
  base,
  // One package cache per repository, by its name: a fork's PR writes into the cache of the repository it targets only.
  cacheScope: repoSlug(r),
  // The config the event job read (default branch, `_extends` merged, validated), not the file at base again.
  config,
});

export const writes = (d: JobDeps, gh: GitHubPort, t: Target, login: string) =>
  d.writeAccess.writes({ installationId: t.installationId, owner: t.owner, repo: t.repo, login }, () => gh.collaboratorPermission(refOf(t), login));

export const fetchRepo = async (d: JobDeps, kind: string, gh: GitHubPort, r: RepoRef, want: Array<{ sha: string; ref?: string }>) =>
  timed(d.metrics, kind, 'fetch', async () => d.cache.ensure({ ...r, url: cloneUrl(d.gitBaseUrl, r), token: await gh.gitToken(), want }));
