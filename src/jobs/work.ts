/**
 * Heavy lane: the job that does a delivery's work, in one queue trip. The receiver queued the
 * delivery as `work` (its payload may lead to a reproduction or a validation): event.ts decides it
 * here as the fast lane would, posts "started", and the job becomes the work (start.ts `takeWork`)
 * and runs it now. A `reproduce` or `validate` job (one that became its work and is retried or
 * resumed, or one queued by a fast-lane job) already carries the decided work and just runs it.
 */
import type { JobContext } from '../queue/queue.js';
import type { JobDeps } from './deps.js';
import { decide } from './event.js';
import { JOB, type EventPayload } from './payloads.js';
import * as reproduce from './reproduce.js';
import type { Work } from './start.js';
import * as validate from './validate.js';

const isDelivery = (p: unknown): p is EventPayload => typeof p === 'object' && p !== null && 'name' in p && 'payload' in p;

export async function handle(d: JobDeps, ctx: JobContext<unknown>): Promise<void> {
  const p = ctx.job.payload;
  const w = isDelivery(p) ? await decide(d, ctx as JobContext<EventPayload>) : ({ kind: ctx.job.kind, payload: p } as Pick<Work, 'kind' | 'payload'>);
  if (!w) return;
  const as = { ...ctx, job: { ...ctx.job, kind: w.kind, payload: w.payload } };
  if (d.runWork) return d.runWork(as);
  if (w.kind === JOB.reproduce) return reproduce.handle(d, as as JobContext<reproduce.ReproducePayload>);
  return validate.handle(d, as as JobContext<validate.ValidatePayload>);
}
