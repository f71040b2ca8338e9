/** Fast lane: post one comment (refusal, help, notice) that a webhook handler decided on. */
import type { MarkerKind, Target } from '../github/types.js';
import type { JobContext } from '../queue/queue.js';
import { refOf, type JobDeps } from './deps.js';
import type { Traced } from './payloads.js';

export interface NoticePayload extends Traced {
  target: Target;
  number: number;
  kind: MarkerKind;
  body: string;
}

export async function handle(d: JobDeps, { job }: JobContext<NoticePayload>): Promise<void> {
  const p = job.payload;
  const gh = await d.github(p.target);
  await gh.upsertComment(refOf(p.target), p.number, p.kind, p.body);
}
