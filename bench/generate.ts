/**
 * bench:generate — what each strategy's tests are worth with the configured model (by default the
 * local 1.5B, temperature 0, a fixed seed, output capped): per strategy, on the bundled demo
 * fixtures (reproduce, then validate the fix) and the shared example instances (`swt eval
 * --predictions generate`): S (the test fails on base and passes on the fix), W (a test came out),
 * F2P, false reproductions (claimed reproduced, not S), tokens and time per instance.
 * SWT_BENCH_STRATEGIES (snippet,zero-shot-plus), SWT_BENCH_SETS (fixtures,examples). Markdown on
 * stdout, JSON on the last line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runDemo } from '../src/demo/demo.js';
import { FIXTURE_NAMES, parseIssueMarkdown } from '../src/demo/fixtureRepos.js';
import type { StrategyName } from '../src/generation/candidate.js';
import { parseInstances } from '../src/eval/instances.js';
import { runEval } from '../src/eval/runEval.js';
import { reproduceIssue } from '../src/pipeline/reproduce.js';
import { createDockerSandbox } from '../src/sandbox/index.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

interface Row {
  set: string;
  instance: string;
  strategy: string;
  reproduced: boolean;
  /** Proven: fails on base, passes on the fix. */
  S: boolean;
  W: boolean;
  F2P: boolean;
  tokens: number;
  wallMs: number;
  reason: string;
}

async function fixtureRows(sandbox: ReturnType<typeof createDockerSandbox>, strategy: StrategyName): Promise<Row[]> {
  const rows: Row[] = [];
  for (const fixture of FIXTURE_NAMES) {
    log(`${strategy}: fixture ${fixture}`);
    const started = Date.now();
    const r = await runDemo(sandbox, { fixture, strategy });
    const u = r.reproduction.usage;
    const f2p = Boolean(r.validation?.tests.some((t) => t.transition === 'F2P'));
    rows.push({ set: 'fixtures', instance: fixture, strategy, reproduced: r.reproduction.status === 'reproduced', S: Boolean(r.validation?.success), W: Boolean(r.reproduction.testPatch.trim()), F2P: f2p, tokens: u.promptTokens + u.completionTokens, wallMs: Date.now() - started, reason: r.reproduction.reason.slice(0, 160) });
  }
  return rows;
}

async function exampleRows(sandbox: ReturnType<typeof createDockerSandbox>, strategy: StrategyName, root: string): Promise<Row[]> {
  const examples = resolve(process.env.SWT_EXAMPLES_DIR ?? join(process.cwd(), '..', 'shared', 'examples'));
  const file = join(examples, 'instances.jsonl');
  if (!existsSync(file)) {
    log(`no examples at ${examples}: skipped (set SWT_EXAMPLES_DIR)`);
    return [];
  }
  const instances = parseInstances(readFileSync(file, 'utf8'), file);
  const { results } = await runEval(sandbox, {
    instances,
    repos: join(examples, 'repos'),
    out: join(root, strategy),
    concurrency: 1,
    fresh: true,
    source: {
      kind: 'generate',
      label: strategy,
      generate: async (inst, repoPath) => {
        log(`${strategy}: ${inst.instance_id}`);
        const rep = await reproduceIssue(sandbox, { repo: repoPath, base: inst.base_commit, image: inst.image, install: inst.install, testCmd: inst.test_cmd, issue: parseIssueMarkdown(inst.problem_statement), generation: { strategy } });
        return { modelPatch: rep.testPatch, reproduction: { strategy: rep.strategy, status: rep.status, reason: rep.reason, model: rep.model?.name, usage: rep.usage, answers: rep.evidence?.answers ?? [] } };
      },
    },
  });
  return results.map((r) => ({
    set: 'examples',
    instance: r.instance_id,
    strategy,
    reproduced: r.reproduction?.status === 'reproduced',
    S: r.success,
    W: r.applied,
    F2P: r.tests.some((t) => t.transition === 'F2P'),
    tokens: (r.reproduction?.usage?.promptTokens ?? 0) + (r.reproduction?.usage?.completionTokens ?? 0),
    wallMs: r.durationMs,
    reason: (r.error ?? r.reproduction?.reason ?? '').slice(0, 160),
  }));
}

function summary(rows: Row[]) {
  const n = rows.length || 1;
  const pct = (k: (r: Row) => boolean) => Math.round((1000 * rows.filter(k).length) / n) / 10;
  return { instances: rows.length, S: pct((r) => r.S), W: pct((r) => r.W), F2P: pct((r) => r.F2P), falseReproductions: rows.filter((r) => r.reproduced && !r.S).length, tokensPerInstance: Math.round(rows.reduce((a, r) => a + r.tokens, 0) / n), secondsPerInstance: Math.round(rows.reduce((a, r) => a + r.wallMs, 0) / n / 100) / 10 };
}

async function main() {
  process.env.SWT_LLM_MODEL ??= 'local:qwen2.5-coder-1.5b';
  process.env.SWT_LLM_TEMPERATURE ??= '0';
  process.env.SWT_LLM_SEED ??= '1';
  process.env.SWT_LLM_MAX_OUTPUT_TOKENS ??= '512';
  const strategies = (process.env.SWT_BENCH_STRATEGIES ?? 'snippet,zero-shot-plus').split(',').map((s) => s.trim()) as StrategyName[];
  const sets = (process.env.SWT_BENCH_SETS ?? 'fixtures,examples').split(',').map((s) => s.trim());
  const sandbox = createDockerSandbox();
  const root = await mkdtemp(join(tmpdir(), 'swt-bench-generate-'));
  const rows: Row[] = [];
  const loadAtStart = loadavg()[0]!.toFixed(1);
  try {
    for (const strategy of strategies) {
      if (sets.includes('fixtures')) rows.push(...(await fixtureRows(sandbox, strategy)));
      if (sets.includes('examples')) rows.push(...(await exampleRows(sandbox, strategy, root)));
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const perStrategy = Object.fromEntries(strategies.map((s) => [s, summary(rows.filter((r) => r.strategy === s))]));
  console.log(`# bench:generate (${process.env.SWT_LLM_MODEL}, temperature ${process.env.SWT_LLM_TEMPERATURE}, seed ${process.env.SWT_LLM_SEED}, ≤${process.env.SWT_LLM_MAX_OUTPUT_TOKENS} output tokens; load ${loadAtStart})\n`);
  console.log('| strategy | set | instance | reproduced | S | W | F2P | tokens | s | reason |\n|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.strategy} | ${r.set} | ${r.instance} | ${r.reproduced ? 'yes' : 'no'} | ${r.S ? '✓' : ''} | ${r.W ? '✓' : ''} | ${r.F2P ? '✓' : ''} | ${r.tokens} | ${(r.wallMs / 1000).toFixed(0)} | ${r.reason.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
  console.log('');
  for (const [s, v] of Object.entries(perStrategy)) console.log(`- ${s}: ${JSON.stringify(v)}`);
  console.log(JSON.stringify({ model: process.env.SWT_LLM_MODEL, perStrategy, rows }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
