/**
 * bench:harness — measured side by side in one run, on the real example instances:
 *   cold environment builds with an empty package cache and with a warm one (the install goes
 *   through the egress proxy either way), a warm (cached) environment, one base+head validation,
 *   and the floor: the same test command as one sandbox run per side (a warm pool's container, the
 *   command on its stdin), base and head side by side (as a validation runs them). Then how a validation's cost grows with repository size and with test count
 *   (synthetic repos). Validation is timed with confirmation of the tests that move (the
 *   default) and without it (confirm 0), in pairs back to back (which goes first alternates;
 *   SWT_BENCH_PAIRS of them at least, 11 by default, and more while they cost under PAIRS_BUDGET_MS
 *   or spread too wide for their medians' standard error to be under MEDIAN_SE,
 *   up to three times as many: a quick instance's ratios move most with the machine, and its pairs
 *   are cheap; each with a sample of the floor, the three in an order that rotates; SWT_BENCH_ROUNDS, 2, counts the cold builds): the
 *   best of each, and the median of the pairs' ratios. A JSON object with every figure is the last
 *   line. `--validation-only`: skip the cold builds and the scaling; `--no-scaling`: skip the scaling;
 * `--deps-only`: the dependency tree alone; `--examples-only`: no ecosystem projects, no dependency tree; `--projects-only`: no examples;
 * `--project=<python|go|rust|rust-describe|java|cpp|ruby|rspec|php>` (repeatable): only those ecosystem projects (rust-describe only when named); `--no-deps`: no dependency tree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Docker from 'dockerode';
import { parseInstances } from '../src/eval/instances.js';
import { depTreeScaling, type DepTreeRow } from './depTree.js';
import { medianStandardError } from './stats.js';
import { AIR_GAPPED_HOSTS, ecosystemProjects, type BenchProject } from './ecosystemProjects.js';
import { DEFAULT_EGRESS_HOSTS } from '../src/sandbox/egress/egressConfig.js';
import { resolveRepoPath } from '../src/eval/repos.js';
import { buildTestCommand, DEFAULT_OUT_DIR } from '../src/harness/runners.js';
import { testTargetsOfPatch } from '../src/pipeline/testTargets.js';
import { prepareContext } from '../src/pipeline/context.js';
import { validate } from '../src/pipeline/validate.js';
import { packageCacheVolume } from '../src/sandbox/environments/environment.js';
import { createDockerSandbox } from '../src/sandbox/index.js';
import { isNotFound } from '../src/sandbox/docker.js';
import { git as runGit } from '../src/repo/gitExec.js';
import { isSwtError } from '../src/util/errors.js';
import { APP_WARM_POOL } from '../src/settings/index.js';
import type { RepoState, Sandbox } from '../src/sandbox/types.js';

const ms = (n: number) => `${(n / 1000).toFixed(2)}s`;
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

interface Row {
  name: string;
  /** Environment built with an empty package cache. */
  coldEmptyMs: number;
  /** Environment built again with the package cache the first build filled. */
  coldWarmMs: number;
  warmMs: number;
  validateMs: number;
  /** The same validation with confirmation off (confirm: 0). */
  validateNoConfirmMs: number;
  /** Each interleaved pair, back to back with a sample of the floor (their order rotates). */
  pairs: Array<{ on: number; off: number; floor: number; reran: number }>;
  /** The floor, base and head side by side (as a validation runs them), each a sandbox run. */
  floorMs: number;
  /** The command as a `docker exec` in a running session on each side, side by side (the floor before). */
  floorExecMs: number;
  /** The same two execs one after the other. */
  floorSequentialMs: number;
  /** The machine's 1-minute load average as the instance's validations began and as its floor ended: every figure moves with it. */
  load?: [number, number];
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const v = await f();
  return [v, performance.now() - t];
}

/**
 * The floor: the harness's own command, once per side, base and head side by side, as a validation
 * runs its two sides: each a sandbox run, so through the same path as a validation's first command
 * (a warm pool's started container, the state's overlay and the command on its waiting process's
 * stdin, the reports back on stdout), without the harness's own work (planning, rounds, reruns,
 * parsing, classifying). Other containers run it first, so the page cache is as warm as the
 * validation's; the timed ones start with nothing of that run (a jest cache in /tmp, a compiled
 * test, .pyc files), as a validation's containers do. `exec` / `sequential`: the command as a
 * `docker exec` in a running session, side by side and one after the other (the floors before, kept
 * for comparison).
 */
function floorOf(sandbox: Sandbox, ctx: Awaited<ReturnType<typeof prepareContext>>, states: RepoState[], files: string[]) {
  const command = buildTestCommand(ctx.runner, files, DEFAULT_OUT_DIR);
  const execCommand = `mkdir -p /tmp/swt-out && ${buildTestCommand(ctx.runner, files, '/tmp/swt-out')}`;
  const run = async (state: RepoState) => {
    const r = await sandbox.run({ env: ctx.env, repo: ctx.repo, state, command });
    if (r.timedOut || r.exitCode === null) throw new Error(`the floor's run did not finish (${r.timedOut ? 'timed out' : 'killed'}): ${r.output.slice(-300)}`);
  };
  const inSessions = async (f: (sessions: Array<Awaited<ReturnType<Sandbox['openSession']>>>) => Promise<number>) => {
    await sandbox.warmed?.();
    const sessions = await Promise.all(states.map((state) => sandbox.openSession({ env: ctx.env, repo: ctx.repo, state })));
    try {
      return await f(sessions);
    } finally {
      await Promise.all(sessions.map((x) => x.close()));
    }
  };
  return {
    /** Warm-up: each side once, untimed. */
    warm: async () => {
      for (const state of states) await run(state);
    },
    /** One sample: both sides' runs side by side. */
    sideBySide: async () => {
      // As before each validation: the last one's used containers removed and the pool made up, not
      // going on beside the timed runs.
      await sandbox.warmed?.();
      return (await timed(() => Promise.all(states.map(run))))[1];
    },
    /** The command as an exec in a running session, side by side: each session ran nothing before. */
    exec: () => inSessions(async (sessions) => (await timed(() => Promise.all(sessions.map((x) => x.exec(execCommand)))))[1]),
    sequential: () =>
      inSessions(async (sessions) => {
        let one = 0;
        for (const x of sessions) one += (await timed(() => x.exec(execCommand)))[1];
        return one;
      }),
  };
}

/**
 * Cold builds with an empty and with a warm package cache, interleaved over `rounds` (the best of
 * each kept), so a machine that slows down or speeds up meanwhile touches both columns alike.
 */
async function coldBuilds(sandbox: Sandbox, docker: Docker, name: string, input: Parameters<typeof prepareContext>[1], rounds: number) {
  const volume = await packageCacheVolume({ repo: input.repo });
  let coldEmptyMs = Infinity;
  let coldWarmMs = Infinity;
  for (let i = 0; i < rounds; i++) {
    const built = await prepareContext(sandbox, input);
    await docker.getImage(built.env.image).remove({ force: true });
    // The last build's upkeep (eviction, cache pruning, its install container's removal) goes on
    // after it returns; it is not the next build's time, and the volume is in use until it is done.
    await sandbox.upkeep?.();
    // An instance that installs nothing has no volume (404); any other failure would leave the cache warm.
    await docker
      .getVolume(volume)
      .remove()
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    log(`${name}: cold environment build, empty package cache (${i + 1}/${rounds})`);
    const [emptied, empty] = await timed(() => prepareContext(sandbox, input));
    await docker.getImage(emptied.env.image).remove({ force: true });
    await sandbox.upkeep?.();
    log(`${name}: cold environment build, warm package cache (${i + 1}/${rounds})`);
    const [, warm] = await timed(() => prepareContext(sandbox, input));
    coldEmptyMs = Math.min(coldEmptyMs, empty);
    coldWarmMs = Math.min(coldWarmMs, warm);
  }
  return { coldEmptyMs, coldWarmMs };
}

/** How long an instance's pairs may take before it gets no more than SWT_BENCH_PAIRS (the quick ones get up to three times as many). */
const PAIRS_BUDGET_MS = 60_000;
/** The standard error the medians of the pairs' ratios are held to: an instance whose pairs spread wider gets more (up to three times as many). */
const MEDIAN_SE = 0.02;

async function benchInstance(sandbox: Sandbox, docker: Docker, inst: BenchProject, opts: { rounds: number; pairs: number; envOnly: boolean; validationOnly: boolean }): Promise<Row> {
  const repo = inst.repo;
  const input = { repo, base: inst.base, image: inst.image, install: inst.install, testCmd: inst.testCmd };
  const { coldEmptyMs, coldWarmMs } = opts.validationOnly ? { coldEmptyMs: NaN, coldWarmMs: NaN } : await coldBuilds(sandbox, docker, inst.name, input, opts.rounds);
  const [ctx, warmMs] = await timed(() => prepareContext(sandbox, input));
  // A build's upkeep (eviction, cache pruning, its install container's removal) goes on after it
  // returns: not while the validations below are timed.
  await sandbox.upkeep?.();
  if (opts.envOnly) return { name: inst.name, coldEmptyMs, coldWarmMs, warmMs, validateMs: NaN, validateNoConfirmMs: NaN, pairs: [], floorMs: NaN, floorExecMs: NaN, floorSequentialMs: NaN };
  const { files } = await testTargetsOfPatch(repo, inst.base, inst.testPatch);
  const baseState = { rev: ctx.base, patches: [inst.testPatch] };
  const headState = { rev: ctx.base, patches: [inst.patch, inst.testPatch] };
  log(`${inst.name}: validation`);
  // Timed on a cached environment: another process's cold builds of the same project may remove
  // the image meanwhile; then it is built again, untimed, and the validation run again.
  const validated = async (confirm?: number): Promise<{ ms: number; reran: number }> => {
    for (let attempt = 0; ; attempt++) {
      await prepareContext(sandbox, input);
      // As between two events of the App: the pool has made up what the last validation took.
      await sandbox.warmed?.();
      try {
        const [result, ms] = await timed(() => validate(sandbox, { ...input, fixPatch: inst.patch, testPatch: inst.testPatch, ...(confirm === undefined ? {} : { confirm }) }));
        // The moving tests no round confirmed reran in new processes: what makes one validation with confirmation cost more than another.
        const c = result.confirmation;
        return { ms, reran: c ? c.tests.length - (c.inProcess?.length ?? 0) : 0 };
      } catch (e) {
        if (attempt >= 2 || !isSwtError(e, 'IMAGE_UNAVAILABLE')) throw e;
        log(`${inst.name}: the environment image went away (${(e as Error).message}); again`);
      }
    }
  };
  const loadFrom = Number(loadavg()[0].toFixed(1));
  await validated(); // first run warms the page cache
  const floor = floorOf(sandbox, ctx, [baseState, headState], files);
  await floor.warm();
  // With and without confirmation and a sample of the floor, back to back, `pairs` times: a machine
  // that slows down for a while (another VM's steal) touches all three. Their order rotates through
  // the six, so none always follows another.
  let validateMs = Infinity;
  let validateNoConfirmMs = Infinity;
  let floorMs = Infinity;
  const pairs: Row['pairs'] = [];
  const ORDERS = [['on', 'off', 'floor'], ['off', 'floor', 'on'], ['floor', 'on', 'off'], ['off', 'on', 'floor'], ['on', 'floor', 'off'], ['floor', 'off', 'on']] as const;
  const pairsFrom = performance.now();
  // Past SWT_BENCH_PAIRS: more while they are cheap, or while their ratios spread too wide for the
  // medians to be held to MEDIAN_SE (path-to-regexp: one pair's on ÷ off 0.79–1.32 at 11 pairs).
  const spread = () => Math.max(medianStandardError(pairs.map((p) => p.on / p.off)), medianStandardError(pairs.map((p) => p.on / p.floor)));
  const morePairs = (i: number) => i < opts.pairs || (i < 3 * opts.pairs && (performance.now() - pairsFrom < PAIRS_BUDGET_MS || spread() > MEDIAN_SE));
  for (let i = 0; morePairs(i); i++) {
    log(`${inst.name}: validation with and without confirmation, and the floor (${i + 1}/${opts.pairs}${i >= opts.pairs ? ', more: cheap, or spread wide' : ''})`);
    const t = { on: NaN, off: NaN, floor: NaN, reran: 0 };
    for (const what of ORDERS[i % ORDERS.length]) {
      if (what === 'floor') t.floor = await floor.sideBySide();
      else if (what === 'off') t.off = (await validated(0)).ms;
      else ({ ms: t.on, reran: t.reran } = await validated());
    }
    validateMs = Math.min(validateMs, t.on);
    validateNoConfirmMs = Math.min(validateNoConfirmMs, t.off);
    floorMs = Math.min(floorMs, t.floor);
    pairs.push(t);
  }
  // The command as execs, side by side and one after the other (the floors before), for comparison: best of three.
  let floorExecMs = Infinity;
  let floorSequentialMs = Infinity;
  for (let i = 0; i < 3; i++) {
    floorExecMs = Math.min(floorExecMs, await floor.exec());
    floorSequentialMs = Math.min(floorSequentialMs, await floor.sequential());
  }
  const load: [number, number] = [loadFrom, Number(loadavg()[0].toFixed(1))];
  return { name: inst.name, coldEmptyMs, coldWarmMs, warmMs, validateMs, validateNoConfirmMs, pairs, floorMs, floorExecMs, floorSequentialMs, load };
}

/**
 * a ÷ b (on ÷ off, or a validation ÷ the floor) from the interleaved pairs: the median over pairs of (Σ a) ÷ (Σ b) across `rows`.
 * Each pair ran back to back, so a machine that slows down for a while (another VM's load: steal
 * time) touches both of it; the best of each alone turns on the one luckiest run of each.
 */
function pairedRatio(rows: readonly Row[], a: 'on' | 'off' = 'on', b: 'off' | 'floor' = 'off'): number {
  const n = Math.min(...rows.map((r) => r.pairs.length));
  if (!Number.isFinite(n) || n === 0) return NaN;
  const q = Array.from({ length: n }, (_, i) => rows.reduce((s, r) => s + r.pairs[i][a], 0) / rows.reduce((s, r) => s + r.pairs[i][b], 0)).sort((x, y) => x - y);
  return n % 2 ? q[n >> 1] : (q[n / 2 - 1] + q[n / 2]) / 2;
}

/** A synthetic Python repo: `files` modules of padding plus one test file with `tests` tests, one of them F→P. */
async function syntheticRepo(root: string, files: number, tests: number) {
  const dir = join(root, `synth-${files}-${tests}`);
  await mkdir(join(dir, 'pkg'), { recursive: true });
  await mkdir(join(dir, 'tests'), { recursive: true });
  for (let i = 0; i < files; i++) await writeFile(join(dir, 'pkg', `m${i}.py`), `VALUE_${i} = ${i}\n`.repeat(20));
  await writeFile(join(dir, 'pkg', '__init__.py'), 'def answer():\n    return 41\n');
  await writeFile(join(dir, 'tests', '__init__.py'), '');
  const git = (...a: string[]) => runGit(dir, ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a]);
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'base');
  const body = ['from pkg import answer', '', 'def test_answer():', '    assert answer() == 42', ''];
  for (let i = 0; i < tests - 1; i++) body.push(`def test_other_${i}():`, `    assert ${i} == ${i}`, '');
  const testPatch = [
    'diff --git a/tests/test_bench.py b/tests/test_bench.py',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/tests/test_bench.py',
    `@@ -0,0 +1,${body.length} @@`,
    ...body.map((l) => `+${l}`),
    '',
  ].join('\n');
  const fixPatch = [
    'diff --git a/pkg/__init__.py b/pkg/__init__.py',
    '--- a/pkg/__init__.py',
    '+++ b/pkg/__init__.py',
    '@@ -1,2 +1,2 @@',
    ' def answer():',
    '-    return 41',
    '+    return 42',
    '',
  ].join('\n');
  return { dir, base: (await git('rev-parse', 'HEAD')).trim(), testPatch, fixPatch };
}

interface ScalingRow {
  files: number;
  tests: number;
  envMs: number;
  validateMs: number;
  classified: number;
  success: boolean;
}

async function scaling(sandbox: Sandbox): Promise<ScalingRow[]> {
  const root = await mkdtemp(join(tmpdir(), 'swt-bench-'));
  const rows: ScalingRow[] = [];
  try {
    for (const [files, tests] of [[10, 1], [1000, 1], [10000, 1], [10, 100], [10, 1000]] as const) {
      log(`scaling: ${files} files, ${tests} tests`);
      const r = await syntheticRepo(root, files, tests);
      const input = { repo: r.dir, base: r.base, fixPatch: r.fixPatch, testPatch: r.testPatch, image: 'python:3.11', install: '', testCmd: 'python3 -m pytest -p no:cacheprovider {files}' };
      const [, envMs] = await timed(() => prepareContext(sandbox, input));
      await validate(sandbox, input);
      const [v, t] = await timed(() => validate(sandbox, input));
      rows.push({ files, tests, envMs, validateMs: t, classified: v.tests.length, success: v.success });
    }
  } finally {
    await sandbox.close?.();
    await rm(root, { recursive: true, force: true });
  }
  return rows;
}

async function main() {
  // The machine's load (1, 5, 15 min) around the run: ratios are measured side by side, figures are not.
  const loadBefore = loadavg().map((l) => Number(l.toFixed(1)));
  const examples = resolve(process.env.SWT_EXAMPLES_DIR ?? join(process.cwd(), '..', 'shared', 'examples'));
  const file = join(examples, 'instances.jsonl');
  if (!existsSync(file)) throw new Error(`examples not found at ${examples} (set SWT_EXAMPLES_DIR)`);
  // `--env-only`: the environment builds alone; other arguments pick instances by id.
  const args = process.argv.slice(2);
  const envOnly = args.includes('--env-only');
  const validationOnly = args.includes('--validation-only');
  const only = args.filter((a) => !a.startsWith('--'));
  const rounds = Math.max(1, Number(process.env.SWT_BENCH_ROUNDS) || 2);
  // A validation costs seconds where a cold build costs minutes, and one pair's ratio swings by a
  // tenth or more on a VM whose CPU others steal: the median needs pairs in number.
  const pairs = Math.max(1, Number(process.env.SWT_BENCH_PAIRS) || 11);
  const instances = args.includes('--projects-only') ? [] : parseInstances(readFileSync(file, 'utf8'), file).filter((i) => only.length === 0 || only.includes(i.instance_id));
  // The App's sandbox: a warm pool of idle run containers per environment in use (settings.ts).
  const sandbox = await createDockerSandbox({ warmPool: APP_WARM_POOL, egress: { hosts: DEFAULT_EGRESS_HOSTS.filter((h) => !AIR_GAPPED_HOSTS.includes(h)) } });
  const docker = new Docker();
  const rows: Row[] = [];
  const root = await mkdtemp(join(tmpdir(), 'swt-bench-eco-'));
  let deps: DepTreeRow[] = [];
  /** Compiled projects' targets: validation ÷ cold build, their build kept warm in the environment. */
  const buildTargets = new Map<string, number>();
  try {
    // The examples, then one project per ecosystem they leave out (`--examples-only` skips those).
    const projects: BenchProject[] = [];
    for (const i of instances) {
      projects.push({ name: i.instance_id, repo: await resolveRepoPath(join(examples, 'repos'), i.repo), base: i.base_commit, image: i.image, install: i.install, testCmd: i.test_cmd, patch: i.patch, testPatch: i.test_patch });
    }
    if (!args.includes('--examples-only')) projects.push(...(await ecosystemProjects(root, args.filter((a) => a.startsWith('--project=')).map((a) => a.slice('--project='.length)))));
    for (const p of projects) if (p.warmBuildTarget !== undefined) buildTargets.set(p.name, p.warmBuildTarget);
    // `--deps-only`: the dependency tree alone.
    for (const p of args.includes('--deps-only') ? [] : projects) {
      rows.push(await benchInstance(sandbox, docker, p, { rounds, pairs, envOnly, validationOnly }));
      log(`row ${JSON.stringify(rows[rows.length - 1])}`);
    }
    if (!args.includes('--examples-only') && !args.includes('--no-deps') && !validationOnly) deps = await depTreeScaling(sandbox, docker, root, (process.env.SWT_BENCH_DEP_SIZES ?? '10,100,1000').split(',').map(Number), log);
  } finally {
    await sandbox.close?.();
    await rm(root, { recursive: true, force: true });
  }

  const out: string[] = [];
  if (!validationOnly) {
    out.push(`## Environment builds (install through the egress proxy; best of ${rounds}, interleaved)`, '');
    out.push('| instance | cold, empty package cache | cold, warm package cache | warm ÷ empty (target ≤ 0.4 when it installs) | cached env |', '|---|---|---|---|---|');
    for (const r of rows) out.push(`| ${r.name} | ${ms(r.coldEmptyMs)} | ${ms(r.coldWarmMs)} | ${(r.coldWarmMs / r.coldEmptyMs).toFixed(2)} | ${ms(r.warmMs)} |`);
  }
  if (!envOnly) {
    out.push('', '## Validation (real containers, warm page cache)', '');
    // The floor runs each side once, side by side: it is set against the validation that does too
    // (confirmation off), and against the default validation (confirmation on).
    // Best ÷ best, and the median of each pair's ratio to the floor sampled beside it (the target's).
    out.push(
      '| instance | validation, confirm 0 / on (best) | floor: base and head side by side, best (as execs: side by side / one after the other) | off ÷ floor, best / pairs | on ÷ floor, best / pairs | target ≤ 1.2×floor (on, pairs) |',
      '|---|---|---|---|---|---|',
    );
    for (const r of rows) {
      const on = pairedRatio([r], 'on', 'floor');
      out.push(`| ${r.name} | ${ms(r.validateNoConfirmMs)} / ${ms(r.validateMs)} | ${ms(r.floorMs)} (${ms(r.floorExecMs)} / ${ms(r.floorSequentialMs)}) | ${(r.validateNoConfirmMs / r.floorMs).toFixed(2)} / ${pairedRatio([r], 'off', 'floor').toFixed(2)} | ${(r.validateMs / r.floorMs).toFixed(2)} / ${on.toFixed(2)} | ${on <= 1.2 ? 'met' : 'MISSED'} |`);
    }
    out.push('', `## Confirmation of the tests that move (${pairs} pairs back to back, which goes first alternating)`, '');
    out.push('| instance | validation, confirmation on (default), best | off (confirm 0), best | best ÷ best | on ÷ off, median of the pairs | target ≤ 1.1 (pairs) | load (1 min) |', '|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const q = pairedRatio([r]);
      out.push(`| ${r.name} | ${ms(r.validateMs)} | ${ms(r.validateNoConfirmMs)} | ${(r.validateMs / r.validateNoConfirmMs).toFixed(2)} | ${q.toFixed(2)} | ${q <= 1.1 ? 'met' : 'MISSED'} | ${r.load ? r.load.join('–') : ''} |`);
    }
  }
  // Compiled projects: a validation on the build the environment keeps, against the build from nothing.
  const built = envOnly || validationOnly ? [] : rows.filter((r) => buildTargets.has(r.name));
  if (built.length) {
    out.push('', '## Builds kept warm (validation after a one-file fix ÷ cold environment build, empty cache)', '');
    out.push('| instance | cold build, empty cache | validation, confirm on / off (best) | on ÷ cold | off ÷ cold | target (on) |', '|---|---|---|---|---|---|');
    for (const r of built) {
      const target = buildTargets.get(r.name)!;
      const on = r.validateMs / r.coldEmptyMs;
      out.push(`| ${r.name} | ${ms(r.coldEmptyMs)} | ${ms(r.validateMs)} / ${ms(r.validateNoConfirmMs)} | ${on.toFixed(2)} | ${(r.validateNoConfirmMs / r.coldEmptyMs).toFixed(2)} | ≤ ${target}: ${on <= target ? 'met' : 'MISSED'} |`);
    }
  }
  if (deps.length) {
    out.push('', '## Dependency tree (Node, npm ci, every package from the warm package cache only)', '');
    out.push('| packages | cold environment | one added, npm ci: from nothing / nearest layer | one added, npm install: from nothing / nearest layer |', '|---|---|---|---|');
    const pair = (d: DepTreeRow, install: string) => {
      const c = d.oneChanged.find((o) => o.install === install);
      return c ? `${ms(c.fromNothingMs)} / ${ms(c.fromNearestMs)} (${(c.fromNearestMs / c.fromNothingMs).toFixed(2)})` : '–';
    };
    for (const d of deps) out.push(`| ${d.packages} | ${ms(d.coldWarmCacheMs)} | ${pair(d, 'npm ci')} | ${pair(d, 'npm install')} |`);
  }
  const scaled = envOnly || validationOnly || args.includes('--deps-only') || args.includes('--no-scaling') ? [] : await scaling(sandbox);
  if (scaled.length) {
    out.push('', '## Scaling (synthetic Python repos, warm environment)', '');
    out.push('| files in repo | tests | env build (first use of the repo) | validation (warm) | tests classified | S |', '|---|---|---|---|---|---|');
    for (const s of scaled) out.push(`| ${s.files} | ${s.tests} | ${ms(s.envMs)} | ${ms(s.validateMs)} | ${s.classified} | ${s.success ? 'yes' : 'no'} |`);
  }
  const round = (n: number) => (Number.isFinite(n) ? Math.round(n) : null);
  const two = (n: number) => (Number.isFinite(n) ? Number(n.toFixed(2)) : null);
  const ratio = (a: number, b: number) => two(a / b);
  const json = {
    rounds,
    pairs,
    instances: rows.map((r) => ({
      name: r.name,
      coldEmptyCacheMs: round(r.coldEmptyMs),
      coldWarmCacheMs: round(r.coldWarmMs),
      emptyOverWarm: ratio(r.coldEmptyMs, r.coldWarmMs),
      warmOverEmpty: ratio(r.coldWarmMs, r.coldEmptyMs),
      cachedEnvMs: round(r.warmMs),
      validateMs: round(r.validateMs),
      validateNoConfirmMs: round(r.validateNoConfirmMs),
      confirmOverOff: ratio(r.validateMs, r.validateNoConfirmMs),
      confirmOverOffPaired: two(pairedRatio([r])),
      pairs: r.pairs.map((p) => ({ on: round(p.on), off: round(p.off), floor: round(p.floor), reran: p.reran })),
      floorMs: round(r.floorMs),
      floorExecMs: round(r.floorExecMs),
      floorSequentialMs: round(r.floorSequentialMs),
      validateOverFloor: ratio(r.validateNoConfirmMs, r.floorMs),
      validateConfirmOverFloor: ratio(r.validateMs, r.floorMs),
      validateOverFloorPaired: two(pairedRatio([r], 'off', 'floor')),
      validateConfirmOverFloorPaired: two(pairedRatio([r], 'on', 'floor')),
      ...(r.load ? { load: r.load } : {}),
    })),
    warmBuild: built.map((r) => ({ name: r.name, target: buildTargets.get(r.name), validateOverCold: ratio(r.validateMs, r.coldEmptyMs), validateNoConfirmOverCold: ratio(r.validateNoConfirmMs, r.coldEmptyMs) })),
    scaling: scaled.map((s) => ({ ...s, envMs: round(s.envMs), validateMs: round(s.validateMs) })),
    dependencyTree: deps.map((d) => ({
      packages: d.packages,
      coldWarmCacheMs: round(d.coldWarmCacheMs),
      oneAdded: d.oneChanged.map((o) => ({ install: o.install, fromNothingMs: round(o.fromNothingMs), fromNearestMs: round(o.fromNearestMs), nearestOverNothing: ratio(o.fromNearestMs, o.fromNothingMs) })),
    })),
    load: { before: loadBefore, after: loadavg().map((l) => Number(l.toFixed(1))) },
    // Summed over the instances: validation time with confirmation on (default) and off.
    confirmation: {
      onMs: round(rows.reduce((a, r) => a + r.validateMs, 0)),
      offMs: round(rows.reduce((a, r) => a + r.validateNoConfirmMs, 0)),
      onOverOff: ratio(rows.reduce((a, r) => a + r.validateMs, 0), rows.reduce((a, r) => a + r.validateNoConfirmMs, 0)),
      onOverOffPaired: two(pairedRatio(rows)),
    },
  };
  process.stdout.write(`${out.join('\n')}\n${JSON.stringify(json)}\n`);
}

main().catch((e) => {
  process.stderr.write(`bench:harness failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
