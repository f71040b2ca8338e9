/**
 * Test runners: recognise one in a command, pick one for a repository, and build the shell
 * command that runs the given test files with the machine-readable reporter the harness parses.
 * What is particular to each runner lives in its ecosystem module (src/ecosystems/); this is the
 * harness's view of them. Pure: no I/O.
 */
import { detectEcosystem, ECOSYSTEMS, ecosystemOfRunner, recogniseRunner, runnerDef, supportedRunners, type RepoFacts } from '../ecosystems/index.js';
import { SwtError } from '../util/errors.js';
import { FILE_LEVEL_KIND } from '../ecosystems/fileLevel.js';
import { shellQuote } from '../util/shell.js';
import { envExports, groupByPackage, idToLocal, inDir, isGrouped, packageOf } from './packages.js';
import type { RunnerSpec } from '../results/types.js';
import type { RoundPlan } from '../ecosystems/types.js';

export { quoteTestFile } from '../ecosystems/command.js';
export { isTape } from '../ecosystems/node/index.js';
export type { RepoFacts };

export const DEFAULT_OUT_DIR = '/swt-out';

export const SUPPORTED_RUNNERS = supportedRunners();

/**
 * Recognise the runner in a plain command such as `npx mocha --exit {files}`. A command no runner
 * recognises (a project's own test script) runs each test file on its own, judged by its exit
 * status (file-level); `facts` name its ecosystem when given.
 */
export function runnerFromCommand(template: string, facts?: RepoFacts, touched: readonly string[] = []): RunnerSpec {
  const t = template.trim();
  if (!t) throw new SwtError('BAD_INPUT', 'The test command is empty', { hint: `supported runners: ${SUPPORTED_RUNNERS}` });
  if (/[\r\n]/.test(t)) throw new SwtError('BAD_INPUT', 'The test command must be a single line');
  const kind = recogniseRunner(t);
  if (kind) return { kind, template: t };
  const ecosystem = facts ? detectEcosystem(facts, touched)?.id : undefined;
  return { kind: FILE_LEVEL_KIND, template: t, ...(ecosystem ? { ecosystem } : {}) };
}

/** Whether the spec judges whole files by their exit status (see fileLevel.ts). */
export function isFileLevel(spec: Pick<RunnerSpec, 'kind'>): boolean {
  return spec.kind === FILE_LEVEL_KIND;
}

/** Pick a runner when the user gave no command: the detected ecosystem's (see detectEcosystems for `touched`). */
export function detectRunner(facts: RepoFacts, touched: readonly string[] = []): RunnerSpec {
  const ecosystem = detectEcosystem(facts, touched);
  if (ecosystem) return ecosystem.defaultRunner(facts);
  throw new SwtError('BAD_INPUT', 'Cannot tell how to run this repository\'s tests', {
    hint: `give a test command; supported runners: ${SUPPORTED_RUNNERS}`,
  });
}

/**
 * Whether the spec runs one file per invocation, each writing its own numbered report
 * (`junit-0.xml`, `tap-1.txt`, …): its report cannot tell which file a test came from.
 */
export function runsPerFile(spec: RunnerSpec): boolean {
  return runnerDef(spec.kind).def.runsPerFile?.(spec) ?? false;
}

/** The report file names a run of `files` leaves under the out dir, in file order when per file. */
export function reportNames(spec: RunnerSpec, fileCount: number): string[] {
  const base = runnerDef(spec.kind).def.reportFile;
  if (!runsPerFile(spec) || fileCount === 0) return [base];
  const dot = base.lastIndexOf('.');
  return Array.from({ length: fileCount }, (_, i) => `${base.slice(0, dot)}-${i}${base.slice(dot)}`);
}

function outDirOf(outDir: string): string {
  return outDir.replace(/\/+$/, '') || '/';
}

/**
 * The part of the command that puts the harness's own reporter into the out dir (mocha), with a
 * leading space; empty for other runners. It travels in the command: no extra step in the sandbox.
 */
export function reporterInstall(spec: RunnerSpec, outDir: string = DEFAULT_OUT_DIR): string {
  return runnerDef(spec.kind).def.prepare?.(spec, outDirOf(outDir)) ?? '';
}

/**
 * The shell command that runs `files` with `spec` and leaves its report(s) under `outDir`
 * (see reportNames). `{files}` in the template is replaced by the quoted files, with the
 * reporter options just before them; a template without `{files}` gets both appended.
 */
export function buildTestCommand(spec: RunnerSpec, files: string[], outDir: string = DEFAULT_OUT_DIR, extra: { rounds?: RoundPlan; kept?: boolean } = {}): string {
  const { rounds, kept } = extra;
  if (/[\r\n]/.test(spec.template)) throw new SwtError('BAD_INPUT', 'The test command must be a single line');
  const env = envExports(spec);
  if (isGrouped(spec) && files.length) {
    // One command per owning package, from its directory, each with its own out dir and exit status.
    const out = outDirOf(outDir);
    const runs = groupByPackage(spec, files).map((g, i) => {
      const dir = groupOutDir(out, i);
      return `( ${inDir(g.dir, buildTestCommand(g.spec, g.local, dir, { ...(kept ? { kept } : {}) }))} ); s=$?; echo $s > ${shellQuote(`${dir}/${GROUP_EXIT_FILE}`)}; [ $s -eq 0 ] || rc=$s;`;
    });
    return `mkdir -p ${shellQuote(out)} 2>/dev/null;${env} rc=0; ${runs.join(' ')} exit $rc`;
  }
  const { def } = runnerDef(spec.kind);
  const out = outDirOf(outDir);
  const inProcess = rounds && roundsInProcess(spec, files.length) ? def.roundsInProcess!.prepare(out, rounds) : '';
  const mkdir = `mkdir -p ${shellQuote(out)} 2>/dev/null;${env}${reporterInstall(spec, out)}${inProcess}`;
  const reports = reportNames(spec, files.length);
  const opts = { ...(kept ? { kept } : {}), ...(inProcess && rounds ? { rounds: rounds.rounds } : {}) };
  if (!runsPerFile(spec) || files.length === 0) {
    const cmd = def.command(spec, files, out, reports[0], opts);
    return `${mkdir} ${def.exits ? `( ${cmd} )` : cmd}`;
  }
  const runs = files.map((f, i) => `( ${def.command(spec, [f], out, reports[i], opts)} ) || rc=$?;`);
  return `${mkdir} rc=0; ${runs.join(' ')} exit $rc`;
}

/**
 * Whether a run of `fileCount` files with `spec` can hold confirmation rounds in its own process
 * (RoundPlan): its runner knows how, and the run is one invocation (not one per package, nor one
 * per file unless there is one file).
 */
export function roundsInProcess(spec: RunnerSpec, fileCount: number): boolean {
  return !!runnerDef(spec.kind).def.roundsInProcess && !isGrouped(spec) && (!runsPerFile(spec) || fileCount === 1);
}

/**
 * Why a run of `fileCount` files with `spec` holds no confirmation rounds (RoundPlan), or undefined
 * when it can: the tests that move then rerun in new processes, as a result says.
 */
export function whyNoRounds(spec: RunnerSpec, fileCount: number): string | undefined {
  if (roundsInProcess(spec, fileCount)) return undefined;
  if (!runnerDef(spec.kind).def.roundsInProcess) return `${spec.kind} cannot repeat tests faithfully inside its run here: the tests that moved reran in new processes`;
  return `${spec.kind} ran once per ${isGrouped(spec) ? 'package' : 'file'}: the tests that moved reran in new processes`;
}

/** Whether each in-process round of `spec`'s runner starts from a fresh process's state (see roundsInProcess.freshProcess). */
export function roundsFresh(spec: RunnerSpec): boolean {
  return !!runnerDef(spec.kind).def.roundsInProcess?.freshProcess;
}

/** Whether a run's output says its rounds' hook kept it from running. */
export function roundsHookFailed(spec: RunnerSpec, output: string): boolean {
  return !!runnerDef(spec.kind).def.roundsInProcess?.hookFailed.test(output);
}

/** The report of round `round` (1-based) of a run with in-process rounds, under the out dir. */
export function roundReportName(spec: RunnerSpec, round: number): string {
  return runnerDef(spec.kind).def.roundsInProcess!.report(reportNames(spec, 1)[0], round);
}

/** The out dir of the `i`th package group of a grouped run (see RunnerSpec.packages). */
export function groupOutDir(outDir: string, i: number): string {
  return `${outDirOf(outDir)}/p${i}`;
}

/** Where a package group's command leaves its exit status, in its out dir. */
export const GROUP_EXIT_FILE = 'exit-status';

/** What a confirmation rerun runs in one invocation: chosen tests of a file, or (no ids) the whole file. */
export interface RerunTarget {
  file: string;
  ids?: readonly string[];
}

/** The out dir of one rerun invocation: round `round`, target `i`. */
export function rerunDir(outDir: string, round: number, i: number): string {
  return `${outDirOf(outDir)}/c${round}-${i}`;
}

/**
 * One shell command that runs every target `rounds` times, each in its own invocation with its
 * own out dir (rerunDir) holding its reporter and its one report (reportNames(spec, 1)): a test
 * alone in its process cannot be poisoned by a neighbour. A runner without `commandForTests`
 * runs the target's whole file. Exits with the last failing invocation's code.
 */
export function buildRerunCommand(spec: RunnerSpec, targets: readonly RerunTarget[], rounds: number, outDir: string = DEFAULT_OUT_DIR): string {
  if (/[\r\n]/.test(spec.template)) throw new SwtError('BAD_INPUT', 'The test command must be a single line');
  const parts: string[] = [];
  // A step that writes the same thing into the one shell (jest's --json hook, the npx shim) goes in once.
  const installed = new Set<string>();
  for (let r = 0; r < rounds; r++) {
    targets.forEach((t, i) => {
      const dir = rerunDir(outDir, r, i);
      // A monorepo's file reruns from its package, with its package's runner and ids as that run names them.
      const own = packageOf(spec, t.file);
      const { def } = runnerDef(own.spec.kind);
      const report = reportNames(own.spec, 1)[0];
      const file = own.dir ? t.file.slice(own.dir.length + 1) : t.file;
      const ids = t.ids?.map((id) => idToLocal(own.dir, id));
      const cmd = ids?.length && def.commandForTests ? def.commandForTests(own.spec, file, ids, dir, report) : def.command(own.spec, [file], dir, report);
      const install = reporterInstall(own.spec, dir);
      parts.push(`mkdir -p ${shellQuote(dir)} 2>/dev/null;${installed.has(install) ? '' : install} ( ${inDir(own.dir, cmd)} ) || rc=$?;`);
      installed.add(install);
    });
  }
  return `rc=0;${envExports(spec)} ${parts.join(' ')} exit $rc`;
}

/** Whether the runner (every package's, in a monorepo) can run chosen tests of a file without the rest (see RunnerDef.commandForTests). */
export function selectsTests(spec: RunnerSpec): boolean {
  return [spec, ...(spec.packages ?? []).map((p) => p.runner)].every((s) => !!runnerDef(s.kind).def.commandForTests);
}

const NOT_FOUND_PATTERNS: RegExp[] = [
  /^(?:\/bin\/)?(?:sh|dash): \d+: \S+: not found$/m, // dash: `sh: 1: jest: not found`
  /^(?:\/bin\/)?(?:ba)?sh: (?:line \d+: )?\S+: command not found$/m, // bash
  /^(?:\/bin\/)?(?:sh|ash): \S+: not found$/m, // busybox
];

/**
 * When a run failed because the test command itself does not exist (exit 127, `sh: 1: x: not
 * found`, npx cannot find the executable, no pytest module), the line that says so; else null.
 * Callers should only ask when the run produced no report. Without a spec, every runner's
 * patterns are tried.
 */
export function missingTestCommand(outcome: { exitCode: number | null; output: string }, spec?: RunnerSpec): string | null {
  if (outcome.exitCode === 0) return null;
  const own = spec ? (runnerDef(spec.kind).def.notFound ?? []) : allNotFound();
  for (const re of [...NOT_FOUND_PATTERNS, ...own]) {
    const m = re.exec(outcome.output);
    if (m) return m[0].trim().slice(0, 300);
  }
  // `node path/to/missing/jest.js`: a missing main module has an empty require stack.
  const main = /Error: Cannot find module '([^']+)'[\s\S]{0,400}?requireStack: \[\]/.exec(outcome.output);
  if (main) return `Cannot find module '${main[1]}'`;
  if (outcome.exitCode === 127) {
    const last = outcome.output.trim().split('\n').pop() ?? '';
    return `exit code 127 (command not found)${last ? `: ${last.trim().slice(0, 200)}` : ''}`;
  }
  return null;
}

function allNotFound(): RegExp[] {
  return ECOSYSTEMS.flatMap((e) => e.runners.flatMap((r) => r.notFound ?? []));
}

export { ecosystemOfRunner };
