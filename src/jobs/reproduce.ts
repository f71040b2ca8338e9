/**
 * Heavy lane: write and verify a test that reproduces an issue at the default branch's sha, label
 * the issue, and post the result (with a draft PR of the test when the repository asks for one).
 */
import { errorLine } from '../util/errors.js';
import { appSettings, type RepoConfig } from '../config/repoConfig.js';
import { renderJobError, renderLimitReached, renderReproductionResult } from '../github/render.js';
import type { GitHubPort, IssueData, RepoRef, Target } from '../github/types.js';
import type { Reproduction } from '../generation/types.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import { isPermanent, type JobContext } from '../queue/queue.js';
import { filesAfterPatch } from '../pipeline/patchedFiles.js';
import type { StoredReproduction } from '../store/types.js';
import { countUsage, timed } from '../web/metrics.js';
import { contextFor, fetchRepo, generationFor, jobLog, refOf, short, writes, type JobDeps } from './deps.js';
import type { Traced } from './payloads.js';
import { addSpend, budgetHit, leftToday } from './spend.js';

export interface ReproducePayload extends Traced {
  target: Target;
  issue: number;
  config: RepoConfig;
  branch: string;
  sha: string;
}

export async function handle(d: JobDeps, { job, lastAttempt, signal }: JobContext<ReproducePayload>): Promise<void> {
  const p = job.payload;
  const log = jobLog(d, job);
  const gh = await d.github(p.target);
  const r = refOf(p.target);
  const s = appSettings(p.config);
  const where = { branch: p.branch, sha: p.sha };
  const checkout = () => fetchRepo(d, job.kind, gh, r, [{ sha: p.sha, ref: `refs/heads/${p.branch}` }]);
  try {
    const issue = await gh.getIssue(r, p.issue);
    // A retry (after a crash, or GitHub failing the last post) reuses what this job already paid for.
    const stored = await d.store.reproductionAt(r, p.issue, p.sha, job.createdAt);
    let rep: Reproduction;
    let dir: string | undefined;
    if (stored) {
      log.info({ issue: p.issue, sha: p.sha, reproduction: stored.id }, 'reusing the reproduction this job made before it was interrupted');
      rep = reproductionOf(stored);
    } else {
      // Queued before the day's budget ran out: nothing more starts.
      const over = await budgetHit(d, p.target);
      if (over) {
        await gh.upsertComment(r, p.issue, 'limit', renderLimitReached(over, 'reproducing this issue'));
        return;
      }
      const generation = generationFor(d, p.config, log, await leftToday(d, p.target));
      const at = (dir = await checkout());
      rep = await timed(d.metrics, job.kind, 'reproduce', () => reproduceIssue(d.sandbox, { ...contextFor(at, p.sha, p.config, r), issue: { title: issue.title, body: issue.body }, generation, signal }));
      countUsage(d.metrics, rep.strategy, rep.usage);
      await addSpend(d, p.target, { tokens: rep.usage.promptTokens + rep.usage.completionTokens, usd: rep.usage.costUsd, containerMs: rep.usage.wallMs });
      if (signal.aborted) return;
      await d.store.saveReproduction(r, p.issue, where, rep);
    }
    await d.store.recordOutcome({ jobId: job.id, owner: r.owner, repo: r.repo, target: `#${p.issue}`, verdict: rep.status, costUsd: rep.usage.costUsd, tokens: rep.usage.promptTokens + rep.usage.completionTokens, wallMs: rep.usage.wallMs, at: Date.now() });
    log.info({ issue: p.issue, status: rep.status, strategy: rep.strategy }, 'reproduction done');
    const ok = rep.status === 'reproduced';
    const [add, other] = ok ? [s.labels.reproduced, s.labels.not_reproduced] : [s.labels.not_reproduced, s.labels.reproduced];
    await gh.setLabels(r, p.issue, { add: [add], remove: issue.labels.includes(other) ? [other] : [] });
    const extra = ok && s.issues.draft_pr ? await draftFor(d, gh, p, issue, dir ?? (await checkout()), rep) : {};
    if (ok || s.issues.comment_on_failure) await gh.upsertComment(r, p.issue, 'reproduction', renderReproductionResult(rep, where, extra));
  } catch (e) {
    if ((lastAttempt || isPermanent(e)) && s.issues.comment_on_failure) {
      await gh.upsertComment(r, p.issue, 'reproduction', renderJobError('reproducing this issue', errorLine(e))).catch((x) => log.warn({ err: errorLine(x) }, 'could not post the error'));
    }
    throw e;
  }
}

type Draft = { draftPr?: number; draftPrError?: string };

/**
 * The draft PR pushes model-written code to a branch of this repository, where push workflows run
 * with its secrets: only for an issue opened by someone with write access.
 */
async function draftFor(d: JobDeps, gh: GitHubPort, p: ReproducePayload, issue: IssueData, dir: string, rep: Reproduction): Promise<Draft> {
  const author = issue.author.login;
  if (!(await writes(d, gh, p.target, author))) {
    return { draftPrError: `not for an issue opened by @${author}, who cannot write to this repository: a branch here would run its push workflows, with its secrets, on code a model wrote.` };
  }
  return openDraft(gh, refOf(p.target), dir, p, rep);
}

async function openDraft(gh: GitHubPort, r: RepoRef, dir: string, p: ReproducePayload, rep: Reproduction): Promise<Draft> {
  try {
    const files = await filesAfterPatch(dir, p.sha, rep.testPatch);
    const draftPr = await gh.openDraftPull(r, {
      baseBranch: p.branch,
      baseSha: p.sha,
      branch: `swt/reproduce-${p.issue}`,
      title: `Test reproducing #${p.issue}`,
      body: `The test swt-bot wrote for #${p.issue}. It fails on ${short(p.sha)}; a fix makes it pass.`,
      files,
    });
    return { draftPr };
  } catch (e) {
    const status = (e as { status?: number }).status;
    return { draftPrError: status === 403 ? 'the App needs the Contents: write permission for that.' : errorLine(e) };
  }
}

/** A stored reproduction as the pipeline returned it (what a retried job posts instead of paying again). */
function reproductionOf(x: StoredReproduction): Reproduction {
  return {
    status: x.status,
    strategy: x.strategy,
    testPatch: x.testPatch,
    ...(x.failureExcerpt ? { failureExcerpt: x.failureExcerpt } : {}),
    reason: x.reason,
    usage: { promptTokens: x.tokens, completionTokens: 0, costUsd: x.costUsd, steps: 0, wallMs: x.wallMs },
  };
}
