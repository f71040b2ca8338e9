/**
 * The stand-in fix: once a strategy has a test that fails on base, the model writes a fix for the
 * issue and the test is run on base plus that fix. A reproduction should pass there; one that still
 * fails may assert something no fix gives (a false reproduction). With `options.fixCheck.mode`:
 * - `demote`: a test that ran with the fix and still failed is not posted (status not-reproduced,
 *   the test kept with the reason); no usable fix leaves the verdict unconfirmed, and it stands;
 * - `require`: only a test that passed with the stand-in fix is posted;
 * - `off` (default): no fix is asked for.
 */
import { errorLine, isSwtError } from '../util/errors.js';
import { isBudgetExhausted } from './budget.js';
import { isLlmFailure, type StrategyContext } from './candidate.js';
import { joinDiff, splitDiff } from '../patch/diffFiles.js';
import { isTestPath } from '../harness/testFiles.js';
import { readRepoFile } from './repoFiles.js';
import { issueText, standInFixPrompt } from './prompts.js';
import { retrieve } from './retrieval.js';
import { extractPatchText, retrievalChars } from './strategies/zeroShotPlus.js';
import type { FixCheckEvidence, Reproduction } from './types.js';
import type { RunResult } from '../results/types.js';

export type FixCheckMode = 'off' | 'demote' | 'require';

export function fixCheckMode(ctx: Pick<StrategyContext, 'llm' | 'options'>): FixCheckMode {
  return ctx.llm ? (ctx.options.fixCheck?.mode ?? 'off') : 'off';
}

/** Source files a failure names (its traceback), that the repository has. */
export function filesInFailure(failure: string, isSource: (p: string) => boolean): string[] {
  const found = [...failure.matchAll(/(?:^|[\s"'(])\/?(?:testbed\/)?((?:[\w.-]+\/)*[\w.-]+\.[a-z]{1,4})(?=[:"',)\s]|$)/gm)].map((m) => m[1]!);
  return [...new Set(found)].filter((p) => !isTestPath(p) && isSource(p));
}

/** The code the model sees: files the failure names first, then BM25's best, within what its context holds. */
async function fixSources(ctx: StrategyContext, failure: string) {
  const maxChars = Math.min(retrievalChars(ctx) ?? 24_000, 24_000);
  const named: Array<{ path: string; content: string; truncated: boolean }> = [];
  for (const p of filesInFailure(failure, () => true).slice(0, 2)) {
    const text = await readRepoFile(ctx.workbench.repoDir, p, maxChars);
    if (text !== undefined) named.push({ path: p, content: text, truncated: false });
  }
  const used = named.reduce((n, f) => n + f.content.length, 0);
  const { sources } = used < maxChars - 500 ? await retrieve(ctx.workbench.repoDir, issueText(ctx.issue), { maxChars: maxChars - used, maxFiles: 3, maxTests: 0 }) : { sources: [] };
  return [...named, ...sources.filter((s) => !named.some((n) => n.path === s.path))];
}

/** How the reproducing tests fared on base plus the stand-in fix (pure). */
export function judgeOnFix(reproducing: readonly string[], run: RunResult): Pick<FixCheckEvidence, 'verdict' | 'reason' | 'failureExcerpt'> {
  const ran = run.tests.filter((t) => reproducing.includes(t.id));
  const broken = run.fileErrors.length > 0 || (run.buildFailures?.length ?? 0) > 0 || ran.some((t) => t.failureKind === 'collection');
  if (!ran.length || broken) return { verdict: 'no-fix', reason: `the tests could not run with the stand-in fix${run.fileErrors[0] ? `: ${run.fileErrors[0].message.slice(0, 200)}` : ''}`, failureExcerpt: run.output.slice(-1500) };
  const failing = ran.filter((t) => t.outcome !== 'passed');
  if (failing.length || ran.length < reproducing.length) {
    return { verdict: 'fails-on-fix', reason: `the test also fails with a fix the model wrote (${failing[0]?.id ?? 'not run'}: ${(failing[0]?.message ?? '').slice(0, 200)})`, failureExcerpt: failing[0]?.message?.slice(0, 1500) ?? run.output.slice(-1500) };
  }
  return { verdict: 'flips', reason: `the test passes with a fix the model wrote (${ran.length} test(s))` };
}

/** Asks for the stand-in fix and runs the test with it. Never throws for the model's or the fix's failings. */
export async function checkStandInFix(ctx: StrategyContext, rep: Reproduction): Promise<FixCheckEvidence> {
  const failure = rep.failureExcerpt ?? '';
  let answer: string;
  try {
    const sources = await fixSources(ctx, failure);
    const prompt = standInFixPrompt(ctx.issue, rep.testPatch, failure.slice(-2000), sources);
    answer = (await ctx.llm!.chat({ messages: [{ role: 'user', content: prompt }], purpose: 'stand-in fix' }, { budget: ctx.budget })).content;
  } catch (e) {
    if (isLlmFailure(e) || isBudgetExhausted(e)) return { verdict: 'no-fix', reason: `no stand-in fix: ${errorLine(e, 300)}`, fixFiles: [] };
    throw e;
  }
  const app = await ctx.workbench.applyPatch(extractPatchText(answer)).catch((e: unknown) => ({ applied: false, diff: '', warnings: [], errors: [errorLine(e, 300)] }));
  const fix = splitDiff(app.applied ? app.diff : '').filter((f) => !isTestPath(f.path));
  if (!fix.length) return { verdict: 'no-fix', reason: `the stand-in fix changes no source file${app.errors.length ? ` (${app.errors.join('; ').slice(0, 300)})` : ''}`, fixFiles: [] };
  const fixFiles = fix.map((f) => f.path);
  try {
    ctx.budget.checkWallTime();
    const run = await ctx.workbench.runTests(rep.testPatch, undefined, { fixPatch: joinDiff(fix) });
    return { ...judgeOnFix(rep.evidence?.reproducingTests ?? [], run), fixFiles };
  } catch (e) {
    if (isBudgetExhausted(e) || (isSwtError(e) && ['PATCH_DOES_NOT_APPLY', 'PATCH_MALFORMED', 'NO_TEST_FILES', 'UNSAFE_PATH'].includes(e.code))) {
      return { verdict: 'no-fix', reason: `the stand-in fix could not be run: ${errorLine(e, 300)}`, fixFiles };
    }
    throw e;
  }
}

/** What the verdict does to a reproduction under a mode (pure). */
export function applyFixVerdict(rep: Reproduction, check: FixCheckEvidence, mode: FixCheckMode): Reproduction {
  const evidence = { ...(rep.evidence ?? { applied: true, testFiles: [], runs: [], reproducingTests: [], notes: [] }), fixCheck: check };
  evidence.notes = [...evidence.notes, `stand-in fix: ${check.verdict}: ${check.reason}`];
  const demoted = check.verdict === 'fails-on-fix' || (mode === 'require' && check.verdict !== 'flips');
  if (mode === 'off' || !demoted) return { ...rep, evidence };
  return { ...rep, status: 'not-reproduced', reason: `not posted: ${check.verdict === 'fails-on-fix' ? check.reason : `unconfirmed (${check.reason})`}; on base: ${rep.reason}`, evidence: { ...evidence, reproducingTests: [] } };
}

/** A strategy's reproduction checked against a stand-in fix, when the mode asks for it. */
export async function withFixCheck(ctx: StrategyContext, rep: Reproduction): Promise<Reproduction> {
  const mode = fixCheckMode(ctx);
  if (mode === 'off' || rep.status !== 'reproduced' || !rep.testPatch) return rep;
  const check = await checkStandInFix(ctx, rep);
  ctx.log.info({ strategy: rep.strategy, verdict: check.verdict, reason: check.reason }, 'stand-in fix checked');
  return { ...applyFixVerdict(rep, check, mode), usage: ctx.budget.usage() };
}
