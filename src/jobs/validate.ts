/**
 * Heavy lane: run the reproducing tests of a PR's linked issues on its base and head, then close
 * the check run with the verdict (and the gate's conclusion), comment, and store the verdicts.
 */
import { errorLine } from '../util/errors.js';
import { appSettings, type RepoConfig } from '../config/repoConfig.js';
import { fixFilterPasses, gateConclusion, headInstallOf, needsApproval } from '../github/decide.js';
import type { IssueOutcome } from '../github/outcome.js';
import { annotationsFor, batches } from '../github/annotations.js';
import { renderAwaitingApproval, renderCheckResult, renderJobError, renderLimitCheck, renderLimitReached, renderLinksLeftOut, renderPrComment, RERUN_ACTION, type LimitHit } from '../github/render.js';
import { repoSlug, type GitHubPort, type RepoRef, type Target } from '../github/types.js';
import { judgedTests, reproduces } from '../harness/classify.js';
import { candidateVerdict } from '../pipeline/rank.js';
import { headChanges } from '../pipeline/headChanges.js';
import { isPermanent, type JobContext, type JobRecord } from '../queue/queue.js';
import type { Logger } from '../util/logger.js';
import { checkIssue, type IssueRun } from './checkIssue.js';
import { fetchRepo, jobLog, refOf, writes, type JobDeps } from './deps.js';
import type { Traced } from './payloads.js';
import { checkProgress, type CheckProgress } from './progress.js';
import { scheduleRanking } from './rank.js';
import { addSpend, budgetHit } from './spend.js';

export interface ValidatePayload extends Traced {
  target: Target;
  pr: number;
  config: RepoConfig;
  headSha: string;
  issues: number[];
  /** Linked issues past SWT_MAX_LINKED_ISSUES, named on the check and not run. */
  linksLeftOut?: number[];
  checkRunId: number;
}

interface PullRun extends IssueRun {
  p: ValidatePayload;
  progress: CheckProgress;
}

export async function handle(d: JobDeps, { job, lastAttempt, signal }: JobContext<ValidatePayload>): Promise<void> {
  const p = job.payload;
  const log = jobLog(d, job);
  const started = Date.now();
  const spent = { costUsd: 0, tokens: 0 };
  const gh = await d.github(p.target);
  const r = refOf(p.target);
  const progress = checkProgress(gh, r, p.checkRunId, p.issues, d.progressIntervalMs ?? 3000, log);
  let author = 'unknown';
  // Queued before the day's budget ran out: nothing more starts.
  const over = await budgetHit(d, p.target);
  if (over) {
    await progress.close();
    return postLimit(gh, r, p, over);
  }
  try {
    progress.step('fetching the base and the head');
    const pull = await gh.getPull(r, p.pr);
    author = pull.author.login;
    const run = await openRun(d, job.kind, { gh, r, pull, p, progress, log, spent, signal, since: job.createdAt });
    if (!run) return;
    const outcomes: IssueOutcome[] = [];
    for (const issue of p.issues) {
      if (signal.aborted) break;
      outcomes.push(await checkIssue(d, run, issue));
    }
    await progress.close();
    // Superseded: the newer job closed this check run (start.ts); a stopping queue resumes it later.
    if (signal.aborted) return;
    await postResult(d, run, outcomes, job, started);
  } catch (e) {
    await progress.close();
    if (lastAttempt || isPermanent(e)) await postError(gh, r, p, author, e, log);
    throw e;
  } finally {
    // The installation's day: the LLM spend of any reproductions written here, and the containers' time.
    await addSpend(d, p.target, { tokens: spent.tokens, usd: spent.costUsd, containerMs: Date.now() - started }).catch((x) => log.warn({ err: errorLine(x) }, 'could not record the spend'));
  }
}

/** The check closes on the day's limit, with the gate's conclusion for the PR's author; the PR is told. */
async function postLimit(gh: GitHubPort, r: RepoRef, p: ValidatePayload, over: LimitHit): Promise<void> {
  const { conclusion } = gateConclusion((await gh.getPull(r, p.pr)).author.login, false, appSettings(p.config).gate);
  await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion, output: renderLimitCheck(over) });
  await gh.upsertComment(r, p.pr, 'limit', renderLimitReached(over, 'checking this pull request'));
}

/**
 * The base and the head fetched, and how the head installs. Undefined when a fork's head waits for
 * a maintainer: the check run then says so.
 */
async function openRun(d: JobDeps, kind: string, run: Omit<PullRun, 'dir' | 'headInstall'>): Promise<PullRun | undefined> {
  const { gh, r, pull, p, progress, log } = run;
  const dir = await fetchRepo(d, kind, gh, r, [
    { sha: pull.base.sha, ref: `refs/heads/${pull.base.ref}` },
    { sha: p.headSha, ref: `refs/pull/${p.pr}/head` },
  ]);
  // One diff decides both: whether this head waits for a maintainer, and whether it gets its own install.
  const { manifests, machinery } = await headChanges(dir, pull.base.sha, { rev: p.headSha, patches: [] });
  const approved = await d.store.isApproved(r, p.pr, p.headSha);
  const waiting = needsApproval({ fork: pull.fork, manifests, machinery, approved });
  if (waiting) {
    await progress.close();
    log.info({ pr: p.pr, headSha: p.headSha, ...waiting }, "a fork's head changes dependency manifests or test machinery: waiting for a maintainer");
    await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion: 'action_required', output: renderAwaitingApproval(waiting, p.headSha), detailsUrl: `${d.gitBaseUrl}/${repoSlug(r)}/pull/${p.pr}` });
    return undefined;
  }
  const authorWrites = !pull.fork && manifests.length > 0 && (await writes(d, gh, p.target, pull.author.login));
  return { ...run, dir, headInstall: headInstallOf({ fork: pull.fork, approved, authorWrites }) };
}

/** The last attempt failed (or cannot succeed): every issue's row says why, and so does the PR's comment. */
async function postError(gh: GitHubPort, r: RepoRef, p: ValidatePayload, author: string, e: unknown, log: Logger): Promise<void> {
  const outcomes: IssueOutcome[] = p.issues.map((issue) => ({ issue, kind: 'error', message: errorLine(e) }));
  const { conclusion, gated } = gateConclusion(author, false, appSettings(p.config).gate);
  await gh
    .updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion, output: renderCheckResult({ conclusion, gated, author, issues: outcomes }), actions: [RERUN_ACTION] })
    .catch((x) => log.warn({ err: errorLine(x) }, 'could not post the error'));
  await gh.upsertComment(r, p.pr, 'validation', renderJobError('checking this pull request', errorLine(e))).catch(() => undefined);
}

async function postResult(d: JobDeps, { gh, r, p, pull, log, spent }: PullRun, outcomes: IssueOutcome[], job: JobRecord<ValidatePayload>, started: number): Promise<void> {
  const author = pull.author.login;
  const { conclusion, gated } = gateConclusion(author, fixFilterPasses(outcomes), appSettings(p.config).gate);
  const rendered = renderCheckResult({ conclusion, gated, author, issues: outcomes });
  const result = p.linksLeftOut?.length ? { ...rendered, summary: `${renderLinksLeftOut(p.linksLeftOut, p.issues.length)}\n\n${rendered.summary}` } : rendered;
  const chunks = batches(outcomes.flatMap((o) => (o.kind === 'validated' ? annotationsFor(o.validation, o.reproduction.testPatch) : [])));
  // More than 50 annotations: the first batches go in updates while the run is still in progress.
  for (const chunk of chunks.slice(0, -1)) await gh.updateCheckRun(r, p.checkRunId, { output: { ...result, annotations: chunk } });
  await gh.updateCheckRun(r, p.checkRunId, { status: 'completed', conclusion, output: { ...result, annotations: chunks.at(-1) ?? [] }, actions: [RERUN_ACTION] });
  await gh.upsertComment(r, p.pr, 'validation', renderPrComment({ conclusion, gated, author, issues: outcomes }));
  for (const o of outcomes) {
    if (o.kind === 'no-reproduction') continue;
    const v = o.kind === 'validated' ? o.validation : undefined;
    await d.store.saveVerdict(r, {
      pr: p.pr,
      issue: o.issue,
      headSha: p.headSha,
      title: pull.title,
      author,
      verdict: v ? candidateVerdict(v) : 'error',
      f2p: v ? judgedTests(v).filter(reproduces).length : 0,
      failing: v ? judgedTests(v).filter((t) => t.head === 'fail').length : 0,
      durationMs: v?.durationMs ?? 0,
      diffSize: pull.additions + pull.deletions,
      validation: v,
    });
  }
  await scheduleRanking(d, p.target, p.issues);
  await d.store.recordOutcome({ jobId: job.id, owner: r.owner, repo: r.repo, target: `#${p.pr}`, verdict: conclusion, ...spent, wallMs: Date.now() - started, at: Date.now() });
  log.info({ pr: p.pr, conclusion }, 'check done');
}
