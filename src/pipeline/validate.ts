import { coverageOfValidation, type CoverageRequest } from '../coverage/forValidation.js';
import type { ChangeCoverage } from '../coverage/measure.js';
import { ecosystemOfRunner } from '../ecosystems/index.js';
import { compareRuns, relativeTo } from '../harness/classify.js';
import { baselineKey, hasBaseline } from './baselineRuns.js';
import { filesTouchedByPatch, prewarmTests } from '../harness/runTests.js';
import { whyNoRounds } from '../harness/runners.js';
import { roundPlan } from '../harness/rounds.js';
import { runSides } from './sides.js';
import type { RoundPlan } from '../ecosystems/types.js';
import type { RunResult, Verdict } from '../results/types.js';
import { formatPatch, parsePatch, reversePatch } from 'diff';
import { applyModelPatch } from '../patch/applyModelPatch.js';
import { headChanges } from './headChanges.js';
import { plusPatch } from '../repo/state.js';
import { landedPatch, listFiles, materialize, openState, patchToRevAt, resolveRev, withState } from '../repo/git.js';
import { withStateCache } from '../repo/stateCache.js';
import type { Environment, KeptContainer, RepoState, ResourceLimits, Sandbox } from '../sandbox/types.js';
import { whyNoTests } from '../harness/noTests.js';
import { isSwtError, SwtError } from '../util/errors.js';
import { decideLimits, prepareContext, readRepo, type CappedNote, type ContextInput, type RepoContext } from './context.js';
import { testTargetsOfPatch } from './testTargets.js';
import { silentProgress, type Progress } from './progress.js';
import { diffPath } from '../patch/fileNames.js';

export interface ValidateInput extends ContextInput {
  /** The fixed state: a head revision, or base + a code patch. */
  head?: string;
  fixPatch?: string;
  /** The tests to classify, as a unified diff applied on both sides. */
  testPatch: string;
  /** Extra runs per side; a test whose outcome changes on the same code is flaky. */
  reruns?: number;
  /** Reruns of every test that moved (not P2P) on both sides, to confirm it (default: the config's, 2; 0 = off). */
  confirm?: number;
  /** Tests seen flaky on this repository before: confirmed first and labelled. */
  knownFlaky?: readonly string[];
  limits?: Partial<ResourceLimits>;
  /** Also measure change coverage ΔC of the tests, in extra runs. */
  coverage?: CoverageRequest;
  /** Stops the test runs when aborted (SwtError('CANCELLED')): a newer push supersedes the check. */
  signal?: AbortSignal;
  /** Who vouches for the fixed code's own install, when its manifests differ from base's (default `writer`). */
  headInstall?: HeadInstall;
}

/**
 * `writer`: the head was written by someone with write access (or the CLI's user runs it): installed
 * as base is. `other`: someone else's head that may install (a maintainer approved it at this sha, or
 * a branch of the repository itself): installed without writing the package cache. `refused`: not
 * approved: nothing is installed from it (SwtError NOT_APPROVED).
 */
export type HeadInstall = 'writer' | 'other' | 'refused';

/** Which test machinery the head's runs used, when the head changed some (ValidationResult.machinery). */
export interface MachineryUse {
  changed: string[];
  used: 'base' | 'head';
}

/** The test runs' own variables (RunnerSpec.env) and their source, as reported. */
export interface TestEnvironment {
  env: Record<string, string>;
  source: string;
}

/** One side's environment image, as reported. */
export interface EnvironmentSummary {
  image: string;
  baseImage: string;
  cached: boolean;
  buildMs: number;
}

export interface ValidationResult extends Verdict {
  base: string;
  head: string | null;
  files: string[];
  runner: string;
  /**
   * The environment each side ran in. The top-level fields are base's (as before head could have
   * its own); `head.own` says whether head got its own image because `head.manifests` changed.
   */
  environment: EnvironmentSummary & {
    /** The date the default install resolved unpinned dependencies as of (the base commit's); absent: today's registries. */
    dependenciesAsOf?: string;
    base: EnvironmentSummary;
    head: EnvironmentSummary & { own: boolean; manifests: string[] };
  };
  /**
   * The head changed test machinery (`changed`: conftest.py, a set-up file, a TestMain): the tests
   * ran on head with base's (`used: 'base'`), or, when they could not run so, with the head's own
   * (`used: 'head'`: flagged, never likely correct). Absent: the head changed none.
   */
  machinery?: MachineryUse;
  /** Limits asked for (by `.github/swt.yml` or the caller) above the operator's ceilings, and lowered to them. */
  limitsCapped: CappedNote[];
  /** The variables every test run set, and where they came from (the project's CI workflow); absent: none. */
  testEnvironment?: TestEnvironment;
  runs: { base: RunResult[]; head: RunResult[] };
  /** The reruns that confirmed the tests that moved (absent: none moved, or confirmation is off). */
  confirmation?: {
    rounds: number;
    tests: string[];
    alone: boolean;
    /** Of `tests`, those confirmed on both sides by rounds inside the first runs' processes (RoundPlan). */
    inProcess?: string[];
    /** Why the runner held no rounds inside its runs (all of `tests` reran in new processes). */
    noRounds?: string;
    runs: { base: RunResult[]; head: RunResult[] };
  };
  /**
   * The touched test files run without the test patch on both sides, when they exist there: what the
   * repository's own tests (and the fix PR's) already do. Null when every touched file is new.
   */
  baseline: { verdict: Verdict; base: RunResult; head: RunResult } | null;
  /** E.g. the test patch needed fuzz to apply to the fixed state. */
  warnings: string[];
  /** ΔC when asked for; `coverageError` when it could not be measured. */
  coverage?: ChangeCoverage;
  coverageError?: string;
  durationMs: number;
}

export async function validate(sandbox: Sandbox, input: ValidateInput, progress: Progress = silentProgress): Promise<ValidationResult> {
  // Pre-warmed containers no run took (the validation failed first, or the head's test patch needed re-applying) go at the end.
  const releases: Array<() => Promise<void>> = [];
  // Its steps ask for the same commit-plus-patches trees again and again: each is built once.
  return withStateCache(async () => {
    const early = earlyStates(input).map((state) => openState(input.repo, state).catch(() => undefined));
    try {
      return await validateWith(sandbox, input, progress, releases);
    } finally {
      await Promise.all(releases.map((r) => r()));
      await Promise.all(early.map(async (e) => (await e)?.dispose()));
    }
  });
}

/**
 * The trees the size check and the first runs ask for, built from the start beside the steps
 * before them (each is git work a run's container would otherwise wait for): shared by key, so
 * the steps get these builds; one that fails is built again where it is asked for, and fails there.
 */
function earlyStates(input: ValidateInput): RepoState[] {
  if (!input.head === !input.fixPatch) return [];
  const fixed = input.head ? { rev: input.head, patches: [] } : { rev: input.base, patches: [input.fixPatch!] };
  return [
    { rev: input.base, patches: [input.testPatch] },
    ...(fixed.patches.length ? [fixed] : []),
    { rev: fixed.rev, patches: [...fixed.patches, input.testPatch] },
  ];
}

async function validateWith(sandbox: Sandbox, input: ValidateInput, progress: Progress, releases: Array<() => Promise<void>>): Promise<ValidationResult> {
  if (!input.head === !input.fixPatch) throw new SwtError('BAD_INPUT', 'give exactly one of a head revision or a fix patch');
  const started = Date.now();
  // The repository's config and facts are read beside the test patch's targets: neither needs the other.
  const read = readRepo(input);
  read.catch(() => undefined);
  const targets = await testTargets(input);
  const files = targets.files;
  const ctx = await prepareContext(sandbox, { ...input, touched: files }, progress, read);
  const head = input.head ? await resolveRev(ctx.repo, input.head) : null;
  const warnings: string[] = [...ctx.installNotes, ...targets.unowned.map((f) => `${f} is not a test and no test file owns it: nothing runs for it`)];
  const fixedCode: RepoState = head ? { rev: head, patches: [], patchNames: [] } : { rev: ctx.base, patches: [input.fixPatch!], patchNames: ['fix patch'] };
  const baseState: RepoState = { rev: ctx.base, patches: [input.testPatch], patchNames: ['test patch'] };
  const decided = decideLimits(ctx.config, input.limits, sandbox.ceilings);
  const opts = runOptions(input, ctx, decided.limits);
  // One diff, begun beside the admission: head's own install (manifests), and whether its tests run with base's test machinery.
  const changing = headChanges(ctx.repo, ctx.base, fixedCode);
  changing.catch(() => undefined);
  // What the fixed code copies into a run's container counts against the run's limits: one that
  // cannot fit is refused, from git's sizes, before any container of this validation is made or taken.
  const admitted = Promise.resolve(sandbox.admit?.({ env: ctx.env, repo: ctx.repo, state: fixedCode, limits: decided.limits }, head ? "head's files" : "the fixed code's files"));
  admitted.catch(() => undefined);
  // The first runs' containers start while the steps before them work (their files planned and
  // counted beside the admission, the containers once it passes): base's now, head's once its state
  // is known. The sides' containers with the tests are kept for their confirmation reruns (runSides).
  const keep = opts.confirm > 0 && Math.max(0, opts.reruns ?? 0) === 0;
  // The tests the patch adds or changes get their confirmation rounds inside the first runs, where the runner can.
  const plan = (testPatch: string) => (keep ? roundPlan(testPatch, files, opts.confirm) : undefined);
  const warmOpts = { files, keep, plan: plan(input.testPatch), limits: decided.limits, gate: admitted };
  warmRun(sandbox, ctx, ctx.env, baseState, warmOpts, releases);
  // A refusal is the answer, whatever else failed meanwhile.
  const changes = await changing.catch(async (e: unknown) => {
    await admitted;
    throw e;
  });
  const asBase = changes.machinery.length ? await withBaseMachinery(ctx, fixedCode, changes.machinery) : undefined;
  const headWithTests: RepoState = { rev: fixedCode.rev, patches: [...(asBase ?? fixedCode).patches, input.testPatch] };
  const warm = warmHeadAndBaseline(sandbox, ctx, { headWithTests, ...warmOpts }, releases);
  await admitted;
  const headEnv = fixedEnvironment(sandbox, ctx, fixedCode, changes.manifests, input.headInstall ?? 'writer', progress).then(async (h) => {
    await warm.headIn(h.env);
    return h;
  });
  const judging: Judging = { sandbox, ctx, input, files, baseState, headEnv, opts, plan, progress };
  let judged = await judge(judging, asBase ?? fixedCode, warnings);
  const machinery: MachineryUse | undefined = asBase ? { changed: changes.machinery, used: 'base' } : undefined;
  if (machinery && brokeWith(judged.runs.head)) {
    // The fix may need its own set-up (a fixture it renames): its result, flagged, rather than none.
    progress.step(`the tests did not run on the head with the base's test set-up: running them with the head's own (${changes.machinery.join(', ')} changed)`);
    judged = await judge(judging, fixedCode, warnings);
    machinery.used = 'head';
  }
  const { state } = judged;
  if (input.coverage) progress.step('measuring change coverage (extra runs with line counting)');
  const coverage = input.coverage
    ? await coverageOfValidation(
        sandbox,
        { repo: ctx.repo, env: ctx.env, runner: ctx.runner, base: ctx.base, fixedCode: state.code, fixPatch: input.fixPatch, withTests: { base: baseState, head: state.fixed, files }, existing: state.existing, headBaseline: state.headBaseline, limits: opts.limits },
        input.coverage,
      )
    : {};
  return { ...resultOf(ctx, judged, { head, files, confirm: opts.confirm, machinery, env: await headEnv, capped: decided.capped }), warnings, ...coverage, durationMs: Date.now() - started };
}

/** The touched test files (a touched snapshot or fixture runs the test files that own it, never itself); none is refused. */
async function testTargets(input: ValidateInput): Promise<{ files: string[]; unowned: string[] }> {
  const targets = await testTargetsOfPatch(input.repo, input.base, input.testPatch);
  if (targets.files.length > 0) return targets;
  const why = targets.unowned.length ? ` (no test file owns ${targets.unowned.join(', ')})` : '';
  throw new SwtError('NO_TEST_FILES', `the test patch adds or changes no test file${why}`);
}

/** The result's fields from the judged runs, before the warnings, coverage and duration. */
function resultOf(
  ctx: RepoContext,
  { runs, verdict, baseline }: Awaited<ReturnType<typeof judge>>,
  o: { head: string | null; files: string[]; confirm: number; machinery: MachineryUse | undefined; env: { env: Environment; manifests: string[] }; capped: CappedNote[] },
): Omit<ValidationResult, 'warnings' | 'coverage' | 'coverageError' | 'durationMs'> {
  const { env, machinery } = o;
  const confirm = runs.confirm;
  return {
    ...verdict,
    // A result with the head's own test set-up is never likely correct: the head could have made it pass.
    ...(machinery?.used === 'head' ? { likelyCorrect: false, machinery } : machinery ? { machinery } : {}),
    base: ctx.base,
    head: o.head,
    files: o.files,
    runner: ctx.runner.kind,
    environment: { ...summary(ctx.env), ...(ctx.dependenciesAsOf ? { dependenciesAsOf: ctx.dependenciesAsOf } : {}), base: summary(ctx.env), head: { ...summary(env.env), own: env.env !== ctx.env, manifests: env.manifests } },
    limitsCapped: o.capped,
    ...(ctx.runner.env && Object.keys(ctx.runner.env).length ? { testEnvironment: { env: { ...ctx.runner.env }, source: ctx.runner.envSource ?? 'the runner' } } : {}),
    runs: { base: runs.base, head: runs.head },
    ...(verdict.tests.length === 0 ? { noTests: whyNoTests(runs) ?? 'the runs reported tests, but none is left once the baseline is taken out' } : {}),
    ...(confirm
      ? { confirmation: { rounds: o.confirm, tests: [...confirm.ids], alone: confirm.alone, ...(confirm.inProcess ? { inProcess: [...confirm.inProcess] } : {}), ...noRounds(ctx.runner, o.files.length), runs: { base: confirm.base, head: confirm.head } } }
      : {}),
    baseline,
  };
}

/** What judging the fixed code needs, whichever test machinery it runs with. */
interface Judging {
  sandbox: Sandbox;
  ctx: RepoContext;
  input: ValidateInput;
  files: string[];
  baseState: RepoState;
  headEnv: Promise<{ env: Environment; manifests: string[] }>;
  opts: ReturnType<typeof runOptions>;
  plan: (testPatch: string) => RoundPlan | undefined;
  progress: Progress;
}

/** The tests on base and on `code` (the fixed code, with base's test machinery or its own), classified. */
async function judge(j: Judging, code: RepoState, warnings: string[]) {
  const { ctx, input, files } = j;
  // Three independent looks at the fixed code, side by side: each is git work the first runs wait for.
  const [headEnv, headTests, present] = await Promise.all([j.headEnv, rebaseTestPatch(ctx.repo, code, input.testPatch, warnings), filesPresent(ctx, code)]);
  const fixed = plusPatch(code, headTests.patch, 'test patch');
  // A head that holds the tests holds the files they create: its baseline runs without them.
  if (headTests.contained) for (const p of parsePatch(input.testPatch)) if (p.oldFileName === '/dev/null') present.head.delete(diffPath(p.newFileName) ?? '');
  const existing = { base: baselineFiles(ctx, files, present.base), head: baselineFiles(ctx, files, present.head) };
  // A head that already holds the tests (a PR that adds them) gets its baseline with them taken out.
  const headBaseline = headTests.contained ? plusPatch(code, formatPatch(reversePatch(parsePatch(input.testPatch))), 'reversed test patch') : code;
  // Head's rounds follow the test patch as it applied there (its lines may have moved).
  const sides = { base: j.baseState, head: fixed, files, headBaseline, headHoldsTests: headTests.contained, envs: { base: ctx.env, head: headEnv.env }, rounds: { base: j.plan(input.testPatch), head: j.plan(headTests.landed ?? headTests.patch) } };
  const runs = await runSides(j.sandbox, ctx, sides, existing, j.opts, j.progress);
  // Compiled languages: a unit that does not build at base takes only the tests the patch adds or changes into account.
  const changedTest = ecosystemOfRunner(ctx.runner)?.changedTests?.(input.testPatch);
  const withTests = labelKnown(compareRuns(runs.base, runs.head, { ...(changedTest ? { changedTest } : {}), ...(runs.confirm ? { confirm: runs.confirm } : {}) }), j.opts.knownFlaky);
  const baseline = runs.baseline ? { verdict: compareRuns([runs.baseline.base], [runs.baseline.head]), ...runs.baseline } : null;
  const verdict = baseline ? relativeTo(withTests, baseline.verdict) : withTests;
  return { runs, verdict, baseline, state: { code, fixed, existing, headBaseline } };
}

/** The tests did not run on the head: a file did not load or build, the run timed out, or it reported no test. */
function brokeWith(head: readonly RunResult[]): boolean {
  const first = head[0];
  return !first || first.fileErrors.length > 0 || (first.buildFailures?.length ?? 0) > 0 || first.timedOut || first.tests.length === 0;
}

/** The fixed code with base's version of its changed test machinery (the files head added taken out). */
async function withBaseMachinery(ctx: RepoContext, fixedCode: RepoState, machinery: string[]): Promise<RepoState> {
  const patch = await patchToRevAt(ctx.repo, fixedCode, ctx.base, machinery);
  return plusPatch(fixedCode, patch, "base's test machinery");
}

type WarmOptions = { files: string[]; keep: boolean; plan?: RoundPlan; limits: Partial<ResourceLimits>; gate: Promise<unknown> };

/** Starts a first run's container ahead of it (made once `w.gate` passes); its release goes to `releases`. */
function warmRun(sandbox: Sandbox, ctx: RepoContext, env: Environment, state: RepoState, w: WarmOptions, releases: Array<() => Promise<void>>, kept = w.keep) {
  const release = prewarmTests(sandbox, { env, repo: ctx.repo, state, runner: ctx.runner, files: w.files, limits: w.limits, keep: kept, ...(kept && w.plan ? { roundPlan: w.plan } : {}) }, w.gate);
  releases.push(release);
  return release;
}

/**
 * Starts head's first run's container, then base's baseline's (without the tests): head's in base's
 * environment before its manifests are compared (the common case); `headIn` replaces it when head
 * gets its own environment. Base's with the tests started first (warmRun, once admitted).
 */
function warmHeadAndBaseline(sandbox: Sandbox, ctx: RepoContext, w: WarmOptions & { headWithTests: RepoState }, releases: Array<() => Promise<void>>): { headIn: (env: Environment) => Promise<void> } {
  const headInBase = warmRun(sandbox, ctx, ctx.env, w.headWithTests, w, releases);
  const atBase = baselineFiles(ctx, w.files, new Set(ctx.files));
  if (!hasBaseline(baselineKey(ctx.env.image, ctx.base, atBase, ctx.runner, w.limits))) warmRun(sandbox, ctx, ctx.env, { rev: ctx.base, patches: [] }, { ...w, files: atBase }, releases, false);
  return {
    async headIn(env) {
      if (env === ctx.env) return;
      await headInBase();
      warmRun(sandbox, ctx, env, w.headWithTests, w, releases);
    },
  };
}

/**
 * Confirmation reruns per side when neither the caller nor `.github/swt.yml` says: one unlucky run
 * must not decide a verdict (issue 22). 0 turns it off.
 */
export const DEFAULT_CONFIRM_RUNS = 2;

/** How the sides run: the input's reruns and confirmation, else the repository's config's, else the defaults. */
function runOptions(input: ValidateInput, ctx: RepoContext, limits: Partial<ResourceLimits>) {
  return {
    reruns: input.reruns ?? ctx.config.reruns,
    confirm: input.confirm ?? ctx.config.confirm ?? DEFAULT_CONFIRM_RUNS,
    knownFlaky: input.knownFlaky ?? [],
    limits,
    ...(input.signal ? { signal: input.signal } : {}),
  };
}

function labelKnown(v: Verdict, known: readonly string[]): Verdict {
  if (known.length === 0) return v;
  const seen = new Set(known);
  return { ...v, tests: v.tests.map((t) => (seen.has(t.id) ? { ...t, knownFlaky: true } : t)) };
}

function summary(env: Environment): EnvironmentSummary {
  return { image: env.image, baseImage: env.baseImage, cached: env.cached, buildMs: env.buildMs };
}

/**
 * The fixed code's environment: base's, unless the fix changes a dependency manifest (and there is
 * an install step); then its own, built from the fixed code and cached by the same key.
 */
async function fixedEnvironment(sandbox: Sandbox, ctx: RepoContext, fixedCode: RepoState, manifests: string[], trust: HeadInstall, progress: Progress): Promise<{ env: Environment; manifests: string[] }> {
  if (manifests.length === 0 || !ctx.install.trim()) return { env: ctx.env, manifests };
  if (trust === 'refused') throw new SwtError('NOT_APPROVED', `the head changes ${manifests.join(', ')} and nobody with write access approved installing it`);
  progress.step(`environment for the fixed code (${manifests.join(', ')} changed)`);
  const env = await sandbox.ensureEnvironment(
    {
      repo: ctx.repo,
      rev: fixedCode.rev,
      patches: fixedCode.patches,
      baseImage: ctx.baseImage,
      ...(ctx.fallbackImages ? { fallbackImages: ctx.fallbackImages } : {}),
      install: ctx.install,
      ...(ctx.warm ? { warm: ctx.warm } : {}),
      ...(ctx.cacheScope ? { cacheScope: ctx.cacheScope } : {}),
      ...(trust === 'writer' ? {} : { cacheWrite: false }),
    },
    (m) => progress.step(m),
  );
  return { env, manifests };
}

/** `noRounds` of a result's confirmation, when its runner holds none. */
function noRounds(runner: RepoContext['runner'], fileCount: number): { noRounds?: string } {
  const why = whyNoRounds(runner, fileCount);
  return why ? { noRounds: why } : {};
}

/**
 * The test patch as it applies to the fixed state. A fix PR may touch the same test file (it adds
 * its own tests where ours go): then the patch is re-applied tolerantly and the result used, with a warning.
 */
async function rebaseTestPatch(repo: string, fixed: RepoState, testPatch: string, warnings: string[]): Promise<{ patch: string; contained: boolean; landed?: string }> {
  try {
    const last = fixed.patches.length;
    return await withState(repo, plusPatch(fixed, testPatch, 'test patch'), async (t) => {
      const contained = t.contained.includes(last);
      // Where its hunks landed (the fix may have moved their lines): the rounds choose tests by line.
      const landed = contained || fixed.patches.length ? undefined : await landedPatch(t, fixed.rev, filesTouchedByPatch(testPatch, () => true));
      return { patch: testPatch, contained, ...(landed ? { landed } : {}) };
    });
  } catch (e) {
    if (!isSwtError(e, 'PATCH_DOES_NOT_APPLY')) throw e;
    const checkout = await materialize(repo, fixed);
    try {
      const app = await applyModelPatch(checkout.dir, testPatch);
      if (!app.applied) throw e;
      warnings.push(`the test patch did not apply cleanly to the fixed state (${e.message}); applied it tolerantly: ${app.warnings.join('; ') || 'context matched at an offset'}`);
      return { patch: app.diff, contained: false };
    } finally {
      await checkout.cleanup();
    }
  }
}

/** The files at base and in the fixed code (its patches' files included). */
async function filesPresent(ctx: RepoContext, fixedCode: RepoState): Promise<{ base: ReadonlySet<string>; head: Set<string> }> {
  const atBase = new Set(ctx.files);
  const atFixed = fixedCode.rev === ctx.base ? new Set(atBase) : new Set(await listFiles(ctx.repo, fixedCode.rev));
  for (const p of fixedCode.patches) for (const f of filesTouchedByPatch(p, () => true)) atFixed.add(f);
  return { base: atBase, head: atFixed };
}

/**
 * What a baseline runs without the test patch, of the files `present`: the touched test files, and
 * for a new one whose run runs its unit's other tests (unitPeer) a file that runs that unit.
 */
function baselineFiles(ctx: RepoContext, files: readonly string[], present: ReadonlySet<string>): string[] {
  const peer = ecosystemOfRunner(ctx.runner)?.unitPeer;
  const out = new Set(files.filter((f) => present.has(f)));
  for (const f of files) {
    const p = !present.has(f) && peer ? peer(f, ctx.files) : undefined;
    if (p && present.has(p)) out.add(p);
  }
  return [...out];
}
