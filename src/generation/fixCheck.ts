/**
 * The stand-in fix: once a strategy has a test that fails on base, the model writes a fix for the
 * issue and the test is run on base plus that fix. A reproduction should pass there; one that still
 * fails may assert something no fix gives (a false reproduction). With `options.fixCheck.mode`:
 * - `demote`: a test that ran with the fix and still failed is not posted (status not-reproduced,
 *   the test kept with the reason); no usable fix leaves the verdict unconfirmed, and it stands;
 * - `confirm`: a test is posted when the stand-in fix flips it, or when no fix says otherwise and
 *   it fails on base with the error the issue reports; a plain assertion needs the flip (the default
 *   for a test a local model wrote: each of the 1.5B's 4 false reproductions in bench:generate failed
 *   on an assertion of a value it made up or on nothing, and its stand-in fixes rarely fix);
 * - `require`: only a test that passed with the stand-in fix is posted;
 * - `off` (the default otherwise): no fix is asked for.
 */
import { errorLine, isSwtError } from '../util/errors.js';
import { isBudgetExhausted } from './budget.js';
import { isLlmFailure, type StrategyContext } from './candidate.js';
import { joinDiff, splitDiff } from '../patch/diffFiles.js';
import { isTestPath } from '../harness/testFiles.js';
import { readRepoFile } from './repoFiles.js';
import { issueText, standInFixPrompt, type FixSite } from './prompts.js';
import { analyze, isLoaded, languageForPath, loadLanguage, unitAt, type Unit } from '../patch/structure.js';
import { detectFormat } from '../patch/applyModelPatch.js';
import { fencedBlocks } from '../patch/wholeFiles.js';
import { retrieve } from './retrieval.js';
import { normaliseMessage } from './vote.js';
import { extractPatchText, retrievalChars } from './strategies/zeroShotPlus.js';
import type { FixCheckEvidence, Reproduction } from './types.js';
import type { RunResult } from '../results/types.js';

export type FixCheckMode = 'off' | 'demote' | 'confirm' | 'require';
export const FIX_CHECK_MODES: readonly FixCheckMode[] = ['off', 'demote', 'confirm', 'require'];

/** The mode for one strategy's result: as asked, else `confirm` for a local model's own tests (the snippet strategy's come from the issue's code). */
export function fixCheckMode(ctx: Pick<StrategyContext, 'llm' | 'options'>, strategy: string): FixCheckMode {
  if (!ctx.llm) return 'off';
  return ctx.options.fixCheck?.mode ?? (ctx.llm.local && strategy !== 'snippet' ? 'confirm' : 'off');
}

/** Does a reproducing test fail on base with the error the issue reports (its exception, or its symptom on a missing value)? */
export function failsWithIssueError(rep: Reproduction): boolean {
  const ids = new Set(rep.evidence?.reproducingTests ?? []);
  return (rep.evidence?.runs[0]?.failures ?? []).some((f) => ids.has(f.id) && (f.kind === 'issue-exception' || f.kind === 'issue-symptom'));
}

/** Source files a failure names (its traceback), that the repository has. */
export function filesInFailure(failure: string, isSource: (p: string) => boolean): string[] {
  const found = [...failure.matchAll(/(?:^|[\s"'(])\/?(?:testbed\/)?((?:[\w.-]+\/)*[\w.-]+\.[a-z]{1,4})(?=[:"',)\s]|$)/gm)].map((m) => m[1]!);
  return [...new Set(found)].filter((p) => !isTestPath(p) && isSource(p));
}

/** The function or method of `text` that `pick` chooses among those short enough to write again whole. */
function siteUnit(text: string, lang: NonNullable<ReturnType<typeof languageForPath>>, pick: (units: Unit[]) => Unit | undefined) {
  const unit = pick(analyze(text, lang).units.filter((u) => (u.kind === 'function' || u.kind === 'method') && u.endLine - u.startLine <= 150));
  return unit && { name: unit.name, kind: unit.kind as 'function' | 'method', line: unit.defLine + 1, code: text.split('\n').slice(unit.startLine, unit.endLine + 1).join('\n') };
}

/**
 * For a plain assertion, whose trace names no source function: the function the test calls (pure
 * once the grammars are loaded). The names the test's added lines call, those the issue names
 * first, then in the test's order; the first one a source file the model sees defines.
 */
export function calledSite(testPatch: string, sources: ReadonlyArray<{ path: string; content: string }>, issue: string): FixSite | undefined {
  const added = testPatch.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).join('\n');
  const called = [...new Set([...added.matchAll(/([A-Za-z_$][\w$]*)\s*\(/g)].map((m) => m[1]!))];
  const named = (n: string) => new RegExp(`(^|[^\\w$])${n.replace(/\$/g, '\\$')}([^\\w$]|$)`).test(issue);
  for (const name of [...called.filter(named), ...called.filter((n) => !named(n))]) {
    for (const f of sources) {
      const lang = languageForPath(f.path);
      if (!lang || isTestPath(f.path) || !isLoaded(lang)) continue;
      const unit = siteUnit(f.content, lang, (units) => units.find((u) => u.name === name));
      if (unit) return { via: 'call', path: f.path, ...unit };
    }
  }
  return undefined;
}

/**
 * The function or method at the failure's site (found when the test was judged), else the one the
 * test calls; when the file's language has a grammar here. Files are read whole: the retrieved
 * ones may be cut to the prompt's size, before the function wanted.
 */
async function fixSite(ctx: StrategyContext, rep: Reproduction, sources: ReadonlyArray<{ path: string; content: string }>): Promise<FixSite | undefined> {
  const at = rep.evidence?.failureSite;
  const lang = at && languageForPath(at.path);
  if (at && lang) {
    const text = await readRepoFile(ctx.workbench.repoDir, at.path, 400_000);
    await loadLanguage(lang);
    const unit = text === undefined ? undefined : siteUnit(text, lang, (units) => unitAt(units, at.line - 1));
    if (unit) return { via: 'trace', path: at.path, ...unit, line: at.line };
  }
  const whole = await Promise.all(sources.map(async (f) => ({ path: f.path, content: (await readRepoFile(ctx.workbench.repoDir, f.path, 400_000)) ?? f.content })));
  for (const l of new Set(whole.map((f) => languageForPath(f.path)))) if (l) await loadLanguage(l);
  return calledSite(rep.testPatch ?? '', whole, issueText(ctx.issue));
}

/**
 * The site's function as the model wrote it, as a rewrite block placed by name. An answer already
 * in a diff format stands, and so does a whole file that names its path (more than one top-level
 * definition): rewriting one function with a whole file would duplicate the rest.
 */
export function siteAnswerPatch(answer: string, site: Pick<FixSite, 'path' | 'line'>): string {
  const text = extractPatchText(answer);
  const format = detectFormat(text);
  if (format === 'custom' || format === 'unified') return text;
  const code = fencedBlocks(answer)[0]?.body ?? answer.trim();
  if (format === 'files' && code.split('\n').filter((l) => /^(export\s+)?(async\s+)?(def|class|function|func)\b/.test(l)).length > 1) return text;
  return `diff\n${site.path}\nrewrite\n${site.line}\n${code}\nend diff`;
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

/**
 * How the reproducing tests fared on base plus the stand-in fix (pure). A test that still fails as
 * it did on base (`atBase`: its failure message there) says only that the fix did not reach the
 * failure: a small model often rewrites the function unchanged in substance. Only a failure the
 * fix changed, or a test it broke, shows a false reproduction.
 */
export function judgeOnFix(reproducing: readonly string[], run: RunResult, atBase: ReadonlyMap<string, string> = new Map()): Pick<FixCheckEvidence, 'verdict' | 'reason' | 'failureExcerpt'> {
  const ran = run.tests.filter((t) => reproducing.includes(t.id));
  const broken = run.fileErrors.length > 0 || (run.buildFailures?.length ?? 0) > 0 || ran.some((t) => t.failureKind === 'collection');
  if (!ran.length || broken) return { verdict: 'no-fix', reason: `the tests could not run with the stand-in fix${run.fileErrors[0] ? `: ${run.fileErrors[0].message.slice(0, 200)}` : ''}`, failureExcerpt: run.output.slice(-1500) };
  const failing = ran.filter((t) => t.outcome !== 'passed');
  const asBefore = (t: (typeof ran)[number]) => atBase.has(t.id) && normaliseMessage(t.message ?? '') === normaliseMessage(atBase.get(t.id)!);
  if (failing.length && ran.length === reproducing.length && failing.every(asBefore)) {
    return { verdict: 'no-fix', reason: `the stand-in fix left the failure as it was (${failing[0]!.id}: ${(failing[0]!.message ?? '').slice(0, 200)})`, failureExcerpt: failing[0]!.message?.slice(0, 1500) ?? '' };
  }
  if (failing.length || ran.length < reproducing.length) {
    return { verdict: 'fails-on-fix', reason: `the test also fails with a fix the model wrote (${failing[0]?.id ?? 'not run'}: ${(failing[0]?.message ?? '').slice(0, 200)})`, failureExcerpt: failing[0]?.message?.slice(0, 1500) ?? run.output.slice(-1500) };
  }
  return { verdict: 'flips', reason: `the test passes with a fix the model wrote (${ran.length} test(s))` };
}

/** Each reproducing test's failure message in the first run on base. */
function baseMessages(rep: Reproduction): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of rep.evidence?.runs[0]?.failures ?? []) if (f.message) out.set(f.id, f.message);
  return out;
}

/** Asks for the stand-in fix and runs the test with it. Never throws for the model's or the fix's failings. */
export async function checkStandInFix(ctx: StrategyContext, rep: Reproduction): Promise<FixCheckEvidence> {
  const failure = rep.failureExcerpt ?? '';
  let answer: string;
  let site: FixSite | undefined;
  try {
    const sources = await fixSources(ctx, failure);
    site = await fixSite(ctx, rep, sources);
    const prompt = standInFixPrompt(ctx.issue, rep.testPatch, failure.slice(-2000), sources, site);
    answer = (await ctx.llm!.chat({ messages: [{ role: 'user', content: prompt }], purpose: 'stand-in fix' }, { budget: ctx.budget })).content;
  } catch (e) {
    if (isLlmFailure(e) || isBudgetExhausted(e)) return { verdict: 'no-fix', reason: `no stand-in fix: ${errorLine(e, 300)}`, fixFiles: [] };
    throw e;
  }
  const app = await ctx.workbench.applyPatch(site ? siteAnswerPatch(answer, site) : extractPatchText(answer)).catch((e: unknown) => ({ applied: false, diff: '', warnings: [], errors: [errorLine(e, 300)] }));
  const fix = splitDiff(app.applied ? app.diff : '').filter((f) => !isTestPath(f.path));
  if (!fix.length) return { verdict: 'no-fix', reason: `the stand-in fix changes no source file${app.errors.length ? ` (${app.errors.join('; ').slice(0, 300)})` : ''}`, fixFiles: [] };
  const fixFiles = fix.map((f) => f.path);
  try {
    ctx.budget.checkWallTime();
    const run = await ctx.workbench.runTests(rep.testPatch, undefined, { fixPatch: joinDiff(fix) });
    return { ...judgeOnFix(rep.evidence?.reproducingTests ?? [], run, baseMessages(rep)), fixFiles };
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
  const unconfirmed = check.verdict === 'no-fix' && (mode === 'require' || (mode === 'confirm' && !failsWithIssueError(rep)));
  if (mode === 'off' || (check.verdict !== 'fails-on-fix' && !unconfirmed)) return { ...rep, evidence };
  const why = check.verdict === 'fails-on-fix' ? check.reason : `unconfirmed (${check.reason})${mode === 'confirm' ? ', and its failure is not the error the issue reports' : ''}`;
  return { ...rep, status: 'not-reproduced', reason: `not posted: ${why}; on base: ${rep.reason}`, evidence: { ...evidence, reproducingTests: [] } };
}

/** A strategy's reproduction checked against a stand-in fix, when the mode asks for it. */
export async function withFixCheck(ctx: StrategyContext, rep: Reproduction): Promise<Reproduction> {
  const mode = fixCheckMode(ctx, rep.strategy);
  if (mode === 'off' || rep.status !== 'reproduced' || !rep.testPatch) return rep;
  const check = await checkStandInFix(ctx, rep);
  ctx.log.info({ strategy: rep.strategy, verdict: check.verdict, reason: check.reason }, 'stand-in fix checked');
  return { ...applyFixVerdict(rep, check, mode), usage: ctx.budget.usage() };
}
