/** The App's job kinds and what each carries. Handlers enqueue them; each kind's module in jobs/ runs them. */
import type { RepoConfig } from '../config/repoConfig.js';
import type { MarkerKind, PullData, Target } from '../github/types.js';

export const JOB = {
  /** Fast lane: a webhook as received: read the config, decide, enqueue what follows. */
  event: 'event',
  /** Fast lane: acknowledge at once (comment "started", check run in_progress), then queue the work. */
  ack: 'ack',
  /** Fast lane: post one comment (refusal, help, notice). */
  notice: 'notice',
  /** Fast lane: refresh the ranking table of issues. */
  rank: 'rank',
  /** Heavy lane: write and verify a reproducing test. */
  reproduce: 'reproduce',
  /** Heavy lane: run the reproducing tests on a PR's base and head. */
  validate: 'validate',
  /** Fast lane: a PR was merged; record it for live accuracy and queue its confirmations. */
  merged: 'merged',
  /** Heavy lane, low priority: run an issue's stored test at the merge commit of the PR that closed it. */
  confirm: 'confirm',
  /** Fast lane: answer `/swt stats` with the repository's live accuracy. */
  stats: 'stats',
} as const;

/** Priority of work off the hot path (lower runs first among due jobs of a kind). */
export const LOW_PRIORITY = 10;

/** The webhook delivery a job descends from: logs of every process carry it. */
export interface Traced {
  delivery?: string;
}


export type AckPayload = Traced & {
  /** Who caused it (the webhook's sender): the per-author rate limit counts them. */
  sender?: string;
} & (
  | { type: 'issue'; target: Target; issue: number; config: RepoConfig; force?: string }
  | {
      type: 'pr';
      target: Target;
      pr: number;
      config: RepoConfig;
      /** The PR as the webhook showed it (saves a request); fetched when absent. */
      pull?: PullData;
      /**
       * A maintainer asked (`/swt validate [<sha>]`): the head it names, or else the head seen before
       * the comment was written (`at`, ms), is approved to install; a later push is not.
       */
      approval?: { at: number; sha?: string; by: string };
      /** A re-run: a fresh job even for a head already checked. */
      force?: string;
      /** The config is invalid: say so on the check and stop. */
      configError?: { message: string; headSha: string };
    }
  );

export interface NoticePayload extends Traced {
  target: Target;
  number: number;
  kind: MarkerKind;
  body: string;
}

export interface RankPayload extends Traced {
  target: Target;
  issues: number[];
}

export interface ReproducePayload extends Traced {
  target: Target;
  issue: number;
  config: RepoConfig;
  branch: string;
  sha: string;
}

export interface ValidatePayload extends Traced {
  target: Target;
  pr: number;
  config: RepoConfig;
  headSha: string;
  issues: number[];
  /** Linked issues past SWT_MAX_LINKED_ISSUES, named on the check and not run. */
  linksLeftOut?: number[];
  checkRunId: number;
}

/** Jobs of one PR supersede each other; an issue's reproductions likewise. */
export const prGroup = (t: Target, pr: number) => `${t.owner}/${t.repo}#pr${pr}`;
export const issueGroup = (t: Target, issue: number) => `${t.owner}/${t.repo}#issue${issue}`;

export interface EventPayload extends Traced {
  /** The event name (`issues`, `pull_request`, ...); the action is in the payload. */
  name: string;
  payload: unknown;
  target: Target;
  installationId?: number;
}

export interface MergedPayload extends Traced {
  target: Target;
  pull: PullData;
  mergeSha: string;
  config: RepoConfig;
  mergedAt: number;
}

export interface StatsPayload extends Traced {
  target: Target;
  number: number;
}

export interface ConfirmPayload extends Traced {
  target: Target;
  issue: number;
  pr: number;
  mergeSha: string;
  baseSha: string;
  baseRef: string;
  config: RepoConfig;
}

/** The limit shared by every worker: at most `max` heavy jobs of one repository at once. */
export function repoLimit(t: Target, env: NodeJS.ProcessEnv = process.env): { key: string; max: number } {
  const n = Number(env.SWT_REPO_CONCURRENCY);
  return { key: `repo:${t.owner}/${t.repo}`, max: Number.isInteger(n) && n > 0 ? n : 2 };
}
