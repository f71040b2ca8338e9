/**
 * bench:eval — `swt eval` at scale on one machine, measured side by side in one run on the real
 * example instances with the golden tests: instances per minute at concurrency 1 and 2, where the
 * time goes (image builds, installs, test runs, coverage), and what --coverage costs as a ratio.
 * A warm-up pass first builds (or finds) the environment images, so the measured passes compare
 * like with like. Markdown on stdout, JSON on the last line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseInstances } from '../src/eval/instances.js';
import { PHASES } from '../src/eval/phases.js';
import type { EvalReport } from '../src/eval/report.js';
import { runEval } from '../src/eval/runEval.js';
import { createDockerSandbox } from '../src/sandbox/index.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Pass {
  name: string;
  concurrency: number;
  coverage: boolean;
  wallMs: number;
  perMinute: number;
  report: EvalReport;
}

function shares(r: EvalReport): Record<string, number> {
  const total = PHASES.reduce((a, p) => a + r.phases[p], 0) || 1;
  return Object.fromEntries(PHASES.map((p) => [p.replace(/Ms$/, ''), Math.round((1000 * r.phases[p]) / total) / 1000]));
}

async function main() {
  // A cache of coverage counts of our own, so the first --coverage pass counts everything.
  process.env.SWT_CACHE_DIR = await mkdtemp(join(tmpdir(), 'swt-bench-eval-cache-'));
  const examples = resolve(process.env.SWT_EXAMPLES_DIR ?? join(process.cwd(), '..', 'shared', 'examples'));
  const file = join(examples, 'instances.jsonl');
  if (!existsSync(file)) throw new Error(`examples not found at ${examples} (set SWT_EXAMPLES_DIR)`);
  const instances = parseInstances(readFileSync(file, 'utf8'), file);
  const repos = join(examples, 'repos');
  const sandbox = createDockerSandbox();
  const root = await mkdtemp(join(tmpdir(), 'swt-bench-eval-'));
  try {
    const load = () => loadavg()[0]!.toFixed(1);
    const loadAtStart = load();
    const pass = async (name: string, concurrency: number, coverage: boolean): Promise<Pass> => {
      log(`${name}: ${instances.length} instances, concurrency ${concurrency}${coverage ? ', --coverage' : ''}`);
      const started = performance.now();
      const { report } = await runEval(sandbox, { instances, source: { kind: 'gold' }, repos, out: join(root, name), concurrency, coverage, fresh: true });
      const wallMs = performance.now() - started;
      if (report.errors) throw new Error(`${name}: ${report.errors} instance(s) failed`);
      return { name, concurrency, coverage, wallMs, perMinute: (60_000 * instances.length) / wallMs, report };
    };
    const warm = await pass('warm-up', 2, false);
    const c1 = await pass('concurrency 1', 1, false);
    const c2 = await pass('concurrency 2', 2, false);
    const cov1 = await pass('concurrency 1 --coverage', 1, true);
    const cov1warm = await pass('concurrency 1 --coverage, counts cached', 1, true);

    const rows = [c1, c2, cov1, cov1warm].map((p) => {
      const s = shares(p.report);
      const pct = (k: string) => `${Math.round(100 * s[k]!)}%`;
      return `| ${p.name} | ${secs(p.wallMs)} | ${p.perMinute.toFixed(2)} | ${pct('imageBuild')} | ${pct('install')} | ${pct('testRuns')} | ${pct('coverage')} | ${p.report.dC ?? '—'} |`;
    });
    const out = [
      `## swt eval on ${instances.length} example instances (golden tests, real containers)`,
      '',
      `Warm-up (concurrency 2): ${secs(warm.wallMs)}; environment images built ${warm.report.images.built}, reused ${warm.report.images.reused}.`,
      '',
      '| pass | wall | instances/min | image builds | installs | test runs | coverage | ΔC % |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `Concurrency 2 vs 1: ${(c2.perMinute / c1.perMinute).toFixed(2)}× the instances per minute. --coverage costs ${(cov1.wallMs / c1.wallMs).toFixed(2)}× the time of the same pass without it, ${(cov1warm.wallMs / c1.wallMs).toFixed(2)}× when an earlier evaluation left the counts.`,
      'Shares are of the time booked to phases (container time: base and head run side by side).',
      `Load average (1 min) at the start ${loadAtStart}, at the end ${load()}, on ${availableParallelism()} cores.`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    const json = {
      instances: instances.length,
      warmup: { wallMs: Math.round(warm.wallMs), imagesBuilt: warm.report.images.built, imagesReused: warm.report.images.reused },
      instancesPerMinute: { concurrency1: +c1.perMinute.toFixed(3), concurrency2: +c2.perMinute.toFixed(3) },
      concurrencySpeedup: +(c2.perMinute / c1.perMinute).toFixed(3),
      coverageOverhead: +(cov1.wallMs / c1.wallMs).toFixed(3),
      coverageOverheadCached: +(cov1warm.wallMs / c1.wallMs).toFixed(3),
      loadAverage: { start: +loadAtStart, end: +load() },
      shares: { withoutCoverage: shares(c1.report), withCoverage: shares(cov1.report) },
      dC: cov1.report.dC,
    };
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } finally {
    await rm(root, { recursive: true, force: true });
    await rm(process.env.SWT_CACHE_DIR!, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench:eval failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
