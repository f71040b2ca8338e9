/** Run test files in the sandbox on one repository state and normalise the results. */
import type { Environment, KeptContainer, RepoState, ResourceLimits, RunOutcome, Sandbox } from '../sandbox/types.js';
import { SwtError } from '../util/errors.js';
import { findReport, parseRunReports } from './parsers/index.js';
import { tail } from '../results/formats/common.js';
import { buildRerunCommand, buildTestCommand, DEFAULT_OUT_DIR, missingTestCommand, reportNames, rerunDir, roundReportName, roundsHookFailed, roundsInProcess, type RerunTarget } from './runners.js';
import type { RoundPlan } from '../ecosystems/types.js';
import { packageOf, resultsToRepo } from './packages.js';
import { isTestFile } from './testFiles.js';
import type { RunnerSpec, RunResult } from '../results/types.js';
import { patchFiles } from '../patch/fileNames.js';

export const OUTPUT_TAIL_CHARS = 16_000;
export const SANDBOX_ROOT = '/testbed';

export interface RunTestsOptions {
  env: Environment;
  repo: string;
  state: RepoState;
  runner: RunnerSpec;
  /** Repository-relative test files to run. */
  files: string[];
  limits?: Partial<ResourceLimits>;
  /** Stops the run when aborted (SwtError('CANCELLED')). */
  signal?: AbortSignal;
  /** Confirmation rounds inside the run's own process, when its runner can (roundsInProcess). */
  roundPlan?: RoundPlan;
}

/**
 * Run `files` with `runner` on `state` and return the normalised result. Throws
 * SwtError('NO_TEST_FILES') for an empty file list and SwtError('TEST_COMMAND_NOT_FOUND')
 * when the run wrote no report because the test command itself does not exist.
 */
export async function runTests(sandbox: Pick<Sandbox, 'run'>, opts: RunTestsOptions): Promise<RunResult> {
  return (await runTestsKept(sandbox, opts, false)).result;
}

/**
 * runTests whose container stays up after the run (`kept`, when it survived it) for the
 * confirmation reruns of the same side (rerunTests' `kept`); the caller releases it. With
 * `opts.roundPlan`, also the rounds its process ran (`rounds`, one RunResult each, absent unless
 * every round reported).
 */
export async function runTestsKept(sandbox: Pick<Sandbox, 'run'>, opts: RunTestsOptions, keep = true): Promise<{ result: RunResult; kept?: KeptContainer; rounds?: RunResult[] }> {
  if (opts.files.length === 0) throw new SwtError('NO_TEST_FILES', 'There are no test files to run');
  const rounds = planOf(opts);
  let outcome = await sandbox.run({ ...runRequest(opts, keep), ...(keep ? { keep } : {}) });
  try {
    if (rounds && roundsBrokeRun(opts, outcome)) {
      // The hook kept the run from running (the project's command did not let it load): the run again, as it is.
      const again = runRequest(opts, keep, false);
      outcome = outcome.kept ? { ...(await outcome.kept.rerun(again.command, opts.signal)), kept: outcome.kept } : await sandbox.run({ ...again, ...(keep ? { keep } : {}) });
    }
    const result = resultOf(opts, outcome);
    const extra = rounds ? roundsOf(opts, outcome, rounds.rounds) : undefined;
    return { result, ...(outcome.kept ? { kept: outcome.kept } : {}), ...(extra ? { rounds: extra } : {}) };
  } catch (e) {
    await outcome.kept?.release();
    throw e;
  }
}

/** The rounds a run with `opts` asks its own process for: its plan, when its runner can hold them. */
function planOf(opts: Pick<RunTestsOptions, 'roundPlan' | 'runner' | 'files'>): RoundPlan | undefined {
  return opts.roundPlan && roundsInProcess(opts.runner, opts.files.length) ? opts.roundPlan : undefined;
}

/** The run's request, its command built once here for the run and its pre-warm alike (the warm key holds it). */
function runRequest(opts: Omit<RunTestsOptions, 'signal'> & { signal?: AbortSignal }, kept: boolean, withRounds = true) {
  const rounds = withRounds ? planOf(opts) : undefined;
  const command = buildTestCommand(opts.runner, opts.files, DEFAULT_OUT_DIR, { ...(rounds ? { rounds } : {}), ...(kept ? { kept } : {}) });
  return { env: opts.env, repo: opts.repo, state: opts.state, command, limits: opts.limits, ...(opts.signal ? { signal: opts.signal } : {}) };
}

/**
 * The run's output says the rounds' hook failed (roundsInProcess.hookFailed) and it wrote no report,
 * or one with no test in it (RSpec reports a `--require` it could not load as an error outside examples).
 */
function roundsBrokeRun(opts: RunTestsOptions, outcome: RunOutcome): boolean {
  if (!roundsHookFailed(opts.runner, outcome.output ?? '')) return false;
  return findReport(outcome.files ?? {}, reportNames(opts.runner, 1)[0]) === undefined || resultOf(opts, outcome).tests.length === 0;
}

/** The rounds' reports, parsed: each counts only for the tests it ran (no file errors, no skipped tests). */
function roundsOf(opts: RunTestsOptions, outcome: RunOutcome, count: number): RunResult[] | undefined {
  const name = reportNames(opts.runner, 1)[0];
  const out: RunResult[] = [];
  for (let r = 1; r <= count; r++) {
    const content = findReport(outcome.files ?? {}, roundReportName(opts.runner, r));
    if (content === undefined) return undefined;
    const parsed = parseRunReports(opts.runner, { files: opts.files, reports: { [name]: content }, output: '', exitCode: 0, timedOut: false, root: SANDBOX_ROOT });
    // Only what ran counts: a runner that selects by name reports the others as skipped.
    out.push({ tests: parsed.tests.filter((t) => t.outcome !== 'skipped'), fileErrors: [], timedOut: false, exitCode: 0, output: '', durationMs: 0 });
  }
  return out;
}

function resultOf(opts: RunTestsOptions, outcome: RunOutcome): RunResult {
  const parsed = parseRunReports(opts.runner, {
    files: opts.files,
    reports: outcome.files ?? {},
    output: outcome.output ?? '',
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    oomKilled: outcome.oomKilled,
    diskLimit: outcome.diskLimit,
    root: SANDBOX_ROOT,
  });
  if (!parsed.reportFound && !outcome.timedOut && !outcome.oomKilled && !outcome.diskLimit) {
    const why = missingTestCommand(outcome);
    if (why) {
      throw new SwtError('TEST_COMMAND_NOT_FOUND', `The test command \`${opts.runner.template}\` could not run: ${why}`, {
        hint: 'install the test runner in the environment (install command) or pass the right test command',
      });
    }
  }
  return {
    tests: parsed.tests,
    fileErrors: parsed.fileErrors,
    timedOut: outcome.timedOut,
    ...(outcome.diskLimit ? { diskLimit: true } : {}),
    ...(parsed.buildFailures ? { buildFailures: parsed.buildFailures } : {}),
    exitCode: outcome.exitCode,
    output: tail(outcome.output ?? '', OUTPUT_TAIL_CHARS),
    durationMs: outcome.durationMs,
  };
}

/**
 * Starts the container of a coming `runTests` with these options now (see Sandbox.prewarm): the
 * run then costs the test command and little more. Returns its release (no-op when the sandbox
 * cannot pre-warm, or nothing would run).
 */
export function prewarmTests(sandbox: Pick<Sandbox, 'prewarm'>, opts: Omit<RunTestsOptions, 'signal'> & { keep?: boolean }, gate?: Promise<unknown>): () => Promise<void> {
  if (!sandbox.prewarm || opts.files.length === 0) return async () => undefined;
  return sandbox.prewarm({ ...runRequest(opts, !!opts.keep), ...(opts.keep ? { keep: true } : {}) }, gate);
}

export interface RerunOptions extends Omit<RunTestsOptions, 'files'> {
  targets: readonly RerunTarget[];
  rounds: number;
  /** The same side's first-run container (runTestsKept): the reruns go there, else to a new container. */
  kept?: KeptContainer;
}

/**
 * Confirmation reruns in one sandbox run: every target `rounds` times, each in its own invocation
 * (buildRerunCommand). One RunResult per round. A target with ids keeps only those tests and no
 * file error (a selection that found nothing says nothing about the tests); a whole-file target
 * keeps what its file reported.
 */
export async function rerunTests(sandbox: Pick<Sandbox, 'run'>, opts: RerunOptions): Promise<RunResult[]> {
  if (opts.targets.length === 0 || opts.rounds <= 0) return [];
  const command = buildRerunCommand(opts.runner, opts.targets, opts.rounds, DEFAULT_OUT_DIR);
  const outcome = opts.kept
    ? await opts.kept.rerun(command, opts.signal)
    : await sandbox.run({ env: opts.env, repo: opts.repo, state: opts.state, command, limits: opts.limits, ...(opts.signal ? { signal: opts.signal } : {}) });
  const out = DEFAULT_OUT_DIR.replace(/^\//, '');
  const rounds: RunResult[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const round: RunResult = { tests: [], fileErrors: [], timedOut: outcome.timedOut, exitCode: outcome.exitCode, output: '', durationMs: outcome.durationMs };
    opts.targets.forEach((t, i) => {
      const dir = rerunDir(DEFAULT_OUT_DIR, r, i).slice(DEFAULT_OUT_DIR.length + 1);
      // A monorepo's file reran from its package with its package's runner (buildRerunCommand).
      const own = packageOf(opts.runner, t.file);
      const name = reportNames(own.spec, 1)[0];
      const content = outcome.files?.[`${dir}/${name}`] ?? outcome.files?.[`${out}/${dir}/${name}`];
      const parsedHere = parseRunReports(own.spec, {
        files: [own.dir ? t.file.slice(own.dir.length + 1) : t.file],
        reports: content === undefined ? {} : { [name]: content },
        output: outcome.output ?? '',
        exitCode: content === undefined ? 1 : 0,
        timedOut: outcome.timedOut,
        oomKilled: outcome.oomKilled,
        diskLimit: outcome.diskLimit,
        root: own.dir ? `${SANDBOX_ROOT}/${own.dir}` : SANDBOX_ROOT,
      });
      const parsed = resultsToRepo(own.dir, parsedHere);
      if (t.ids?.length) {
        const wanted = new Set(t.ids);
        round.tests.push(...parsed.tests.filter((x) => wanted.has(x.id)));
      } else {
        round.tests.push(...parsed.tests);
        round.fileErrors.push(...parsed.fileErrors);
      }
    });
    rounds.push(round);
  }
  if (rounds[0]) rounds[0].output = tail(outcome.output ?? '', OUTPUT_TAIL_CHARS);
  return rounds;
}

/**
 * The test files a unified diff adds or modifies (deletions ignored), in patch order: what
 * SWT-bench runs. `isTest` decides which paths are tests (default isTestFile).
 */
export function filesTouchedByPatch(unifiedDiff: string, isTest: (path: string) => boolean = isTestFile): string[] {
  if (!unifiedDiff.trim()) return [];
  const out: string[] = [];
  for (const p of patchFiles(unifiedDiff)) {
    const name = p.newPath;
    if (p.isDelete || !name) continue; // deleted
    if (isTest(name) && !out.includes(name)) out.push(name);
  }
  return out;
}
