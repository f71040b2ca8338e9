/**
 * The runs of a validation with the tests: base and head side by side, the confirmation of the
 * tests that moved (in-process rounds, then reruns in each side's own kept container), and the
 * touched files' baselines.
 */
import { compareRuns, failingOnlyWithFile, fileOfId, movingTests, type TargetedRuns } from '../harness/classify.js';
import { roundsFresh, selectsTests, type RerunTarget } from '../harness/runners.js';
import { rerunTests, runTests, runTestsKept } from '../harness/runTests.js';
import { confirmedInProcess, joinRounds } from '../harness/rounds.js';
import type { RoundPlan } from '../ecosystems/types.js';
import type { RunResult, Verdict } from '../results/types.js';
import type { Environment, KeptContainer, RepoState, ResourceLimits, Sandbox } from '../sandbox/types.js';
import { baselineAtBase, baselineKey } from './baselineRuns.js';
import type { RepoContext } from './context.js';
import type { Progress } from './progress.js';

type Side = 'base' | 'head';

const NO_RUN: RunResult = { tests: [], fileErrors: [], timedOut: false, exitCode: 0, output: '', durationMs: 0 };

/**
 * Base and head with the tests (reruns one after another on each side) run side by side, with the
 * touched files' baseline at base when they exist there. Once both sides have their first results,
 * without waiting for that baseline: the tests that moved (movingTests) rerun `confirm` times on
 * both sides (rerunTargets: a head failure alone when the runner can select tests, else with the
 * file), beside the baseline at head, which runs only when it can change the verdict (needsHeadBaseline).
 */
export async function runSides(
  sandbox: Sandbox,
  ctx: RepoContext,
  withTests: {
    base: RepoState;
    head: RepoState;
    files: string[];
    headBaseline: RepoState;
    headHoldsTests: boolean;
    envs?: { base: Environment; head: Environment };
    /** Confirmation rounds inside each side's first run (RoundPlan), where the runner can. */
    rounds?: { base?: RoundPlan; head?: RoundPlan };
  },
  existing: { base: string[]; head: string[] },
  opts: { reruns?: number; confirm?: number; knownFlaky?: readonly string[]; limits?: Partial<ResourceLimits>; signal?: AbortSignal },
  progress: Progress,
): Promise<{ base: RunResult[]; head: RunResult[]; baseline?: { base: RunResult; head: RunResult }; confirm?: TargetedRuns }> {
  // Each side's kept container (its first run with the tests), released whatever happens.
  const kept: Partial<Record<Side, KeptContainer>> = {};
  try {
    return await runSidesKept(sandbox, ctx, withTests, existing, opts, progress, kept);
  } finally {
    await Promise.all([kept.base?.release(), kept.head?.release()]);
  }
}

async function runSidesKept(
  sandbox: Sandbox,
  ctx: RepoContext,
  withTests: Parameters<typeof runSides>[2],
  existing: { base: string[]; head: string[] },
  opts: Parameters<typeof runSides>[4],
  progress: Progress,
  kept: Partial<Record<Side, KeptContainer>>,
): ReturnType<typeof runSides> {
  const rounds = 1 + Math.max(0, opts.reruns ?? 0);
  // Each side runs in its own environment: head's when its manifests changed (baselines too).
  const envOf = { base: withTests.envs?.base ?? ctx.env, head: withTests.envs?.head ?? ctx.env };
  const runOpts = (name: Side, state: RepoState, files: string[]) => ({ env: envOf[name], repo: ctx.repo, state, runner: ctx.runner, files, limits: opts.limits, ...(opts.signal ? { signal: opts.signal } : {}) });
  const run = (name: Side, state: RepoState, files: string[]) => (files.length ? runTests(sandbox, runOpts(name, state, files)) : Promise.resolve(NO_RUN));
  // A side's container is kept for its own confirmation reruns only: the same state and trust (the
  // untrusted head's container never runs base's tests, nor anything else).
  const keep = (opts.confirm ?? 0) > 0 && rounds === 1;
  // What each side's first run confirmed inside its own process (RoundPlan).
  const inProcess: Partial<Record<Side, RunResult[]>> = {};
  const side = async (name: Side, state: RepoState) => {
    const results: RunResult[] = [];
    for (let i = 0; i < rounds; i++) {
      progress.step(`running ${withTests.files.length} test file(s) on ${name}${rounds > 1 ? ` (${i + 1}/${rounds})` : ''}`);
      if (!keep) results.push(await run(name, state, withTests.files));
      else {
        const plan = withTests.rounds?.[name];
        const first = await runTestsKept(sandbox, { ...runOpts(name, state, withTests.files), ...(plan ? { roundPlan: plan } : {}) });
        if (first.kept) kept[name] = first.kept;
        if (first.rounds) inProcess[name] = first.rounds;
        results.push(first.result);
      }
    }
    return results;
  };
  const needBaseline = existing.base.length > 0 || existing.head.length > 0;
  // The base baseline goes on while the sides confirm: only the head baseline's decision waits for it.
  const baselineBaseRun = needBaseline ? baselineAtBase(baselineKey(envOf.base.image, withTests.base.rev, existing.base, ctx.runner, opts.limits), () => run('base', { rev: withTests.base.rev, patches: [] }, existing.base)) : Promise.resolve(NO_RUN);
  baselineBaseRun.catch(() => undefined);
  // A failed side still lets the baseline finish and remove its container before the error goes up.
  const [base, head] = await settledAll([side('base', withTests.base), side('head', withTests.head)] as const).catch(async (e: unknown) => {
    await baselineBaseRun.catch(() => undefined);
    throw e;
  });
  const withVerdict = compareRuns(base, head);

  const confirming = confirmMoving(sandbox, ctx, withTests, { runs: { base, head }, verdict: withVerdict, kept, inProcess }, runOpts, opts, progress);
  // The head baseline runs only when it can change the verdict (needsHeadBaseline), beside the confirmation.
  const baselineHeadRun = async (): Promise<{ base: RunResult; head: RunResult } | undefined> => {
    if (!needBaseline) return undefined;
    const baselineBase = await baselineBaseRun;
    if (!needsHeadBaseline(withVerdict, baselineBase, withTests.headHoldsTests)) return undefined;
    progress.step('running the touched files without the tests at head (baseline)');
    return { base: baselineBase, head: await run('head', withTests.headBaseline, existing.head) };
  };
  const [confirm, baseline] = await settledAll([confirming, baselineHeadRun()] as const);
  return { base, head, ...(baseline ? { baseline } : {}), ...(confirm ? { confirm } : {}) };
}

/** Both sides' first runs with the tests: results, their verdict, kept containers, in-process rounds. */
interface FirstRuns {
  runs: Record<Side, RunResult[]>;
  verdict: Verdict;
  kept: Partial<Record<Side, KeptContainer>>;
  inProcess: Partial<Record<Side, RunResult[]>>;
}

/**
 * The tests that moved (movingTests), confirmed `confirm` more times on both sides, side by side:
 * what each side's in-process rounds reported (confirmedInProcess), and reruns of the rest in that
 * side's own kept container (rerunTargets: a head failure alone when the runner can select tests,
 * else with its file). Each side's container is released once its confirmation is done.
 */
async function confirmMoving(
  sandbox: Sandbox,
  ctx: RepoContext,
  withTests: Parameters<typeof runSides>[2],
  first: FirstRuns,
  runOpts: (name: Side, state: RepoState, files: string[]) => Omit<Parameters<typeof rerunTests>[1], 'targets' | 'rounds'>,
  opts: Parameters<typeof runSides>[4],
  progress: Progress,
): Promise<TargetedRuns | undefined> {
  const confirmRounds = Math.max(0, opts.confirm ?? 0);
  const moving = confirmRounds ? movingTests(first.verdict).map((t) => t.id) : [];
  const known = new Set(opts.knownFlaky ?? []);
  // Known flaky tests first: their reruns start (and their files run) before the others'.
  moving.sort((a, b) => Number(known.has(b)) - Number(known.has(a)));
  const alone = selectsTests(ctx.runner);
  const confirmedBy: Record<Side, string[]> = { base: [], head: [] };
  const confirmSide = async (name: Side, state: RepoState) => {
    const runs = first.runs[name];
    const rounds = first.inProcess[name];
    // The first run's own rounds confirm what they reported; only the rest reruns.
    const covered = (confirmedBy[name] = confirmedInProcess(moving, rounds, runs, name, roundsFresh(ctx.runner)));
    const rest = moving.filter((id) => !covered.includes(id));
    const targets = rerunTargets(rest, runs, withTests.files, alone, name);
    const own = first.kept[name];
    const rerun = (t: RerunTarget[]) => rerunTests(sandbox, { ...runOpts(name, state, withTests.files), targets: t, rounds: confirmRounds, ...(own ? { kept: own } : {}) });
    try {
      if (targets.length) progress.step(`confirming ${rest.length} test(s) that moved on ${name} (${confirmRounds} more run${confirmRounds > 1 ? 's' : ''})`);
      const confirmed = joinRounds(rounds, covered, targets.length ? await rerun(targets) : [], confirmRounds);
      // At base, a test that failed with its file and passed in every run alone (a neighbour's state
      // fails it, as `make html epub` fails viewcode's epub test after the html one): its file runs
      // again in order, and a failure every time there is the file's, not chance (classify.ts).
      const ids = name === 'base' && (alone || rounds?.length) ? failingOnlyWithFile(moving, runs, confirmed) : [];
      // Their whole files, as rerunTargets names a test's file when it cannot select tests.
      const files = ids.length ? rerunTargets(ids, runs, withTests.files, false, name) : [];
      if (!files.length) return confirmed;
      progress.step(`running ${files.length} test file(s) again in order on base: ${ids.length} test(s) failed there only with the rest of the file`);
      inOrder.base = await rerun(files);
      inOrder.ids.push(...ids);
      return confirmed;
    } finally {
      await own?.release();
    }
  };

  const inOrder: { ids: string[]; base: RunResult[] } = { ids: [], base: [] };
  const [confirmBase, confirmHead] = await settledAll([confirmSide('base', withTests.base), confirmSide('head', withTests.head)] as const);
  const both = moving.filter((id) => confirmedBy.base.includes(id) && confirmedBy.head.includes(id));
  if (!moving.length) return undefined;
  return { base: confirmBase, head: confirmHead, ids: moving, alone, ...(both.length ? { inProcess: both } : {}), ...(inOrder.base.length ? { baseInOrder: inOrder } : {}) };
}

/**
 * Whether the baseline at head can change the verdict: the head already holds the tests, a test
 * fails at base without them, a test comes from the head alone, or a test breaks (P2F) with them.
 * Otherwise no baseline transition could match a counted one.
 */
function needsHeadBaseline(withVerdict: Verdict, baselineBase: RunResult, headHoldsTests: boolean): boolean {
  const failsAtBaseWithout = baselineBase.tests.some((t) => t.outcome !== 'passed') || baselineBase.fileErrors.length > 0;
  // A test absent at base even with the tests applied comes from the head's code (the PR's own tests).
  const fromHead = withVerdict.tests.some((t) => t.baseFailure?.kind === 'missing');
  return headHoldsTests || failsAtBaseWithout || fromHead || withVerdict.tests.some((t) => t.transition === 'P2F');
}

/** allSettled, then the first rejection: when one run fails, the others still finish and remove their containers first. */
async function settledAll<T extends readonly unknown[]>(ps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(ps);
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * What a side reruns to confirm `ids`, when the runner can select tests: at head, each test that
 * failed there alone in its own invocation (a neighbour may have poisoned it: such a failure must
 * not fail the fix), the others together, one invocation per file (a process start per test would
 * cost more than the first run). A test this side never reported is not asked for (the runner
 * would refuse the others). A file whose failure has no test id (it did not load), an id that
 * cannot go into a command, or a runner that cannot select: the whole file, once.
 */
export function rerunTargets(ids: readonly string[], runs: readonly RunResult[], files: readonly string[], alone: boolean, side: Side = 'head'): RerunTarget[] {
  const requested = new Set(files);
  const seen = new Map<string, boolean>();
  // The file a test came from, as its runner reported it (Go, Rust, JVM ids do not start with it).
  const fileOf = new Map<string, string>();
  for (const r of runs) for (const t of r.tests) {
    seen.set(t.id, (seen.get(t.id) ?? false) || t.outcome !== 'passed');
    if (t.file && requested.has(t.file)) fileOf.set(t.id, t.file);
  }
  const single: RerunTarget[] = [];
  const together = new Map<string, string[]>();
  const whole = new Set<string>();
  for (const id of ids) {
    const file = fileOf.get(id) ?? fileOfId(id);
    if (!requested.has(file)) continue;
    const selectable = alone && id !== file && !/[\u0000-\u001f\u007f]/.test(id);
    const failed = seen.get(id);
    if (!selectable || runs.some((r) => r.fileErrors.some((e) => e.file === file))) whole.add(file);
    else if (failed && side === 'head') single.push({ file, ids: [id] });
    else if (failed !== undefined) together.set(file, [...(together.get(file) ?? []), id]);
  }
  const grouped = [...together].map(([file, group]) => ({ file, ids: group }));
  return [...[...single, ...grouped].filter((t) => !whole.has(t.file)), ...[...whole].map((file) => ({ file }))];
}
