/**
 * Fast lane: a merged PR, for live accuracy. Later merges that revert it or fix its issues again
 * mark the earlier ones; the merge is recorded (gated when its author is one the gate watches and
 * the bot checked it); each linked issue with a stored reproduction gets a low-priority confirmation.
 */
import { appSettings, type RepoConfig } from '../config/repoConfig.js';
import { matchesAuthor } from '../github/decide.js';
import { closingIssueNumbers } from '../github/links.js';
import { repoSlug, type PullData, type Target } from '../github/types.js';
import { followUpsOf } from '../pipeline/liveAccuracy.js';
import type { JobContext } from '../queue/queue.js';
import type { ConfirmPayload } from './confirm.js';
import { jobLog, refOf, type JobDeps } from './deps.js';
import { JOB, LOW_PRIORITY, repoLimit, type Traced } from './payloads.js';

export interface MergedPayload extends Traced {
  target: Target;
  pull: PullData;
  mergeSha: string;
  config: RepoConfig;
  mergedAt: number;
}

export async function handle(d: JobDeps, { job }: JobContext<MergedPayload>): Promise<void> {
  const { store } = d;
  const p = job.payload;
  const gh = await d.github(p.target);
  const r = refOf(p.target);
  const fromGraphql = await gh.closingIssues(r, p.pull.number).catch(() => [] as number[]);
  const issues = [...new Set([...closingIssueNumbers(p.pull.body, r.owner, r.repo), ...fromGraphql])].sort((a, b) => a - b);
  for (const f of followUpsOf({ pr: p.pull.number, title: p.pull.title, body: p.pull.body, issues }, await store.merges(r))) {
    await store.setFollowUp(r, f.pr, { kind: f.kind, pr: p.pull.number });
  }
  const checked = (await Promise.all(issues.map((i) => store.verdictOf(r, p.pull.number, i)))).some(Boolean);
  const reproductions = (await Promise.all(issues.map(async (issue) => ({ issue, rep: await store.latestReproduction(r, issue) })))).filter((x) => x.rep);
  await store.recordMerge({
    owner: r.owner,
    repo: r.repo,
    pr: p.pull.number,
    mergeSha: p.mergeSha,
    author: p.pull.author.login,
    gated: checked && matchesAuthor(p.pull.author.login, appSettings(p.config).gate.authors),
    issues,
    strategy: reproductions[0]?.rep?.strategy ?? null,
    mergedAt: p.mergedAt,
    followUp: null,
  });
  for (const { issue } of reproductions) {
    await d.queue.enqueue<ConfirmPayload>({
      kind: JOB.confirm,
      payload: { target: p.target, issue, pr: p.pull.number, mergeSha: p.mergeSha, baseSha: p.pull.base.sha, baseRef: p.pull.base.ref, config: p.config, delivery: p.delivery },
      key: `confirm:${repoSlug(r)}#${issue}@${p.mergeSha}`,
      priority: LOW_PRIORITY,
      limit: repoLimit(p.target, d.settings.repoConcurrency),
    });
  }
  jobLog(d, job).info({ pr: p.pull.number, issues, confirmations: reproductions.length }, 'merged PR recorded');
}
