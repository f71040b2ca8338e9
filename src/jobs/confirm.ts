/**
 * Heavy lane, low priority: live accuracy's ground truth. The issue's stored test runs at the PR's
 * base and at the merge commit; F→P confirms the reproduction. Posts nothing; the status page and
 * `/swt stats` show it.
 */
import type { RepoConfig } from '../config/repoConfig.js';
import type { Target } from '../github/types.js';
import { judgedTests, reproduces } from '../harness/classify.js';
import { validate } from '../pipeline/validate.js';
import type { JobContext } from '../queue/queue.js';
import { timed } from '../web/metrics.js';
import { contextFor, fetchRepo, jobLog, refOf, type JobDeps } from './deps.js';
import type { Traced } from './payloads.js';

export interface ConfirmPayload extends Traced {
  target: Target;
  issue: number;
  pr: number;
  mergeSha: string;
  baseSha: string;
  baseRef: string;
  config: RepoConfig;
}

export async function handle(d: JobDeps, { job }: JobContext<ConfirmPayload>): Promise<void> {
  const p = job.payload;
  const r = refOf(p.target);
  const rep = await d.store.latestReproduction(r, p.issue);
  if (!rep) return;
  const gh = await d.github(p.target);
  const started = Date.now();
  const dir = await fetchRepo(d, job.kind, gh, r, [
    { sha: p.baseSha, ref: `refs/heads/${p.baseRef}` },
    { sha: p.mergeSha, ref: `refs/heads/${p.baseRef}` },
  ]);
  const v = await timed(d.metrics, job.kind, 'confirm', () => validate(d.sandbox, { ...contextFor(dir, p.baseSha, p.config, r), head: p.mergeSha, testPatch: rep.testPatch, reruns: p.config.reruns }));
  const judged = judgedTests(v);
  const confirmed = judged.some(reproduces);
  await d.store.saveConfirmation({
    owner: r.owner,
    repo: r.repo,
    issue: p.issue,
    pr: p.pr,
    mergeSha: p.mergeSha,
    baseSha: p.baseSha,
    strategy: rep.strategy,
    reproductionId: rep.id,
    confirmed,
    transitions: judged.map((t) => t.transition),
    at: Date.now(),
  });
  await d.store.recordOutcome({ jobId: job.id, owner: r.owner, repo: r.repo, target: `#${p.issue} by #${p.pr}`, verdict: confirmed ? 'confirmed' : 'not confirmed', costUsd: 0, tokens: 0, wallMs: Date.now() - started, at: Date.now() });
  jobLog(d, job).info({ issue: p.issue, pr: p.pr, confirmed, transitions: judged.map((t) => t.transition) }, 'live accuracy: reproduction checked at the merge commit');
}
