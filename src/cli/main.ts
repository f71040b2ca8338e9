import { Command, Option } from 'commander';
import { describeCoverage } from '../coverage/describe.js';
import { writeFile } from 'node:fs/promises';
import { runDemo } from '../demo/demo.js';
import { FIXTURE_NAMES, type FixtureName } from '../demo/fixtureRepos.js';
import { parseIssueMarkdown } from '../generation/issueText.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import { validate, type ValidationResult } from '../pipeline/validate.js';
import { renderVerdictText } from '../harness/render.js';
import { cappedLines, renderNotesText } from '../pipeline/notes.js';
import { createDockerSandbox } from '../sandbox/index.js';
import { errorLine, isSwtError, SwtError } from '../util/errors.js';
import { envValues, logLevel } from '../settings/index.js';
import { logger } from '../util/logger.js';
import { addEvalCommand } from './evalCommand.js';
import { addModelCommand } from './model.js';
import { addLimitOptions, countOption, given, limitsFrom, printJson, readText, strategyOption, techniquesOption } from './options.js';
import { terminalProgress } from './progress.js';

export function buildProgram(): Command {
  const program = new Command('swt')
    .description('Reproduce issues with tests, and validate fixes with them, in Docker sandboxes.')
    .option('-q, --quiet', 'no progress on stderr')
    .option('-v, --verbose', 'JSON logs (pino) on stderr at info level; LOG_LEVEL sets any level')
    .hook('preAction', (cmd, action) => {
      // Every variable is parsed at start: a bad value stops here with its name (`swt doctor` lists it among its checks).
      if (action.name() !== 'doctor') envValues();
      // Progress already tells a person what happens; logs are for services and debugging.
      logger.level = cmd.opts().verbose ? 'info' : (logLevel() ?? 'warn');
    })
    .showHelpAfterError();
  addValidateCommand(program);
  addEvalCommand(program);
  addReproduceCommand(program);
  addDemoCommand(program);
  addWorkerCommand(program);
  addDoctorCommand(program);
  addImagesCommand(program);
  addModelCommand(program);
  return program;
}

/** `swt validate`. */
function addValidateCommand(program: Command): void {
  addLimitOptions(
    program
      .command('validate')
      .description('run tests on base and on the fixed state; classify each test F2P, F2F, P2P or P2F')
      .argument('[pr-url]', "a pull request on GitHub or a GHES: run the App's check on it (GITHUB_TOKEN), print what it would post")
      .option('--post', 'with a pull request URL: post the check run and comment')
      .option('--repo <path>', 'local git repository (working tree or bare mirror)')
      .option('--base <rev>', 'revision before the fix')
      .option('--head <rev>', 'revision after the fix')
      .option('--fix <patch>', 'code patch applied to base to get the fixed state')
      .option('--tests <patch>', 'unified diff adding the tests')
      .option('--image <ref>', 'base image, e.g. node:18 or python:3.11 (default: from the repository)')
      .option('--install <cmd>', 'dependency install command, run with the package registries only (default: from the repository)')
      .option('--test-cmd <cmd>', 'test command with {files}, e.g. "npx mocha --exit {files}"')
      .addOption(new Option('--dependencies-as-of <mode>', "the default install's registry state: auto (the base commit's date when older than 30 days), base (always its date), today").choices(['auto', 'base', 'today']))
      .addOption(countOption('--reruns <n>', 'extra runs per side to detect flaky tests').default(0))
      .addOption(countOption('--confirm <n>', 'reruns of each test that moves (not P2P) on both sides before it counts; 0 = off (default: .github/swt.yml confirm, else 2)'))
      .option('--coverage', 'also measure change coverage ΔC of the tests (extra runs)')
      .option('--reference-tests <patch>', 'with --coverage: golden tests that decide which changed lines are executable')
      .option('--json', 'print one JSON object as the last line of stdout'),
  ).action(async (url: string | undefined, o) => {
    if (url) return remoteCommand('pull', url, o, program.opts().quiet);
    requireOptions(o, ['--repo <path>', '--base <rev>', '--tests <patch>'], 'a pull request URL');
    if (!o.head === !o.fix) throw new SwtError('BAD_INPUT', 'give exactly one of --head <rev> or --fix <patch>');
    if (o.referenceTests && !o.coverage) throw new SwtError('BAD_INPUT', '--reference-tests needs --coverage');
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
        ...given({ dependenciesAsOf: o.dependenciesAsOf, confirm: o.confirm }),
        limits: limitsFrom(o),
        coverage: o.coverage ? { referenceTestPatch: o.referenceTests ? await readText(o.referenceTests, 'reference tests') : undefined } : undefined,
      },
      progress,
    );
    progress.end?.();
    printValidation(result, !!o.json);
  });
}

/** `swt validate`'s result: the verdict and notes (warnings on stderr), or JSON without the runs' output. */
function printValidation(result: ValidationResult, json: boolean): void {
  if (json) {
    const { runs, confirmation, ...rest } = result;
    const confirmed = confirmation ? { confirmation: { ...confirmation, runs: summarizeRuns(confirmation.runs) } } : {};
    printJson({ ...rest, runs: summarizeRuns(runs), ...confirmed });
    return;
  }
  process.stdout.write(`${renderVerdictText(result)}${renderNotesText(result)}\n`);
  if (result.coverage) process.stdout.write(`${describeCoverage(result.coverage)}\n`);
  if (result.coverageError) process.stderr.write(`swt: warning: change coverage not measured: ${result.coverageError}\n`);
  for (const w of result.warnings) process.stderr.write(`swt: warning: ${w}\n`);
}

/** `swt reproduce`. */
function addReproduceCommand(program: Command): void {
  addLimitOptions(
    program
      .command('reproduce')
      .description('write a test that reproduces an issue on a revision, and prove it by running it')
      .argument('[issue-url]', "an issue on GitHub or a GHES: run the App's job on it (GITHUB_TOKEN), print what it would post")
      .option('--post', 'with an issue URL: post the comment and the label')
      .option('--repo <path>', 'local git repository')
      .option('--rev <rev>', 'revision the issue was reported against')
      .option('--issue <file|->', 'issue text: first line the title, the rest the body')
      .addOption(strategyOption())
      .addOption(techniquesOption())
      .option('--out <patch>', 'write the test patch here')
      .option('--image <ref>', 'base image (default: from the repository)')
      .option('--install <cmd>', 'dependency install command (default: from the repository)')
      .option('--test-cmd <cmd>', 'test command with {files}')
      .option('--json', 'print the result as one JSON object on the last line of stdout'),
  ).action(async (url: string | undefined, o) => {
    if (url) return remoteCommand('issue', url, o, program.opts().quiet);
    requireOptions(o, ['--repo <path>', '--rev <rev>', '--issue <file|->'], 'an issue URL');
    const issue = parseIssueMarkdown(await readText(o.issue, 'issue'));
    if (!issue.title) throw new SwtError('BAD_INPUT', `the issue text in ${o.issue} is empty`);
    const progress = terminalProgress({ quiet: program.opts().quiet });
    const sandbox = await createDockerSandbox();
    const rep = await reproduceIssue(
      sandbox,
      { repo: o.repo, base: o.rev, image: o.image, install: o.install, testCmd: o.testCmd, issue, generation: { strategy: o.strategy, ...o.techniques }, limits: limitsFrom(o) },
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
}

/** `swt demo`. */
function addDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('the main job on a bundled repository: reproduce its issue, validate its fix, print what the bot would post')
    .addOption(new Option('--fixture <name>', 'bundled repository').choices([...FIXTURE_NAMES]).default('py-durations'))
    .addOption(strategyOption())
    .option('--app', 'run it through the GitHub App: the App against a loopback fake GitHub, fed the issue and the fix PR as webhooks')
    .option('--json', 'print the result as one JSON object on the last line of stdout')
    .action(async (o) => {
      const progress = terminalProgress({ quiet: program.opts().quiet });
      const sandbox = await createDockerSandbox();
      if (o.app) {
        // Loaded on demand: the App (Probot) is not needed by the other commands.
        const { runAppDemo } = await import('../demo/appDemo.js');
        const r = await runAppDemo(sandbox, { fixture: o.fixture as FixtureName, strategy: o.strategy }, progress);
        progress.end?.();
        if (o.json) printJson({ strategy: r.strategy, labels: r.labels, conclusion: r.checkRun?.conclusion ?? null, calls: r.calls });
        else process.stdout.write(`${r.text}\n`);
        if (r.checkRun?.conclusion !== 'success') process.exitCode = 3;
        return;
      }
      const result = await runDemo(sandbox, { fixture: o.fixture as FixtureName, strategy: o.strategy }, progress);
      progress.end?.();
      const rep = result.reproduction;
      if (o.json) printJson({ strategy: result.strategy, status: rep.status, success: result.validation?.success ?? false, likelyCorrect: result.validation?.likelyCorrect ?? false, model: rep.model, usage: rep.usage, reason: rep.reason, answers: rep.evidence?.answers ?? [] });
      else process.stdout.write(`${result.strategyNote}\n\n${result.markdown}\n`);
      if (rep.status !== 'reproduced') process.exitCode = 3;
    });
}

/** `swt worker`. */
function addWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('run jobs only (no webhooks): with REDIS_URL, one of any number of workers sharing the Redis queue; needs APP_ID and PRIVATE_KEY')
    .action(async () => {
      const { runWorker } = await import('../app/worker.js');
      const w = await runWorker();
      process.stderr.write(`swt worker ${w.services.id}: taking jobs from the ${w.services.engine === 'redis' ? 'Redis' : 'SQLite'} queue\n`);
      await new Promise<void>((resolve) => {
        const stop = () => void w.stop().finally(resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}

/** `swt doctor`. */
function addDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check Docker, the base images, disk, Redis, the LLM endpoint and the GitHub App credentials; one line each, exit 1 if something is wrong')
    .option('--json', 'print the checks as one JSON array on the last line of stdout')
    .action(async (o) => {
      const { runDoctor, renderDoctor } = await import('./doctor.js');
      const results = await runDoctor();
      if (o.json) printJson(results);
      else process.stdout.write(renderDoctor(results));
      if (results.some((r) => r.level === 'fail')) process.exitCode = 1;
    });
}

/** `swt images`. */
function addImagesCommand(program: Command): void {
  program
    .command('images')
    .description("find or build base images now (default: each ecosystem's, e.g. node:22, golang:1.24), and the install step's egress proxy image, so that a first job does not wait minutes for them")
    .argument('[refs...]', 'base images to prepare, e.g. node:18 python:3.11')
    .option('--json', 'print what was prepared as one JSON array on the last line of stdout')
    .action(async (refs: string[], o) => {
      const { defaultBaseImages } = await import('../pipeline/environmentDefaults.js');
      const progress = terminalProgress({ quiet: program.opts().quiet });
      const prepared = await createDockerSandbox().prepareImages!(refs.length ? refs : defaultBaseImages(), (m) => progress.step(m));
      if (o.json) printJson(prepared);
      else for (const p of prepared) process.stdout.write(`${p.ref}: ${p.image} (${p.built ? `built in ${(p.ms / 1000).toFixed(1)} s` : 'there already'})\n`);
    });
}

/** Commander's own wording, for options required unless a URL is given. */
function requireOptions(o: Record<string, unknown>, flags: string[], alternative: string): void {
  for (const flag of flags) {
    const key = flag.replace(/^--/, '').split(' ')[0]!.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    if (o[key] === undefined) throw new SwtError('BAD_INPUT', `required option '${flag}' not specified (or give ${alternative})`);
  }
}

/** The App's job on a GitHub or GHES URL, with GITHUB_TOKEN; prints what it posted or would post. */
async function remoteCommand(kind: 'issue' | 'pull', url: string, o: { post?: boolean; json?: boolean }, quiet: boolean): Promise<void> {
  const progress = terminalProgress({ quiet });
  const { runRemote } = await import('./remote.js');
  const r = await runRemote(kind, url, { token: envValues().GITHUB_TOKEN ?? '', post: Boolean(o.post), sandbox: createDockerSandbox(), progress });
  progress.end?.();
  if (o.json) printJson({ url, posted: Boolean(o.post), state: r.state, error: r.error, reproduced: r.reproduced, posts: r.posts });
  else {
    const posted = kind === 'pull' ? 'Posted the comment (a check run needs the GitHub App; here it is printed)' : 'Posted';
    const head = o.post ? posted : 'Would post (nothing was posted; add --post to post it)';
    process.stdout.write(`${head}:\n\n${r.summary}\n`);
  }
  if (r.state === 'failed') {
    process.stderr.write(`swt: error: the job failed: ${r.error}\n`);
    process.exitCode = 1;
  } else if (kind === 'issue' && !r.reproduced) process.exitCode = 3;
}

type RunSummary = { tests: unknown[]; fileErrors: unknown[]; timedOut: boolean; exitCode: number | null; durationMs: number };

/** Both sides' runs without their output, for --json. */
function summarizeRuns(runs: { base: RunSummary[]; head: RunSummary[] }): { base: RunSummary[]; head: RunSummary[] } {
  const summarize = (r: RunSummary): RunSummary => ({ tests: r.tests, fileErrors: r.fileErrors, timedOut: r.timedOut, exitCode: r.exitCode, durationMs: r.durationMs });
  return { base: runs.base.map(summarize), head: runs.head.map(summarize) };
}

export async function main(argv: string[] = process.argv): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (e) {
    const msg = errorLine(e, 2000);
    process.stderr.write(`swt: error: ${msg}\n`);
    return isSwtError(e) ? 2 : 1;
  }
}
