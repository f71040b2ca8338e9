/** `swt eval`: an evaluation on SWE-bench style instances, or two finished ones compared. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { parseInstances, parsePredictions } from '../eval/instances.js';
import { generatedTests } from '../eval/generated.js';
import { runEval, type TestSource } from '../eval/runEval.js';
import { defaultConcurrency, thisMachine } from '../eval/concurrency.js';
import { loadRun } from '../eval/loadRun.js';
import type { EvalReport } from '../eval/report.js';
import { compareEvalRuns, renderCompareHtml, renderCompareText } from '../report/compare.js';
import { writeReportHtml } from '../report/write.js';
import { createDockerSandbox } from '../sandbox/index.js';
import { SwtError } from '../util/errors.js';
import { addLimitOptions, countOption, given, limitsFrom, printJson, readText, strategyOption, techniquesOption } from './options.js';
import { terminalProgress } from './progress.js';

/** `swt eval`. */
export function addEvalCommand(program: Command): void {
  addLimitOptions(
    program
      .command('eval')
      .description('evaluate predicted tests on SWE-bench style instances (W, S, F2X, F2P, P2P, and ΔC with --coverage)')
      .option('--instances <file.jsonl>', 'SWE-bench JSONL instances')
      .option('--predictions <gold|empty|generate|file>', 'gold tests, no tests, generated ones, or a predictions file (JSONL or JSON)')
      .option('--repos <dir>', 'directory of <owner>__<name> repositories or .bundle files (default: <instances dir>/repos)')
      .option('--out <dir>', 'where results.jsonl, report.json and report.html go; finished instances there are reused', 'swt-eval-out')
      .addOption(countOption('--concurrency <n>', 'instances at once (default: what the cores and memory allow)'))
      .addOption(countOption('--reruns <n>', 'extra runs per side').default(0))
      .addOption(countOption('--confirm <n>', 'reruns of each test that moves on both sides before it counts; 0 = off (default: the repository .github/swt.yml confirm, else 2)'))
      .option('--coverage', 'also measure change coverage ΔC (extra runs)')
      .option('--no-coverage-cache', 'with --coverage: run every coverage run, even one an earlier evaluation made')
      .option('--fresh', 'start over even when --out holds finished instances of this run')
      .option('--compare <runs...>', 'compare two finished runs (their --out directories) instead of running')
      .addOption(strategyOption().default(undefined))
      .addOption(techniquesOption())
      .option('--json', 'print the summary as one JSON object on the last line of stdout'),
  ).action((o) => (o.compare ? compareCommand(o.compare, resolve(o.out), !!o.json) : evalCommand(o, program.opts().quiet)));
}

/** An evaluation: runs what is not finished in --out, writes the report and prints its summary. */
async function evalCommand(o: Record<string, any>, quiet: boolean): Promise<void> {
  if (!o.instances || !o.predictions) throw new SwtError('BAD_INPUT', 'give --instances and --predictions (or --compare <runA> <runB>)');
  const instances = parseInstances(await readText(o.instances, 'instances'), o.instances);
  const progress = terminalProgress({ quiet });
  const sandbox = await createDockerSandbox();
  const source: TestSource = o.predictions === 'generate' ? generatedTests(sandbox, { strategy: o.strategy, ...o.techniques }, progress) : await testSource(o.predictions);
  const limits = limitsFrom(o);
  const out = resolve(o.out);
  const outcome = await runEval(
    sandbox,
    {
      instances,
      source,
      repos: resolve(o.repos ?? join(dirname(resolve(o.instances)), 'repos')),
      out,
      concurrency: o.concurrency === undefined ? defaultConcurrency(thisMachine(), limits.memoryBytes) : Math.max(1, o.concurrency),
      reruns: o.reruns,
      ...given({ confirm: o.confirm }),
      limits,
      coverage: !!o.coverage,
      coverageCache: o.coverageCache !== false,
      fresh: !!o.fresh,
    },
    progress,
  );
  const { report, resumed } = outcome;
  const page = await writeReportHtml(out, { report, results: outcome.results, title: `swt eval: ${outcome.label}` });
  if (o.json) printJson(report);
  else {
    process.stdout.write(
      `${summaryLine(report)}\n` +
        `environment images: ${report.images.built} built, ${report.images.reused} reused${resumed ? `; ${resumed} instance(s) reused from an earlier run` : ''}\n` +
        `results: ${join(out, 'results.jsonl')}\nreport:  ${page}\n`,
    );
  }
}

async function testSource(predictions: string): Promise<TestSource> {
  if (predictions === 'gold') return { kind: 'gold' };
  if (predictions === 'empty') return { kind: 'empty' };
  return { kind: 'file', predictions: parsePredictions(await readText(predictions, 'predictions'), predictions) };
}

function summaryLine(r: EvalReport): string {
  const dC = r.dC === null ? '' : `  dC ${r.dC}% (S ${r.dC_S ?? '-'}%, not S ${r.dC_notS ?? '-'}%; n=${r.dC_instances})`;
  const flaky = r.flaky?.tests ? `  flaky tests ${r.flaky.tests} (in ${r.flaky.instances} instance(s))` : '';
  return `instances ${r.instances}  errors ${r.errors}  W ${r.W}%  S ${r.S}%  F2X ${r.F2X}%  F2P ${r.F2P}%  P2P ${r.P2P}%${dC}${flaky}`;
}

/** `swt eval --compare A B`: metrics side by side and who alone solves what, on stdout and as compare.html. */
async function compareCommand(dirs: string[], outDir: string, json: boolean): Promise<void> {
  if (dirs.length !== 2) throw new SwtError('BAD_INPUT', `--compare takes two run directories, got ${dirs.length}`);
  const [a, b] = await Promise.all(dirs.map((d) => loadRun(resolve(d))));
  const c = compareEvalRuns(a!, b!);
  await mkdir(outDir, { recursive: true });
  const path = join(outDir, 'compare.html');
  await writeFile(path, renderCompareHtml(c, new Date().toISOString().replace(/\.\d+Z$/, 'Z')));
  if (json) printJson({ names: c.names, reports: c.reports, onlyA: c.onlyA, onlyB: c.onlyB, both: c.both, html: path });
  else process.stdout.write(`${renderCompareText(c)}comparison: ${path}\n`);
}
