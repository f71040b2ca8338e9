import { Command, InvalidArgumentError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseInstances, parsePredictions } from '../eval/instances.js';
import { runEval, type TestSource } from '../eval/runEval.js';
import { runDemo } from '../demo/demo.js';
import { FIXTURE_NAMES, parseIssueMarkdown, type FixtureName } from '../demo/fixtureRepos.js';
import { STRATEGIES } from '../generation/index.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import { writeFile } from 'node:fs/promises';
import { validate } from '../pipeline/validate.js';
import { renderVerdictText } from '../harness/render.js';
import { cappedLines, renderNotesText } from '../pipeline/notes.js';
import { createDockerSandbox } from '../sandbox/index.js';
import type { ResourceLimits } from '../sandbox/types.js';
import { isSwtError, SwtError } from '../util/errors.js';
import { logger } from '../util/logger.js';
import { terminalProgress } from './progress.js';

const positiveInt = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a whole number`);
  return n;
};

async function readText(path: string, what: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (e) {
    throw new SwtError('BAD_INPUT', `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function limitsFrom(opts: { timeout?: number; memory?: number; pids?: number; cpus?: number; disk?: number }): Partial<ResourceLimits> {
  const out: Partial<ResourceLimits> = {};
  if (opts.timeout !== undefined) out.timeoutMs = opts.timeout * 1000;
  if (opts.memory !== undefined) out.memoryBytes = opts.memory * 1024 ** 2;
  if (opts.pids !== undefined) out.pids = opts.pids;
  if (opts.cpus !== undefined) out.cpus = opts.cpus;
  if (opts.disk !== undefined) out.diskBytes = opts.disk * 1024 ** 2;
  return out;
}

function addLimitOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--timeout <seconds>', 'wall-clock limit per test run').argParser(positiveInt('--timeout')))
    .addOption(new Option('--memory <MiB>', 'memory limit per test run').argParser(positiveInt('--memory')))
    .addOption(new Option('--pids <n>', 'process limit per test run').argParser(positiveInt('--pids')))
    .addOption(new Option('--cpus <n>', 'CPU limit per test run').argParser(Number))
    .addOption(new Option('--disk <MiB>', 'disk a test run may write').argParser(positiveInt('--disk')));
}

/** JSON goes on the last line of stdout, so scripts can take `tail -n1`. */
function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function buildProgram(): Command {
  const program = new Command('swt')
    .description('Reproduce issues with tests, and validate fixes with them, in Docker sandboxes.')
    .option('-q, --quiet', 'no progress on stderr')
    .option('-v, --verbose', 'JSON logs (pino) on stderr at info level; LOG_LEVEL sets any level')
    .hook('preAction', (cmd) => {
      // Progress already tells a person what happens; logs are for services and debugging.
      logger.level = cmd.opts().verbose ? 'info' : (process.env.LOG_LEVEL ?? 'warn');
    })
    .showHelpAfterError();

  addLimitOptions(
    program
      .command('validate')
      .description('run tests on base and on the fixed state; classify each test F2P, F2F, P2P or P2F')
      .requiredOption('--repo <path>', 'local git repository (working tree or bare mirror)')
      .requiredOption('--base <rev>', 'revision before the fix')
      .option('--head <rev>', 'revision after the fix')
      .option('--fix <patch>', 'code patch applied to base to get the fixed state')
      .requiredOption('--tests <patch>', 'unified diff adding the tests')
      .option('--image <ref>', 'base image, e.g. node:18 or python:3.11 (default: from the repository)')
      .option('--install <cmd>', 'dependency install command, run with the package registries only (default: from the repository)')
      .option('--test-cmd <cmd>', 'test command with {files}, e.g. "npx mocha --exit {files}"')
      .addOption(new Option('--reruns <n>', 'extra runs per side to detect flaky tests').argParser(positiveInt('--reruns')).default(0))
      .option('--json', 'print one JSON object as the last line of stdout'),
  ).action(async (o) => {
    if (!o.head === !o.fix) throw new SwtError('BAD_INPUT', 'give exactly one of --head <rev> or --fix <patch>');
    const progress = terminalProgress({ quiet: program.opts().quiet });
    const sandbox = await createDockerSandbox();
    const result = await validate(
      sandbox,
      {
        repo: o.repo,
        base: o.base,
        head: o.head,
        fixPatch: o.fix ? await readText(o.fix, 'fix patch') : undefined,
        testPatch: await readText(o.tests, 'test patch'),
        image: o.image,
        install: o.install,
        testCmd: o.testCmd,
        reruns: o.reruns,
        limits: limitsFrom(o),
      },
      progress,
    );
    progress.end?.();
    if (o.json) {
      const { runs, ...rest } = result;
      printJson({ ...rest, runs: { base: runs.base.map(summarizeRun), head: runs.head.map(summarizeRun) } });
    } else {
      process.stdout.write(`${renderVerdictText(result)}${renderNotesText(result)}\n`);
      for (const w of result.warnings) process.stderr.write(`swt: warning: ${w}\n`);
    }
  });

  addLimitOptions(
    program
      .command('eval')
      .description('evaluate predicted tests on SWE-bench style instances (W, S, F2X, F2P, P2P)')
      .requiredOption('--instances <file.jsonl>', 'SWE-bench JSONL instances')
      .requiredOption('--predictions <gold|empty|file.jsonl>', 'gold tests, no tests, or a predictions file')
      .option('--repos <dir>', 'directory of <owner>__<name> repositories or .bundle files (default: <instances dir>/repos)')
      .option('--out <dir>', 'where results.jsonl and report.json go', 'swt-eval-out')
      .addOption(new Option('--concurrency <n>', 'instances at once').argParser(positiveInt('--concurrency')).default(1))
      .addOption(new Option('--reruns <n>', 'extra runs per side').argParser(positiveInt('--reruns')).default(0))
      .addOption(strategyOption().default(undefined))
      .option('--json', 'print the summary as one JSON object on the last line of stdout'),
  ).action(async (o) => {
    const instances = parseInstances(await readText(o.instances, 'instances'), o.instances);
    const progress = terminalProgress({ quiet: program.opts().quiet });
    const sandbox = await createDockerSandbox();
    const source: TestSource =
      o.predictions === 'generate'
        ? {
            kind: 'generate',
            generate: async (inst, repoPath) => {
              const rep = await reproduceIssue(
                sandbox,
                { repo: repoPath, base: inst.base_commit, image: inst.image, install: inst.install, testCmd: inst.test_cmd, issue: parseIssueMarkdown(inst.problem_statement), generation: { strategy: o.strategy } },
                { step: (m) => progress.step(`${inst.instance_id}: ${m}`) },
              );
              return { modelPatch: rep.testPatch, reproduction: { strategy: rep.strategy, status: rep.status, reason: rep.reason } };
            },
          }
        : await testSource(o.predictions);
    const { report } = await runEval(
      sandbox,
      {
        instances,
        source,
        repos: resolve(o.repos ?? join(dirname(resolve(o.instances)), 'repos')),
        out: resolve(o.out),
        concurrency: Math.max(1, o.concurrency),
        reruns: o.reruns,
        limits: limitsFrom(o),
      },
      progress,
    );
    if (o.json) printJson(report);
    else {
      process.stdout.write(
        `instances ${report.instances}  errors ${report.errors}  W ${report.W}%  S ${report.S}%  F2X ${report.F2X}%  F2P ${report.F2P}%  P2P ${report.P2P}%\n` +
          `results: ${join(resolve(o.out), 'results.jsonl')}\n`,
      );
    }
  });

  addLimitOptions(
    program
      .command('reproduce')
      .description('write a test that reproduces an issue on a revision, and prove it by running it')
      .requiredOption('--repo <path>', 'local git repository')
      .requiredOption('--rev <rev>', 'revision the issue was reported against')
      .requiredOption('--issue <file|->', 'issue text: first line the title, the rest the body')
      .addOption(strategyOption())
      .option('--out <patch>', 'write the test patch here')
      .option('--image <ref>', 'base image (default: from the repository)')
      .option('--install <cmd>', 'dependency install command (default: from the repository)')
      .option('--test-cmd <cmd>', 'test command with {files}')
      .option('--json', 'print the result as one JSON object on the last line of stdout'),
  ).action(async (o) => {
    const issue = parseIssueMarkdown(await readText(o.issue, 'issue'));
    if (!issue.title) throw new SwtError('BAD_INPUT', `the issue text in ${o.issue} is empty`);
    const progress = terminalProgress({ quiet: program.opts().quiet });
    const sandbox = await createDockerSandbox();
    const rep = await reproduceIssue(
      sandbox,
      { repo: o.repo, base: o.rev, image: o.image, install: o.install, testCmd: o.testCmd, issue, generation: { strategy: o.strategy }, limits: limitsFrom(o) },
      progress,
    );
    progress.end?.();
    if (o.out && rep.testPatch) await writeFile(o.out, rep.testPatch);
    if (o.json) printJson(rep);
    else {
      for (const l of cappedLines(rep.limitsCapped)) process.stderr.write(`swt: limit capped: ${l}\n`);
      process.stdout.write(`${rep.status}: ${rep.reason}\n${rep.testPatch}${rep.failureExcerpt ? `\n${rep.failureExcerpt}\n` : ''}`);
    }
    if (rep.status !== 'reproduced') process.exitCode = 3;
  });

  program
    .command('demo')
    .description('the main job on a bundled repository: reproduce its issue, validate its fix, print what the bot would post')
    .addOption(new Option('--fixture <name>', 'bundled repository').choices([...FIXTURE_NAMES]).default('py-durations'))
    .addOption(strategyOption())
    .option('--json', 'print the result as one JSON object on the last line of stdout')
    .action(async (o) => {
      const progress = terminalProgress({ quiet: program.opts().quiet });
      const sandbox = await createDockerSandbox();
      const result = await runDemo(sandbox, { fixture: o.fixture as FixtureName, strategy: o.strategy }, progress);
      progress.end?.();
      if (o.json) printJson({ strategy: result.strategy, status: result.reproduction.status, success: result.validation?.success ?? false, likelyCorrect: result.validation?.likelyCorrect ?? false });
      else process.stdout.write(`${result.strategyNote}\n\n${result.markdown}\n`);
      if (result.reproduction.status !== 'reproduced') process.exitCode = 3;
    });

  return program;
}

function strategyOption(): Option {
  return new Option('--strategy <name>', 'test-writing strategy (default: ensemble with an LLM endpoint, else snippet)').choices([...STRATEGIES]);
}

async function testSource(predictions: string): Promise<TestSource> {
  if (predictions === 'gold') return { kind: 'gold' };
  if (predictions === 'empty') return { kind: 'empty' };
  return { kind: 'file', predictions: parsePredictions(await readText(predictions, 'predictions'), predictions) };
}

function summarizeRun(r: { tests: unknown[]; fileErrors: unknown[]; timedOut: boolean; exitCode: number | null; durationMs: number }) {
  return { tests: r.tests, fileErrors: r.fileErrors, timedOut: r.timedOut, exitCode: r.exitCode, durationMs: r.durationMs };
}

export async function main(argv: string[] = process.argv): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (e) {
    const msg = isSwtError(e) ? e.oneLine() : (e as Error).message.split('\n')[0];
    process.stderr.write(`swt: error: ${msg}\n`);
    return isSwtError(e) ? 2 : 1;
  }
}
