/** One linked issue of a validation: its stored test (or a new one written at the PR's base), run on base and head. */
import { errorLine } from '../util/errors.js';
import { appSettings, type RepoConfig } from '../config/repoConfig.js';
import { MAX_ISSUE_BODY, shouldReproduce } from '../github/decide.js';
import type { IssueOutcome, ValidationView } from '../github/outcome.js';
import type { GitHubPort, PullData, RepoRef, Target } from '../github/types.js';
import type { Progress } from '../pipeline/progress.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import { validate, type HeadInstall, type ValidationResult } from '../pipeline/validate.js';
import { isSwtError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { countUsage, timed } from '../web/metrics.js';
import { contextFor, generationFor, short, type JobDeps } from './deps.js';
import { JOB } from './payloads.js';
import { leftToday } from './spend.js';

/** SwtError codes that a later attempt may not hit again (the engine, a pull): the job is retried. */
const TRANSIENT = new Set(['DOCKER_UNREACHABLE', 'IMAGE_UNAVAILABLE', 'INTERRUPTED', 'LLM_TIMEOUT']);

/** What the checks of one validation job share (validate.ts adds its whole payload). */
export interface IssueRun {
  gh: GitHubPort;
  r: RepoRef;
  dir: string;
  pull: PullData;
  p: { target: Target; config: RepoConfig; headSha: string };
  headInstall: HeadInstall;
  progress: Progress;
  log: Logger;
  /** The LLM spend of reproductions written here, added to as they are. */
  spent: { costUsd: number; tokens: number };
  signal: AbortSignal;
  /** When the job was created: what it wrote before a crash is found by it. */
  since: number;
}

export async function checkIssue(d: JobDeps, run: IssueRun, issue: number): Promise<IssueOutcome> {
  const { r, pull, p, progress, signal } = run;
  try {
    let rep = await d.store.latestReproduction(r, issue);
    if (!rep) {
      // What this job wrote before a crash or a retry is reused, not paid for again.
      const own = await d.store.reproductionAt(r, issue, pull.base.sha, run.since);
      if (own && own.status !== 'reproduced') return { issue, kind: 'no-reproduction', reason: own.reason };
      const refused = await writeReproduction(d, run, issue);
      if (refused) return refused;
      rep = (await d.store.latestReproduction(r, issue))!;
    }
    progress.step(`#${issue}: running the reproducing test on the base ${short(pull.base.sha)} and the head ${short(p.headSha)}`);
    // Tests this repository has shown flaky are confirmed first and labelled; new ones are remembered.
    const knownFlaky = await d.store.knownFlaky(r);
    const v = await timed(d.metrics, JOB.validate, 'validate', () =>
      validate(d.sandbox, { ...contextFor(run.dir, pull.base.sha, p.config, r), head: p.headSha, headInstall: run.headInstall, testPatch: rep.testPatch, reruns: p.config.reruns, knownFlaky, signal, ...(p.config.coverage ? { coverage: {} } : {}) }, progress),
    );
    await d.store.recordFlaky(r, v.tests.filter((t) => t.flaky).map((t) => t.id));
    return { issue, kind: 'validated', validation: viewOf(v), reproduction: { strategy: rep.strategy, sha: rep.baseSha, testPatch: rep.testPatch } };
  } catch (e) {
    // The engine or an image may come back: retry the job. Anything else belongs to this issue's row.
    if (!isSwtError(e) || TRANSIENT.has(e.code)) throw e;
    return { issue, kind: 'error', message: errorLine(e) };
  }
}

/** Writes and stores the issue's reproduction at the PR's base; the outcome when there is none to run. */
async function writeReproduction(d: JobDeps, run: IssueRun, issue: number): Promise<IssueOutcome | undefined> {
  const { gh, r, pull, p } = run;
  run.progress.step(`#${issue} has no reproducing test yet: writing one at the base ${short(pull.base.sha)}`);
  const data = await gh.getIssue(r, issue);
  if (data.isPullRequest) return { issue, kind: 'no-reproduction', reason: `#${issue} is a pull request, not an issue` };
  if (data.body.length > MAX_ISSUE_BODY) return { issue, kind: 'no-reproduction', reason: `the issue body has ${data.body.length} characters, more than the ${MAX_ISSUE_BODY} swt-bot reads` };
  // A linked issue is reproduced only where the issue itself would have been (issues.auto, skip labels, events.issues, …).
  const rules = shouldReproduce({ kind: 'opened' }, data, appSettings(p.config));
  if (!rules.act) return { issue, kind: 'no-reproduction', reason: `#${issue} is not reproduced automatically here (${rules.reason}); a maintainer can comment \`/swt reproduce\` on it` };
  const generation = generationFor(d, p.config, run.log, await leftToday(d, p.target));
  const made = await timed(d.metrics, JOB.validate, 'reproduce', () =>
    reproduceIssue(d.sandbox, { ...contextFor(run.dir, pull.base.sha, p.config, r), issue: { title: data.title, body: data.body }, generation, signal: run.signal }, run.progress),
  );
  countUsage(d.metrics, made.strategy, made.usage);
  run.spent.costUsd += made.usage.costUsd;
  run.spent.tokens += made.usage.promptTokens + made.usage.completionTokens;
  await d.store.saveReproduction(r, issue, { branch: pull.base.ref, sha: pull.base.sha }, made);
  return made.status !== 'reproduced' ? { issue, kind: 'no-reproduction', reason: made.reason } : undefined;
}

function viewOf(v: ValidationResult): ValidationView {
  const view: ValidationView = { tests: v.tests, counts: v.counts, success: v.success, likelyCorrect: v.likelyCorrect, base: v.base, head: v.head, durationMs: v.durationMs, warnings: v.warnings, ...(v.testEnvironment ? { testEnvironment: v.testEnvironment } : {}), ...(v.machinery ? { machinery: v.machinery } : {}) };
  if (v.coverage) view.coverage = { dC: v.coverage.dC, referenceDC: v.coverage.referenceDC, covered: v.coverage.covered, lines: v.coverage.lines };
  if (v.coverageError) view.coverageError = v.coverageError;
  return view;
}
