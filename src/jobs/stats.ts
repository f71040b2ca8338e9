/** Fast lane: answer `/swt stats` with the repository's live accuracy. */
import { renderStats } from '../github/render.js';
import { repoSlug, type Target } from '../github/types.js';
import { accuracyRowsWithTotals } from '../pipeline/liveAccuracy.js';
import type { JobContext } from '../queue/queue.js';
import { liveAccuracyRows } from '../store/types.js';
import { refOf, type JobDeps } from './deps.js';
import type { Traced } from './payloads.js';

export interface StatsPayload extends Traced {
  target: Target;
  number: number;
}

export async function handle(d: JobDeps, { job }: JobContext<StatsPayload>): Promise<void> {
  const p = job.payload;
  const r = refOf(p.target);
  const rows = accuracyRowsWithTotals(await liveAccuracyRows(d.store, r));
  const gh = await d.github(p.target);
  await gh.upsertComment(r, p.number, 'stats', renderStats(repoSlug(r), rows));
}
