/**
 * bench:generate — how well each strategy writes reproducing tests with the configured model, on a
 * fixed subset of real instances (JS/TS, Python and Go; the project's own and ../shared/examples),
 * with the `snippet` strategy (no model) on the same instances beside it. Per strategy: S, W, F2P
 * (paper Table 2), the reproductions the App would post and how many of those are false (the test
 * also fails on the real fix), tokens and seconds per instance, and each instance's outcome with
 * its reason. The model comes from the environment as for the App (SWT_LLM_MODEL, OPENAI_BASE_URL
 * …), by default the built-in local 1.5B; temperature 0, seed 1 and at most 512 answer tokens
 * unless SWT_LLM_TEMPERATURE, SWT_LLM_SEED and SWT_LLM_MAX_OUTPUT_TOKENS say otherwise, so a run repeats;
 * with the local model, 30 minutes of wall time per instance unless SWT_BUDGET_WALL_MS says otherwise.
 *
 *   SWT_BENCH_STRATEGIES  strategies after snippet (default zero-shot-plus,libro,ensemble), each with
 *                         techniques after a colon: `zero-shot-plus:vote=3`, `ensemble:fix=demote:vote=3`
 *                         (src/generation/techniques.ts: feedback=N, vote=N[@T], fix=off|demote|confirm|require, libro=judge|vote)
 *   SWT_BENCH_INSTANCES   instance ids (default the fixed subset below)
 *   SWT_BENCH_LIMIT       only the first N of them (a short run)
 *   SWT_BENCH_KEEP        a directory to keep the eval rows in (each with every raw answer); else they go with the run
 *
 * Markdown on stdout, JSON on the last line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generatedTests } from '../src/eval/generated.js';
import { parseInstances, type Instance } from '../src/eval/instances.js';
import type { InstanceResult } from '../src/eval/report.js';
import { runEval } from '../src/eval/runEval.js';
import { STRATEGIES, type StrategyName } from '../src/generation/index.js';
import { createDockerSandbox } from '../src/sandbox/index.js';
import { parseTechniques } from '../src/generation/techniques.js';
import { outcomeRow, strategyFigures } from './generateFigures.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

/** The fixed subset: small environments, issues in the reporters' own words, three languages. */
export const SUBSET = [
  'andialbrecht__sqlparse-826',
  'python-humanize__humanize-823ad60',
  'python-humanize__humanize-a47a89e',
  'Masterminds__semver-b1bb761',
  'Masterminds__semver-ee95afb',
  'pillarjs__send-24b4af2',
  'jshttp__cookie-248',
  'pillarjs__path-to-regexp-261',
  'npm__node-semver-cc6fde2',
  'sindresorhus__camelcase-79b9a64',
  'jsdom__cssstyle-f1bfdf7',
  'sveltejs__devalue-127d655',
];

interface InstanceSet {
  instances: Instance[];
  repos: string;
}

/** The project's own instances and, where present, ../shared/examples, each with its bundles. */
function instanceSets(wanted: readonly string[]): InstanceSet[] {
  const dirs = [join(process.cwd(), 'fixtures', 'instances'), resolve(process.env.SWT_EXAMPLES_DIR ?? join(process.cwd(), '..', 'shared', 'examples'))];
  const sets: InstanceSet[] = [];
  for (const dir of dirs) {
    const file = join(dir, 'instances.jsonl');
    if (!existsSync(file)) continue;
    const instances = parseInstances(readFileSync(file, 'utf8'), file).filter((i) => wanted.includes(i.instance_id));
    if (instances.length) sets.push({ instances, repos: join(dir, 'repos') });
  }
  const found = new Set(sets.flatMap((s) => s.instances.map((i) => i.instance_id)));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length) log(`not found, left out: ${missing.join(', ')}`);
  return sets;
}

async function main() {
  if (!process.env.OPENAI_BASE_URL && !process.env.OPENAI_API_KEY) process.env.SWT_LLM_MODEL ??= 'local:qwen2.5-coder-1.5b';
  process.env.SWT_LLM_TEMPERATURE ??= '0';
  process.env.SWT_LLM_SEED ??= '1';
  process.env.SWT_LLM_MAX_OUTPUT_TOKENS ??= '512';
  // The App's 10-minute wall budget per issue is less than one sample takes on a loaded shared machine
  // (a 2,500-token prompt and 512 answer tokens ran 9–11 min at load 20–40): the bench gives each instance 30.
  if (process.env.SWT_LLM_MODEL?.startsWith('local:')) process.env.SWT_BUDGET_WALL_MS ??= '1800000';
  const strategies = (process.env.SWT_BENCH_STRATEGIES ?? 'zero-shot-plus,libro,ensemble').split(',').map((s) => s.trim()).filter(Boolean);
  const nameOf = (entry: string) => entry.split(':')[0]!;
  const unknown = strategies.filter((s) => !STRATEGIES.includes(nameOf(s) as StrategyName));
  if (unknown.length) throw new Error(`unknown strategies: ${unknown.join(', ')} (one of ${STRATEGIES.join(', ')})`);
  const ids = process.env.SWT_BENCH_INSTANCES ? process.env.SWT_BENCH_INSTANCES.split(',').map((s) => s.trim()) : SUBSET;
  const limit = Number(process.env.SWT_BENCH_LIMIT ?? ids.length);
  const sets = instanceSets(ids.slice(0, limit));
  const total = sets.reduce((a, s) => a + s.instances.length, 0);
  if (!total) throw new Error('no instance found (fixtures/instances, ../shared/examples or SWT_EXAMPLES_DIR)');
  const sandbox = createDockerSandbox();
  const keep = process.env.SWT_BENCH_KEEP ? resolve(process.env.SWT_BENCH_KEEP) : undefined;
  if (keep) await mkdir(keep, { recursive: true });
  const root = keep ?? (await mkdtemp(join(tmpdir(), 'swt-bench-generate-')));
  const progress = { step: (m: string) => log(m) };
  const loadAtStart = loadavg()[0]!.toFixed(1);
  try {
    const figures = [];
    const outcomes: string[] = [];
    for (const strategy of ['snippet', ...strategies.filter((s) => s !== 'snippet')]) {
      const rows: InstanceResult[] = [];
      for (const [k, set] of sets.entries()) {
        log(`${strategy}: ${set.instances.length} instances`);
        const techniques = parseTechniques(strategy.split(':').slice(1).join(':'));
        const source = generatedTests(sandbox, { strategy: nameOf(strategy) as StrategyName, ...techniques, ...(strategy === 'snippet' ? { llm: null } : {}) }, progress);
        const outcome = await runEval(sandbox, { instances: set.instances, source, repos: set.repos, out: join(root, `${strategy}-${k}`), concurrency: 1, fresh: true }, progress);
        rows.push(...outcome.results);
      }
      figures.push(strategyFigures(strategy, rows));
      for (const r of rows) outcomes.push(outcomeRow(strategy, r));
    }
    const model = `${process.env.SWT_LLM_MODEL ?? process.env.OPENAI_MODEL ?? '(default)'}, temperature ${process.env.SWT_LLM_TEMPERATURE}, seed ${process.env.SWT_LLM_SEED}, ≤ ${process.env.SWT_LLM_MAX_OUTPUT_TOKENS} answer tokens`;
    const out = [
      `## Reproducing tests written on ${total} real instances (model ${model}, real containers)`,
      '',
      '| strategy | S % | W % | F2P % | posted | false reproductions | stand-in fix: flips / fails (not posted) / none | tokens / instance | s / instance |',
      '|---|---|---|---|---|---|---|---|---|',
      ...figures.map((f) => `| ${f.strategy} | ${f.S} | ${f.W} | ${f.F2P} | ${f.posted} | ${f.falseReproductions} | ${f.fixCheck.flips} / ${f.fixCheck.failsOnFix} / ${f.fixCheck.noFix} | ${f.tokensPerInstance} | ${f.secondsPerInstance} |`),
      '',
      '| strategy | instance | generation | S | tokens (prompt + answer) | s | why |',
      '|---|---|---|---|---|---|---|',
      ...outcomes,
      '',
      `S by instance: ${figures.map((f) => `${f.strategy}: ${f.solved.join(', ') || 'none'}`).join('; ')}.`,
      `Load average (1 min) at the start ${loadAtStart}, at the end ${loadavg()[0]!.toFixed(1)}, on ${availableParallelism()} cores.`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    process.stdout.write(`${JSON.stringify({ model, instances: total, strategies: figures, loadAverage: { start: +loadAtStart, end: +loadavg()[0]!.toFixed(1) } })}\n`);
  } finally {
    if (keep) log(`eval rows kept in ${keep}`);
    else await rm(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench:generate failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
