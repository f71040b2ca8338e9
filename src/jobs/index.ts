/**
 * The table of job kinds: which module handles each, in which lane, how many at once. A new kind
 * is a module with its payload type and `handle(deps, job)`, a name in JOB (payloads.ts), and a row here.
 */
import type { JobContext, JobQueue } from '../queue/queue.js';
import * as confirm from './confirm.js';
import { jobDeps, type JobDeps, type WorkerDeps } from './deps.js';
import * as event from './event.js';
import * as merged from './merged.js';
import { JOB } from './payloads.js';
import * as rank from './rank.js';
import * as stats from './stats.js';
import * as work from './work.js';

export type { WorkerDeps } from './deps.js';

type Lane = 'fast' | 'heavy';

interface JobKind {
  kind: string;
  /** fast: acknowledge and post; heavy: containers. */
  lane: Lane;
  handle(d: JobDeps, ctx: JobContext<any>): Promise<void>;
  /** Jobs of this kind at once in one process; the lane's concurrency when absent. */
  concurrency?: number;
}

/**
 * Every kind of queue work: the webhook itself (`event` or `work`, queued by webhooks/receiver.ts)
 * and what it leads to. A `work` job becomes a `reproduce` or `validate` job as it runs (work.ts):
 * the three share one handler, which runs whichever the job carries.
 */
export const JOB_KINDS: readonly JobKind[] = [
  { kind: JOB.event, lane: 'fast', handle: event.handle },
  { kind: JOB.work, lane: 'heavy', handle: work.handle },
  { kind: JOB.rank, lane: 'fast', handle: rank.handle },
  { kind: JOB.merged, lane: 'fast', handle: merged.handle },
  { kind: JOB.stats, lane: 'fast', handle: stats.handle },
  { kind: JOB.reproduce, lane: 'heavy', handle: work.handle },
  { kind: JOB.validate, lane: 'heavy', handle: work.handle },
  // Off the hot path: one at a time, after the webhook-driven work of the same kind.
  { kind: JOB.confirm, lane: 'heavy', handle: confirm.handle, concurrency: 1 },
];

/** Registers a worker on the queue for every job kind of the lanes this process works. */
export function registerWorkers(deps: WorkerDeps, queue: JobQueue = deps.queue): void {
  const d = jobDeps(deps);
  const lanes = new Set<Lane>(deps.lanes ?? ['fast', 'heavy']);
  const perLane = { fast: deps.concurrency?.fast ?? 4, heavy: deps.concurrency?.heavy ?? 2 };
  for (const k of JOB_KINDS) {
    if (lanes.has(k.lane)) queue.work(k.kind, (ctx) => k.handle(d, ctx), { concurrency: k.concurrency ?? perLane[k.lane] });
  }
}
