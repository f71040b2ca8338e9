/**
 * The job queue the App's webhook handlers put work into and its workers take work from.
 * Engine-neutral on purpose: SQLite embedded (sqliteQueue.ts), BullMQ on Redis at scale (bullQueue.ts).
 *
 * - `key`: enqueueing a key that exists is a no-op, whatever state its job is in (idempotency
 *   per webhook delivery, and per repository + issue/PR + sha).
 * - `group`: a newer job of a group supersedes the older ones: queued ones are cancelled, running
 *   ones see their `signal` abort (a new push makes the stale run moot).
 * - Workers run at most `concurrency` jobs of a kind at once; a failed attempt is retried with
 *   exponential backoff until `maxAttempts`; a job whose process died is resumed at restart.
 * - `limit`: at most `max` jobs sharing `limit.key` run at once, across every worker of the queue
 *   (one noisy repository cannot take all workers).
 */
import { isSwtError } from '../util/errors.js';

export type JobState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export const JOB_STATES: readonly JobState[] = ['queued', 'running', 'done', 'failed', 'cancelled'];

export interface JobSpec<P = unknown> {
  kind: string;
  payload: P;
  key?: string;
  group?: string;
  /** Default 3. */
  maxAttempts?: number;
  /** Start no earlier than this many ms from now. */
  delayMs?: number;
  /** Among due jobs of a kind, lower runs first (default 0; work off the hot path uses more). */
  priority?: number;
  /** At most `max` running jobs with this `key`, across all workers (e.g. per repository). */
  limit?: JobLimit;
}

export type BecomeSpec<P> = Pick<JobSpec<P>, 'kind' | 'payload' | 'key' | 'group'>;

export interface JobLimit {
  key: string;
  max: number;
}

export interface JobRecord<P = unknown> {
  id: string;
  kind: string;
  payload: P;
  key: string | null;
  group: string | null;
  state: JobState;
  /** Attempts started so far (a resumed job keeps its count). */
  attempts: number;
  maxAttempts: number;
  /** One line, secrets removed; set when an attempt failed. */
  error: string | null;
  createdAt: number;
  updatedAt: number;
  runAt: number;
  limit: JobLimit | null;
}

export interface EnqueueResult {
  id: string;
  /** False when a job with the same key already existed: nothing was added. */
  created: boolean;
  /** Older jobs of the same group this one cancelled. */
  superseded: string[];
}

export interface JobContext<P = unknown> {
  job: JobRecord<P>;
  /** 1-based. */
  attempt: number;
  /** No further attempt follows if this one fails: the handler should say so where users look. */
  lastAttempt: boolean;
  /** Aborted when a newer job of the group supersedes this one, or the queue stops. */
  signal: AbortSignal;
}

export type JobHandler<P = unknown> = (ctx: JobContext<P>) => Promise<void>;

export type JobEvent = 'started' | 'done' | 'retrying' | 'failed' | 'cancelled';

export interface JobQueue {
  enqueue<P>(spec: JobSpec<P>): Promise<EnqueueResult>;
  /** Registers the handler of a kind; call before start(). */
  work<P>(kind: string, handler: JobHandler<P>, opts?: { concurrency?: number }): void;
  /** Recovers jobs of dead processes and begins taking work. */
  start(): Promise<void>;
  /** Stops taking work and waits for running jobs (at most `timeoutMs`; the rest resume at the next start). */
  stop(opts?: { timeoutMs?: number }): Promise<void>;
  get<P = unknown>(id: string): Promise<JobRecord<P> | undefined>;
  /**
   * A running job becomes the work it decided on, so a webhook reaches its work in one queue trip:
   * its kind and payload are replaced, it takes `key` as well (unless another job holds it: `taken`,
   * nothing changed) and joins `group`, superseding the group's older jobs as enqueue does.
   */
  become<P>(id: string, spec: BecomeSpec<P>): Promise<{ taken: boolean; superseded: string[] }>;
  /** The job enqueued under this key, or that became work under it, in whatever state. */
  findByKey<P = unknown>(key: string): Promise<JobRecord<P> | undefined>;
  list<P = unknown>(filter?: { kind?: string; state?: JobState; group?: string }): Promise<JobRecord<P>[]>;
  /** The newest `n` jobs, newest first (the status page). */
  recent<P = unknown>(n: number): Promise<JobRecord<P>[]>;
  /** How many jobs are in each state (the status page, /metrics). */
  counts(): Promise<Record<JobState, number>>;
  /**
   * Drops finished jobs (done, failed, cancelled) unchanged for the retention, their keys with
   * them, so the queue's store stays bounded; returns how many. Start and the workers' timers call it.
   */
  prune(): Promise<number>;
  /** Cancels the queued and running jobs of a group; returns their ids. */
  cancelGroup(group: string): Promise<string[]>;
  /** Resolves once nothing is queued or running for the registered kinds (tests, the demo). */
  drain(timeoutMs?: number): Promise<void>;
  on(event: JobEvent, listener: (job: JobRecord) => void): void;
}

/** A failure another attempt cannot fix (bad input, bad config): no retry. */
export class PermanentJobError extends Error {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.name = 'PermanentJobError';
  }
}

/** SwtError codes a user must fix; retrying changes nothing. */
const PERMANENT_CODES = new Set(['CANCELLED', 'NOT_APPROVED', 'BAD_CONFIG', 'BAD_INPUT', 'NOT_A_REPO', 'UNKNOWN_REVISION', 'PATCH_MALFORMED', 'UNSAFE_PATH', 'PATCH_TOO_LARGE', 'STATE_TOO_LARGE', 'NO_TEST_FILES']);

export function isPermanent(e: unknown): boolean {
  return e instanceof PermanentJobError || (isSwtError(e) && PERMANENT_CODES.has(e.code)) || (e as { status?: number })?.status === 404 || (e as { status?: number })?.status === 422;
}

/** Delay before attempt `attempt + 1`: base · 2^(attempt-1), capped, with ±20 % jitter. Pure but for `random`. */
export function backoffMs(attempt: number, opts: { baseMs?: number; maxMs?: number; random?: () => number } = {}): number {
  const base = opts.baseMs ?? 2_000;
  const max = opts.maxMs ?? 5 * 60_000;
  const raw = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  const jitter = 0.8 + 0.4 * (opts.random ?? Math.random)();
  return Math.round(raw * jitter);
}

/** What a failed attempt leaves in the job: its first line, at most 1000 characters, secrets removed. */
export const SUPERSEDED = 'superseded by a newer job';

/** How often a queue that takes work drops its old finished jobs. */
const PRUNE_EVERY_MS = 3_600_000;

/** For a queue's faster timer: true once an hour, when old finished jobs should be dropped again. */
export function pruneDue(now: () => number = Date.now): () => boolean {
  let last = now();
  return () => {
    if (now() - last < PRUNE_EVERY_MS) return false;
    last = now();
    return true;
  };
}
