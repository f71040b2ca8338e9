/**
 * The App's job kinds and what every job carries. The webhook receiver (webhooks/) and jobs enqueue
 * them; each kind's module in jobs/ runs it, with its payload type beside it; jobs/index.ts is the table.
 */
import { repoSlug, type Target } from '../github/types.js';

export const JOB = {
  /** Fast lane: a webhook that leads to no heavy work (help, stats, a closed PR): read the config, decide, answer. */
  event: 'event',
  /**
   * Heavy lane: a webhook that may lead to a reproduction or a validation (github/events.ts
   * `mayLeadToWork`): decided as `event` is, then the job becomes that work and runs it (one queue trip).
   */
  work: 'work',
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

/** Every webhook the App acts on; app.yml subscribes to exactly these events. */
export const HANDLED = {
  issue: ['issues.opened', 'issues.reopened', 'issues.labeled'],
  command: ['issue_comment.created'],
  pull: ['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened', 'pull_request.edited'],
  closed: ['pull_request.closed'],
  rerun: ['check_run.rerequested', 'check_run.requested_action'],
} as const;

/** The same, as `event.action` names: what the receiver queues. */
export const HANDLED_EVENTS: ReadonlySet<string> = new Set(Object.values(HANDLED).flat());

/** Priority of work off the hot path (lower runs first among due jobs of a kind). */
export const LOW_PRIORITY = 10;

/** The webhook delivery a job descends from: logs of every process carry it. */
export interface Traced {
  delivery?: string;
}

/** Jobs of one PR supersede each other; an issue's reproductions likewise. */
export const prGroup = (t: Target, pr: number) => `${repoSlug(t)}#pr${pr}`;
export const issueGroup = (t: Target, issue: number) => `${repoSlug(t)}#issue${issue}`;

export interface EventPayload extends Traced {
  /** The event name (`issues`, `pull_request`, ...); the action is in the payload. */
  name: string;
  payload: unknown;
  target: Target;
  installationId?: number;
}

/** The limit shared by every worker: at most `max` heavy jobs of one repository at once (SWT_REPO_CONCURRENCY). */
export function repoLimit(t: Target, max: number): { key: string; max: number } {
  return { key: `repo:${repoSlug(t)}`, max };
}
