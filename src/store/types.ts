/**
 * What the App remembers, engine-neutral: SQLite beside the embedded queue (sqliteStore.ts), Redis when
 * web and workers share nothing else (redisStore.ts). Every call is async so either fits.
 */
import type { RawAnswer } from '../generation/answers.js';
import type { Reproduction } from '../generation/types.js';
import type { ValidationView } from '../github/outcome.js';
import { liveAccuracy, type Confirmation, type LiveAccuracyRow, type MergeRecord, type RepoKey, type ReproductionCost } from '../pipeline/liveAccuracy.js';
import type { Candidate, CandidateVerdict } from '../pipeline/rank.js';
import type { RepoRef } from '../github/types.js';
import type { Spend } from '../settings/index.js';

export type { Confirmation, MergeRecord, ReproductionCost } from '../pipeline/liveAccuracy.js';

export type { Spend } from '../settings/index.js';

export interface StoredReproduction extends Pick<Reproduction, 'status' | 'strategy' | 'testPatch' | 'failureExcerpt' | 'reason'> {
  id: number;
  issue: number;
  branch: string;
  baseSha: string;
  costUsd: number;
  tokens: number;
  wallMs: number;
  createdAt: number;
  /** The model's raw answers (clipped), so a person can see why an attempt failed; [] without a model. */
  answers: RawAnswer[];
  /** The model that wrote them, e.g. `local:qwen2.5-coder-1.5b`. */
  model?: string;
}

export interface VerdictInput {
  pr: number;
  issue: number;
  headSha: string;
  title: string;
  author: string;
  verdict: CandidateVerdict;
  f2p: number;
  failing: number;
  durationMs: number;
  diffSize: number;
  validation?: ValidationView;
}

/** What a finished job showed, for the status page: keyed by the queue's job id. */
export interface JobOutcome {
  jobId: string;
  owner: string;
  repo: string;
  /** `#12` for an issue or PR. */
  target: string;
  /** reproduced / not-reproduced / success / failure / neutral / confirmed / not-confirmed / error text. */
  verdict: string;
  costUsd: number;
  tokens: number;
  wallMs: number;
  at: number;
}

/** How many of a repository's known flaky tests a validation is told about. */
export const KNOWN_FLAKY_LIMIT = 200;

export interface Store {
  saveReproduction(r: RepoRef, issue: number, where: { branch: string; sha: string }, rep: Reproduction): Promise<number>;
  /** The newest reproduction of the issue that did reproduce it. */
  latestReproduction(r: RepoRef, issue: number): Promise<StoredReproduction | undefined>;
  countReproductions(r: RepoRef, issue: number): Promise<number>;
  /** The newest reproduction of the issue at this sha saved at or after `since`, whatever it found: a retried job's own result. */
  reproductionAt(r: RepoRef, issue: number, sha: string, since: number): Promise<StoredReproduction | undefined>;
  saveVerdict(r: RepoRef, v: VerdictInput): Promise<void>;
  /** The open PRs with a verdict for the issue (unranked). */
  candidates(r: RepoRef, issue: number): Promise<Candidate[]>;
  /** Marks a closed PR's verdicts; returns the issues whose ranking changes. */
  closePull(r: RepoRef, pr: number): Promise<number[]>;
  checkRunFor(r: RepoRef, headSha: string): Promise<number | undefined>;
  saveCheckRun(r: RepoRef, headSha: string, pr: number, id: number): Promise<void>;
  /** The PR a check run belongs to (check_run events of forks carry no pull_requests). */
  pullOfCheckRun(r: RepoRef, checkRunId: number): Promise<{ pr: number; headSha: string } | undefined>;
  /** The head sha of the PR's newest check run. */
  latestHead(r: RepoRef, pr: number): Promise<string | undefined>;
  /** True the first time a thread is refused; false ever after. */
  claimRefusal(r: RepoRef, thread: number): Promise<boolean>;
  /** When the App first saw this head of the PR (ms; `at` the first time, by default now): an approval binds to heads seen before it. */
  seeHead(r: RepoRef, pr: number, headSha: string, at?: number): Promise<number>;
  approve(r: RepoRef, pr: number, headSha: string): Promise<void>;
  isApproved(r: RepoRef, pr: number, headSha: string): Promise<boolean>;

  /** The latest verdict of a PR for an issue (a merged PR's gate, live accuracy). */
  verdictOf(r: RepoRef, pr: number, issue: number): Promise<(Candidate & { open: boolean }) | undefined>;
  recordOutcome(o: JobOutcome): Promise<void>;
  outcomes(jobIds: string[]): Promise<Map<string, JobOutcome>>;
  recordMerge(m: MergeRecord): Promise<void>;
  /** Merged PRs of a repository (all repositories when omitted), oldest first. */
  merges(r?: RepoRef): Promise<MergeRecord[]>;
  setFollowUp(r: RepoRef, pr: number, followUp: NonNullable<MergeRecord['followUp']>): Promise<void>;
  saveConfirmation(c: Confirmation): Promise<void>;
  confirmations(r?: RepoRef): Promise<Confirmation[]>;
  reproductionCosts(r?: RepoRef): Promise<ReproductionCost[]>;
  /** Adds to what a budget scope (an installation) spent on a UTC day. */
  addSpend(scope: string, day: string, spend: Spend): Promise<void>;
  spendOf(scope: string, day: string): Promise<Spend>;
  /**
   * Counts one run caused by an author, if fewer than `limit` were counted in the `windowMs` before
   * `now`; false (and nothing counted) when the author has none left. Atomic across processes.
   */
  takeAuthorRun(scope: string, login: string, now: number, windowMs: number, limit: number): Promise<boolean>;
  /** Counts one more validation in which each of these tests was flaky, on this repository. */
  recordFlaky(r: RepoRef, testIds: readonly string[]): Promise<void>;
  /** Tests seen flaky on this repository, most often first, ties in reverse id order (at most KNOWN_FLAKY_LIMIT). */
  knownFlaky(r: RepoRef): Promise<string[]>;
  close(): Promise<void>;
}

/** Live accuracy of one repository (all when omitted), from what the store keeps. */
export async function liveAccuracyRows(store: Store, r?: RepoKey): Promise<LiveAccuracyRow[]> {
  const [confirmations, merges, costs] = await Promise.all([store.confirmations(r), store.merges(r), store.reproductionCosts(r)]);
  return liveAccuracy({ confirmations, merges, costs });
}
