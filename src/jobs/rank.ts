/**
 * Fast lane: the ranking table of an issue's candidate fixes. It is refreshed at the end of a short
 * window: several PRs finishing together cost one edit of the issue's table, not one each (every
 * edit is a write that counts against GitHub's rate limits). The job reads the store when it
 * runs, so it shows all.
 */
import { renderRanking } from '../github/render.js';
import { repoSlug, type Target } from '../github/types.js';
import { rank } from '../pipeline/rank.js';
import type { JobContext } from '../queue/queue.js';
import { refOf, type JobDeps } from './deps.js';
import { JOB, type Traced } from './payloads.js';

export interface RankPayload extends Traced {
  target: Target;
  issues: number[];
}

export async function handle(d: JobDeps, { job }: JobContext<RankPayload>): Promise<void> {
  const r = refOf(job.payload.target);
  const gh = await d.github(job.payload.target);
  for (const issue of job.payload.issues) {
    const ranked = rank(await d.store.candidates(r, issue));
    if (ranked.length >= 2) await gh.upsertComment(r, issue, 'ranking', renderRanking(issue, ranked));
  }
}

/** Queues the refresh of these issues' tables at the end of the current window. */
export async function scheduleRanking(d: JobDeps, target: Target, issues: number[]): Promise<void> {
  const windowMs = d.rankWindowMs ?? 5000;
  const now = Date.now();
  const bucket = Math.floor(now / windowMs);
  for (const issue of issues) {
    await d.queue.enqueue<RankPayload>({
      kind: JOB.rank,
      payload: { target, issues: [issue] },
      key: `rank:${repoSlug(target)}#${issue}@${bucket}`,
      delayMs: (bucket + 1) * windowMs - now,
    });
  }
}
