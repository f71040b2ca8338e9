import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { coverageOfReference } from '../coverage/forValidation.js';
import { applyModelPatch } from '../patch/applyModelPatch.js';
import { prepareContext } from '../pipeline/context.js';
import { validate, type ValidationResult } from '../pipeline/validate.js';
import { silentProgress, type Progress } from '../pipeline/progress.js';
import { materialize } from '../repo/git.js';
import type { ResourceLimits, Sandbox } from '../sandbox/types.js';
import { errorLine, isSwtError } from '../util/errors.js';
import type { Instance, Prediction } from './instances.js';
import { PhaseClock } from './phases.js';
import { resolveRepoPath } from './repos.js';
import { summarize, verdictRow, type EvalReport, type GenerationRecord, type InstanceCoverage, type InstanceResult } from './report.js';
import { openRun, predictionsDigest, RESULTS_FILE, type RunSettings } from './resume.js';

/**
 * Where an instance's predicted tests come from: the golden tests, none, a predictions file
 * (SWE-bench `{instance_id, model_patch}`), or a generator run per instance.
 */
/** What an eval row keeps of a generation: the verdict, its cost, and every raw answer (why an attempt failed). */

export type TestSource =
  | { kind: 'gold' }
  | { kind: 'empty' }
  | { kind: 'file'; predictions: Map<string, Prediction> }
  | { kind: 'generate'; generate: TestGenerator; label?: string };

/** Produces model output (any format applyModelPatch reads) for an instance, e.g. a strategy. */
export type TestGenerator = (instance: Instance, repoPath: string) => Promise<{ modelPatch: string; reproduction: GenerationRecord }>;

export interface EvalOptions {
  instances: readonly Instance[];
  source: TestSource;
  /** Directory of `<owner>__<name>` repositories. */
  repos: string;
  /** results.jsonl and report.json go here; finished instances there are reused. */
  out: string;
  concurrency?: number;
  reruns?: number;
  /** Confirmation reruns of the tests that move (validate's default when absent; 0 = off). */
  confirm?: number;
  limits?: Partial<ResourceLimits>;
  /** Measure change coverage ΔC in extra runs. */
  coverage?: boolean;
  /** Reuse counts of identical coverage runs from earlier evaluations (default true). */
  coverageCache?: boolean;
  /** Start over even when `out` holds finished instances of the same run. */
  fresh?: boolean;
}

export interface EvalOutcome {
  results: InstanceResult[];
  report: EvalReport;
  /** Instances taken from an earlier, interrupted run in the same --out. */
  resumed: number;
  /** What was graded, as run.json names it (gold, empty, file:<digest>, generate:<strategy>). */
  label: string;
}

/** Errors that make every further instance pointless: stop the run instead of recording them. */
const FATAL = new Set(['DOCKER_UNREACHABLE', 'INTERRUPTED']);

export function runSettings(opts: Pick<EvalOptions, 'source' | 'coverage' | 'reruns'>): RunSettings {
  const s = opts.source;
  const predictions = s.kind === 'file' ? `file:${predictionsDigest(s.predictions)}` : s.kind === 'generate' ? `generate:${s.label ?? 'default'}` : s.kind;
  return { predictions, coverage: !!opts.coverage, reruns: opts.reruns ?? 0 };
}

export async function runEval(sandbox: Sandbox, opts: EvalOptions, progress: Progress = silentProgress): Promise<EvalOutcome> {
  await mkdir(opts.out, { recursive: true });
  const resultsPath = join(opts.out, RESULTS_FILE);
  const done = await openRun(opts.out, runSettings(opts), !!opts.fresh);
  const todo = opts.instances.filter((i) => !done.has(i.instance_id));
  const resumed = opts.instances.length - todo.length;
  if (resumed > 0) progress.step(`resuming: ${resumed} of ${opts.instances.length} instances already done in ${opts.out}`);
  const clock = new PhaseClock(sandbox);
  const limit = pLimit(Math.max(1, opts.concurrency ?? 1));
  progress.begin?.(todo.length, 'instances');
  const fresh = await Promise.all(
    todo.map((inst) =>
      limit(async () => {
        const { value: result, times, environment } = await clock.instance(() => evaluateInstance(clock, inst, opts, progress));
        result.phases = times;
        if (environment) result.environment = environment;
        // Written as each finishes, so an interrupted run keeps what it has.
        await appendFile(resultsPath, `${JSON.stringify(result)}\n`);
        progress.advance?.(`${inst.instance_id}: ${result.error ? 'error' : result.success ? 'S' : `not S (${result.why?.success ?? 'no verdict'})`}`);
        return result;
      }),
    ),
  );
  progress.end?.();
  const byId = new Map([...done, ...fresh.map((r) => [r.instance_id, r] as const)]);
  const results = opts.instances.map((i) => byId.get(i.instance_id)!);
  const report = summarize(results);
  await writeFile(join(opts.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  return { results, report, resumed, label: runSettings(opts).predictions };
}

export async function evaluateInstance(clock: PhaseClock, inst: Instance, opts: EvalOptions, progress: Progress): Promise<InstanceResult> {
  const sandbox = clock.sandbox;
  const started = Date.now();
  const row: InstanceResult = { instance_id: inst.instance_id, repo: inst.repo, applied: false, success: false, likelyCorrect: false, tests: [], durationMs: 0 };
  const model = opts.source.kind === 'file' ? opts.source.predictions.get(inst.instance_id)?.model_name_or_path : undefined;
  if (model) row.model = model;
  try {
    const repoPath = await resolveRepoPath(opts.repos, inst.repo);
    const modelOutput = await predictedTests(clock, inst, opts.source, repoPath, row);
    const testPatch = modelOutput.trim() ? await applicableTests(repoPath, inst, modelOutput, row) : undefined;
    if (!testPatch) {
      // Nothing to run; with --coverage the golden tests still decide whether the instance counts for ΔC (then with 0).
      if (opts.coverage) await referenceOnlyCoverage(sandbox, inst, repoPath, opts, row, progress);
      return row;
    }
    row.applied = true;
    row.testPatch = testPatch;
    progress.step(`${inst.instance_id}: validating`);
    const v = await validate(
      sandbox,
      {
        repo: repoPath,
        base: inst.base_commit,
        fixPatch: inst.patch,
        testPatch,
        image: inst.image,
        install: inst.install,
        testCmd: inst.test_cmd,
        reruns: opts.reruns,
        ...(opts.confirm !== undefined ? { confirm: opts.confirm } : {}),
        limits: opts.limits,
        coverage: opts.coverage ? { referenceTestPatch: inst.test_patch, cache: opts.coverageCache } : undefined,
      },
      { step: (m) => progress.step(`${inst.instance_id}: ${m}`) },
    );
    Object.assign(row, verdictRow(v));
    // The validation's own (what the install did, files no test owns), after the patch's.
    if (v.warnings.length) row.warnings = [...(row.warnings ?? []), ...v.warnings];
    keepCoverage(row, v);
  } catch (e) {
    if (isSwtError(e) && FATAL.has(e.code)) throw e;
    row.error = errorLine(e);
  } finally {
    row.durationMs = Date.now() - started;
  }
  return row;
}

function keepCoverage(row: InstanceResult, v: Pick<ValidationResult, 'coverage' | 'coverageError'>): void {
  if (v.coverage) {
    const { counter, dC, referenceDC, lines, covered, executableBy, executable, coveredLines, runs, reused, durationMs } = v.coverage;
    row.coverage = { counter, dC, referenceDC, lines, covered, executableBy, executable, coveredLines, runs, reused, durationMs } satisfies InstanceCoverage;
  }
  if (v.coverageError) row.coverageError = v.coverageError;
}

/** The predicted tests as a unified diff that applies at base, or undefined (W fails). */
async function applicableTests(repoPath: string, inst: Instance, modelOutput: string, row: InstanceResult): Promise<string | undefined> {
  const checkout = await materialize(repoPath, { rev: inst.base_commit, patches: [] });
  try {
    const application = await applyModelPatch(checkout.dir, modelOutput);
    row.warnings = [...application.warnings, ...application.errors];
    return application.applied && application.diff.trim() ? application.diff : undefined;
  } finally {
    await checkout.cleanup();
  }
}

async function referenceOnlyCoverage(sandbox: Sandbox, inst: Instance, repoPath: string, opts: EvalOptions, row: InstanceResult, progress: Progress): Promise<void> {
  if (!inst.test_patch.trim()) return;
  progress.step(`${inst.instance_id}: measuring which changed lines the golden tests execute`);
  const ctx = await prepareContext(sandbox, { repo: repoPath, base: inst.base_commit, image: inst.image, install: inst.install, testCmd: inst.test_cmd });
  keepCoverage(row, await coverageOfReference(sandbox, { repo: ctx.repo, env: ctx.env, runner: ctx.runner, base: ctx.base, fixPatch: inst.patch, referenceTestPatch: inst.test_patch, limits: opts.limits, cache: opts.coverageCache }));
}

async function predictedTests(clock: PhaseClock, inst: Instance, source: TestSource, repoPath: string, row: InstanceResult): Promise<string> {
  switch (source.kind) {
    case 'gold':
      return inst.test_patch;
    case 'empty':
      return '';
    case 'file':
      return source.predictions.get(inst.instance_id)?.model_patch ?? '';
    case 'generate': {
      const generated = await clock.generation(() => source.generate(inst, repoPath));
      row.reproduction = generated.reproduction;
      return generated.modelPatch;
    }
  }
}
