/**
 * Acting side of verification: apply a candidate (model text or a diff) through the workbench,
 * keep only its test files, run it on base (twice) and judge the runs with verify.ts.
 */
import type { Logger } from '../util/logger.js';
import { errorLine, isSwtError } from '../util/errors.js';
import { Budget, isBudgetExhausted, type BudgetDimension } from './budget.js';
import { isTestPath } from '../harness/testFiles.js';
import { joinDiff, splitDiff, type DiffFile } from '../patch/diffFiles.js';
import type { ChatModel } from './llmTypes.js';
import type { IssueInput, Reproduction, ReproductionEvidence, Workbench } from './types.js';
import { judgeRuns, type Judgement } from './verify.js';
import { nameLooseTest } from './looseTest.js';
import type { RunResult } from '../results/types.js';
import type { FixCheckMode } from './fixCheck.js';

/** The LLM failed for good (after retries): strategies stop and keep what they have. */
export function isLlmFailure(e: unknown): e is Error {
  return isSwtError(e, 'LLM_ERROR') || isSwtError(e, 'LLM_TIMEOUT');
}

export type StrategyName = 'snippet' | 'zero-shot-plus' | 'libro' | 'agent' | 'ensemble';

export interface StrategyContext {
  workbench: Workbench;
  issue: IssueInput;
  budget: Budget;
  /** Null when no LLM endpoint is configured. */
  llm: ChatModel | null;
  log: Logger;
  options: StrategyOptions;
}

export interface StrategyOptions {
  /** LIBRO: samples (default 5), their temperature (default 0.7), and how the failing ones are chosen between: the model's judgement (default) or a vote on the failure reason. */
  libro?: { samples?: number; temperature?: number; select?: 'judge' | 'vote' };
  /** zero-shot-plus: characters of retrieved code in the prompt (default 60 000), files (default 8). */
  retrieval?: { maxChars?: number; maxFiles?: number };
  /** agent: how many times it may submit a test that verification rejects (default 2). */
  agent?: { maxSubmits?: number; historyChars?: number };
  /** zero-shot-plus and LIBRO: the answer asked for (default `whole-file` for a local model, else the paper's `custom-diff`). */
  answerFormat?: 'custom-diff' | 'whole-file';
  /** zero-shot-plus, LIBRO (each sample) and agent: how many times a candidate that did not reproduce goes back to the model with what its run said (default 1 for a local model, else 0). */
  feedback?: { rounds?: number };
  /** zero-shot-plus: draw `samples` answers (> 1 turns it on) at `temperature` (default 0.7) with seeds 1…n, and keep the test whose failure reason most share. */
  vote?: { samples?: number; temperature?: number };
  /** After a strategy reproduced: the model writes a stand-in fix and the test must pass with it (see fixCheck.ts; default off). */
  fixCheck?: { mode?: FixCheckMode };
  /** ensemble: order, and whether to stop at the first verified reproduction or pick by evidence. */
  ensemble?: { order?: Exclude<StrategyName, 'ensemble'>[]; mode?: 'first' | 'best' };
}

export interface CandidateResult {
  status: Reproduction['status'];
  reason: string;
  testPatch: string;
  failureExcerpt?: string;
  evidence: ReproductionEvidence;
  judgement?: Judgement;
  /** Runs on base, for callers that want more (LIBRO's judge prompt). */
  runs: RunResult[];
  /** The changed test files run on base without the patch, when the patch changes existing files. */
  baseline?: RunResult;
  budgetExhausted?: BudgetDimension;
}

function emptyEvidence(partial: Partial<ReproductionEvidence> = {}): ReproductionEvidence {
  return { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [], ...partial };
}

/** Keeps the test files of a canonical diff; notes what was dropped. */
export function testPartOf(diff: string): { files: DiffFile[]; testPatch: string; dropped: string[] } {
  const all = splitDiff(diff);
  const files = all.filter((f) => isTestPath(f.path) && !f.isDeleted);
  const dropped = all.filter((f) => !files.includes(f)).map((f) => `${f.path}${f.isDeleted ? ' (deletion)' : f.isNew ? ' (new non-test file)' : ' (non-test change)'}`);
  return { files, testPatch: joinDiff(files), dropped };
}

/**
 * Applies, filters, runs and judges one candidate. `text` is model output (custom diff format or
 * unified diff) or a diff. With `rerun: false` only one run is made and a pass is provisional.
 */
export async function evaluateCandidate(ctx: StrategyContext, text: string, opts: { rerun?: boolean; note?: string } = {}): Promise<CandidateResult> {
  const { workbench, issue, budget, log } = ctx;
  const loose = await nameLooseTest(text, workbench.repoDir);
  if (loose.path) log.info({ path: loose.path }, 'the answer gives an unnamed test file: put at a new test path');
  let app;
  try {
    app = await workbench.applyPatch(loose.text);
  } catch (e) {
    const msg = errorLine(e, 1000);
    return { status: 'not-reproduced', reason: `the patch could not be applied: ${msg}`, testPatch: '', evidence: emptyEvidence({ applyErrors: [msg] }), runs: [] };
  }
  if (!app.applied || !app.diff.trim()) {
    const errs = app.errors.length ? app.errors : ['empty patch'];
    return {
      status: 'not-reproduced',
      reason: `the patch does not apply: ${errs.join('; ').slice(0, 300)}`,
      testPatch: '',
      evidence: emptyEvidence({ applyErrors: errs, applyWarnings: app.warnings }),
      runs: [],
    };
  }
  const { files, testPatch, dropped } = testPartOf(app.diff);
  const notes = [...(opts.note ? [opts.note] : []), ...(dropped.length ? [`dropped from the test patch: ${dropped.join(', ')}`] : [])];
  const evidence = emptyEvidence({ applied: true, applyWarnings: app.warnings, testFiles: files.map((f) => f.path), notes });
  if (!files.length) return { status: 'not-reproduced', reason: 'the patch adds no test file', testPatch: '', evidence, runs: [] };
  const runs: RunResult[] = [];
  try {
    budget.checkWallTime();
    runs.push(await workbench.runTests(testPatch));
    // Tests the patch changes in existing files (new table rows, edited bodies) keep their old
    // names: one run of those files without the patch tells which failures are new.
    const changed = files.filter((f) => !f.isNew).map((f) => f.path);
    const baseline = changed.length ? await workbench.runTests('', changed) : undefined;
    let j = judgeRuns(issue, files, runs, { requireRerun: false, baseline });
    if (j.status === 'reproduced' && opts.rerun !== false) {
      budget.checkWallTime();
      runs.push(await workbench.runTests(testPatch));
      j = judgeRuns(issue, files, runs, { baseline });
    }
    evidence.runs = j.runs;
    evidence.reproducingTests = j.status === 'reproduced' ? j.reproducingTests : [];
    evidence.failureSite = j.failureSite;
    log.debug({ status: j.status, reason: j.reason }, 'candidate judged');
    return { status: j.status, reason: j.reason, testPatch, failureExcerpt: j.failureExcerpt, evidence, judgement: j, runs, baseline };
  } catch (e) {
    // The runner found nothing to run, or the patch is unusable: a verdict on the candidate, not a crash.
    if (isSwtError(e) && ['NO_TEST_FILES', 'PATCH_MALFORMED', 'PATCH_DOES_NOT_APPLY', 'UNSAFE_PATH', 'TEST_COMMAND_NOT_FOUND'].includes(e.code)) {
      const msg = errorLine(e, 1000);
      evidence.notes.push(`the test run failed: ${msg}`);
      return { status: 'not-reproduced', reason: `the tests could not be run: ${msg}`, testPatch, evidence, runs };
    }
    if (!isBudgetExhausted(e)) throw e;
    const dim = (e as { dimension?: BudgetDimension }).dimension ?? 'wallMs';
    evidence.notes.push('verification stopped: the wall-time budget ran out');
    return { status: 'not-reproduced', reason: 'unverified: the budget ran out before the test could be run', testPatch, evidence, runs, budgetExhausted: dim };
  }
}

/**
 * The second run of a candidate judged on one run (a sample): reproduced only when both runs agree.
 * Throws BUDGET_EXHAUSTED when the wall time is spent.
 */
export async function confirmCandidate(ctx: StrategyContext, c: CandidateResult): Promise<CandidateResult> {
  ctx.budget.checkWallTime();
  const second = await ctx.workbench.runTests(c.testPatch);
  const j = judgeRuns(ctx.issue, splitDiff(c.testPatch), [c.runs[0]!, second], { baseline: c.baseline });
  const evidence = { ...c.evidence, runs: j.runs, reproducingTests: j.status === 'reproduced' ? j.reproducingTests : [], failureSite: j.failureSite };
  return { ...c, status: j.status, reason: j.reason, failureExcerpt: j.failureExcerpt, evidence, judgement: j, runs: [c.runs[0]!, second] };
}

/** Builds the Reproduction a strategy returns. */
export function toReproduction(strategy: string, budget: Budget, c: Partial<CandidateResult> & { reason: string }, extra: Partial<Reproduction> = {}): Reproduction {
  return {
    status: c.status ?? 'not-reproduced',
    strategy,
    testPatch: c.testPatch ?? '',
    failureExcerpt: c.failureExcerpt,
    reason: c.reason,
    usage: budget.usage(),
    evidence: c.evidence ?? emptyEvidence(),
    ...(c.budgetExhausted ? { budgetExhausted: c.budgetExhausted } : {}),
    ...extra,
  };
}
