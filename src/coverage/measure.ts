/**
 * Coverage runs in the sandbox and ΔC from them. These are extra runs beside the judged ones:
 * the same test files on the same states, with the lines of the files the fix changes counted.
 */
import pLimit from 'p-limit';
import { buildTestCommand, DEFAULT_OUT_DIR } from '../harness/runners.js';
import { isTestPath } from '../harness/testFiles.js';
import type { RunnerSpec } from '../results/types.js';
import { withState } from '../repo/git.js';
import { readTreeFiles } from '../repo/objects.js';
import { runGit } from '../repo/gitExec.js';
import type { Environment, RepoState, ResourceLimits, Sandbox } from '../sandbox/types.js';
import { isSwtError, SwtError } from '../util/errors.js';
import { changedFilesOf, changedLines } from './changedLines.js';
import { codeLines } from './codeLines.js';
import { deltaC } from './deltaC.js';
import { countable, coverageOf, COVERAGE_OUT, parsePythonCounts, withCoverage, type Counter } from './instrument.js';
import type { ChangedLines, LineCounts, LineRef, SideCounts } from './types.js';
import { cachedCounts, runKey, storeCounts } from './runCache.js';
import { collectedSchema, v8LineCounts } from './v8Counts.js';
import { parseGoCoverProfile } from './goCover.js';
import { GCOV_FILE, parseGcovJson } from './gcov.js';
import { SANDBOX_REPO_ROOT } from '../util/repoPath.js';

/** Test files run on one state; no files means nothing runs and nothing is counted. */
export interface CoverageRun {
  state: RepoState;
  files: string[];
}
export interface SideRuns {
  base: CoverageRun;
  head: CoverageRun;
}

export interface ChangeCoverageInput {
  repo: string;
  env: Environment;
  runner: RunnerSpec;
  /** The fix X as a code patch from base to the fixed state; test files in it are ignored. */
  fixPatch: string;
  /** The code before and after the fix, without any tests applied (for reading the changed files). */
  base: RepoState;
  fixed: RepoState;
  /** T_R: the test files the predicted tests touch, as they are without them. */
  original: SideRuns;
  /** T_R ∪ T; null when no predicted tests applied. */
  withTests: SideRuns | null;
  /** T*: the golden tests; null when there are none (every changed code line is then executable). */
  reference: SideRuns | null;
  limits?: Partial<ResourceLimits>;
  /** Reuse and keep counts of identical runs on disk (default true). */
  cache?: boolean;
}

/** What results.jsonl and `swt validate --json` carry. */
export interface ChangeCoverage {
  counter: Counter;
  /** 0–1; null when no changed line is executable (left out of ΔC, as in the paper). */
  dC: number | null;
  /** The golden tests' own ΔC on the same lines; null without golden tests. */
  referenceDC: number | null;
  /** |X*| and how many of them the tests cover more. */
  lines: number;
  covered: number;
  executableBy: 'reference' | 'static';
  /** Line numbers per file: removed ones at base, added ones at the fixed state. */
  executable: { removed: LinesByFile; added: LinesByFile };
  coveredLines: { removed: LinesByFile; added: LinesByFile };
  /** Container runs made for coverage, and runs whose counts came from the cache. */
  runs: number;
  reused: number;
  durationMs: number;
  warnings: string[];
}

const EMPTY: LineCounts = {};

export type LinesByFile = Record<string, number[]>;

function byFile(lines: ChangedLines): { removed: LinesByFile; added: LinesByFile } {
  const group = (refs: LineRef[]) => {
    const out: LinesByFile = {};
    for (const r of refs) (out[r.file] ??= []).push(r.line);
    return out;
  };
  return { removed: group(lines.removed), added: group(lines.added) };
}

/** The code part of base..head as a unified diff (test paths left out): X for a head revision. */
export async function codePatchBetween(repo: string, base: string, head: string): Promise<string> {
  const r = await runGit(repo, ['diff', '--no-color', '--no-ext-diff', '--no-renames', '--full-index', base, head]);
  if (r.code !== 0) throw new SwtError('UNKNOWN_REVISION', `cannot diff ${base}..${head}: ${r.stderr.split('\n')[0]}`);
  return r.stdout.toString('utf8');
}

/** A patch's runs on both sides: `patch` on top of base and of the fixed state, running its test files. */
export function runsWithPatch(patch: string, files: string[], base: RepoState, fixed: RepoState): SideRuns {
  const on = (s: RepoState): CoverageRun => ({ state: { rev: s.rev, patches: [...s.patches, patch], patchNames: [...(s.patchNames ?? s.patches.map(() => 'patch')), 'test patch'] }, files });
  return { base: on(base), head: on(fixed) };
}

/** Marks the failure worth one retry: a pool killed its worker mid-write, typically under load. */
const LOST = Symbol('lost coverage');

async function countRunRetrying(sandbox: Sandbox, input: ChangeCoverageInput, counter: Counter, targets: string[], run: CoverageRun, warnings: string[]): Promise<LineCounts> {
  try {
    return await countRun(sandbox, input, counter, targets, run, warnings);
  } catch (e) {
    if (!isSwtError(e, 'COVERAGE_FAILED') || e.cause !== LOST) throw e;
    warnings.push(`${e.message}; ran it again`);
    return countRun(sandbox, input, counter, targets, run, warnings);
  }
}

async function countRun(sandbox: Sandbox, input: ChangeCoverageInput, counter: Counter, targets: string[], run: CoverageRun, warnings: string[]): Promise<LineCounts> {
  const command = withCoverage(counter, buildTestCommand(input.runner, run.files, DEFAULT_OUT_DIR), targets, coverageOf(input.runner.kind).setup);
  const outcome = await sandbox.run({ env: input.env, repo: input.repo, state: run.state, command, limits: input.limits });
  if (outcome.timedOut) throw new SwtError('COVERAGE_FAILED', 'a coverage run timed out', { hint: 'raise --timeout; coverage runs are slower than plain ones' });
  if (counter === 'python-trace') return parsePythonCounts(outcome.files, COVERAGE_OUT, targets);
  if (counter === 'go-cover') {
    const profile = outcome.files[`${COVERAGE_OUT}/go.cov`];
    // A package that panics or does not build writes no profile: its lines count as not executed.
    if (profile === undefined) warnings.push(`go test wrote no cover profile (exit ${outcome.exitCode}): its lines count as not executed`);
    return parseGoCoverProfile(profile ?? '', targets);
  }
  if (counter === 'gcov') {
    const json = outcome.files[`${COVERAGE_OUT}/${GCOV_FILE}`];
    // A build that failed, or tests that never ran, write no .gcda: their lines count as not executed.
    if (!json?.trim()) warnings.push(`gcov found no counts (exit ${outcome.exitCode}): its lines count as not executed`);
    return parseGcovJson(json ?? '', targets, SANDBOX_REPO_ROOT);
  }
  const raw = outcome.files[`${COVERAGE_OUT}/v8.json`];
  if (!raw) throw new SwtError('COVERAGE_FAILED', `the V8 coverage collector wrote nothing (exit ${outcome.exitCode}): ${outcome.output.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}`);
  let parsed;
  try {
    parsed = collectedSchema.safeParse(JSON.parse(raw));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) throw new SwtError('COVERAGE_FAILED', 'the V8 coverage collector wrote something unreadable');
  if (parsed.data.lost.length) throw new SwtError('COVERAGE_FAILED', `${parsed.data.lost.length} test process(es) ran the changed code but were killed before writing their V8 coverage`, { cause: LOST });
  const { counts, skipped } = await v8LineCounts(parsed.data, targets);
  warnings.push(...skipped);
  return counts;
}

async function readFiles(repo: string, state: RepoState, paths: string[]): Promise<Map<string, string>> {
  if (!paths.length) return new Map();
  const files = await withState(repo, state, (t) => readTreeFiles(t.repo, t.tree, paths, t.env));
  return new Map([...files].map(([p, b]) => [p, b.toString('utf8')]));
}

/** Counts each distinct run once: by the tree it sees, from the disk cache when allowed, else in the sandbox (two at a time). */
function runCounter(sandbox: Sandbox, input: ChangeCoverageInput, counter: Counter, targets: string[], warnings: string[]) {
  const memo = new Map<string, Promise<LineCounts>>();
  const limit = pLimit(2);
  const tally = { runs: 0, reused: 0 };
  const measure = async (key: string, run: CoverageRun): Promise<LineCounts> => {
    const cached = input.cache === false ? undefined : await cachedCounts(key);
    if (cached) {
      tally.reused++;
      return cached;
    }
    tally.runs++;
    const counts = await limit(() => countRunRetrying(sandbox, input, counter, targets, run, warnings));
    if (input.cache !== false) await storeCounts(key, counts);
    return counts;
  };
  // Runs are told apart by the tree they see, so the same tests reached by differently written
  // patches (gold predictions normalised on the way in) run once.
  const count = async (run: CoverageRun): Promise<LineCounts> => {
    if (!run.files.length || !targets.length) return EMPTY;
    const tree = await withState(input.repo, run.state, async (t) => t.tree);
    const key = runKey({ tree, files: run.files, envKey: input.env.key, runner: input.runner.template, counter, targets });
    if (!memo.has(key)) memo.set(key, measure(key, run));
    return memo.get(key)!;
  };
  const sides = async (s: SideRuns | null): Promise<SideCounts | null> => {
    if (!s) return null;
    const [base, head] = await Promise.all([count(s.base), count(s.head)]);
    return { base, head };
  };
  return { sides, tally };
}

/** Which lines of the changed files are code: removed ones at base, added ones at the fixed state. */
async function codeLinesOfChange(input: ChangeCoverageInput, changed: ChangedLines): Promise<(side: 'base' | 'head', ref: LineRef) => boolean> {
  const baseFiles = [...new Set(changed.removed.map((l) => l.file))];
  const headFiles = [...new Set(changed.added.map((l) => l.file))];
  const [baseText, headText] = await Promise.all([readFiles(input.repo, input.base, baseFiles), readFiles(input.repo, input.fixed, headFiles)]);
  const code = { base: new Map<string, Set<number>>(), head: new Map<string, Set<number>>() };
  for (const [side, texts] of [['base', baseText], ['head', headText]] as const) {
    for (const [file, text] of texts) code[side].set(file, await codeLines(file, text));
  }
  return (side, ref) => code[side].get(ref.file)?.has(ref.line) ?? false;
}

/**
 * ΔC of the predicted tests for the fix: counts lines of the files the fix changes in every run
 * needed (each distinct state and file list once), then applies the paper's definition.
 */
export async function changeCoverage(sandbox: Sandbox, input: ChangeCoverageInput): Promise<ChangeCoverage> {
  const started = Date.now();
  const counter = coverageOf(input.runner.kind).counter;
  const warnings: string[] = [];
  const changed = changedLines(input.fixPatch, (p) => !isTestPath(p) && countable(counter, p));
  const { sides, tally } = runCounter(sandbox, input, counter, changedFilesOf(changed), warnings);
  // allSettled: every started container finishes (and is removed) before an error surfaces.
  const settled = await Promise.allSettled([sides(input.original), sides(input.withTests), sides(input.reference)]);
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  const [original, withTests, reference] = settled.map((s) => (s as PromiseFulfilledResult<SideCounts | null>).value);
  const d = deltaC({
    changed,
    original: original ?? { base: EMPTY, head: EMPTY },
    withTests,
    reference,
    isCode: await codeLinesOfChange(input, changed),
  });
  return {
    counter,
    dC: d.dC,
    referenceDC: d.referenceDC,
    lines: d.executable.removed.length + d.executable.added.length,
    covered: d.covered.removed.length + d.covered.added.length,
    executableBy: reference ? 'reference' : 'static',
    executable: byFile(d.executable),
    coveredLines: byFile(d.covered),
    runs: tally.runs,
    reused: tally.reused,
    durationMs: Date.now() - started,
    warnings: [...new Set(warnings)],
  };
}
