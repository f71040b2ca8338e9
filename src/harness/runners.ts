/**
 * Test runners: recognise one in a command, pick one for a repository, and build the
 * shell command that runs the given test files with the machine-readable reporter the
 * harness parses. Pure: no I/O.
 */
import { SwtError } from '../util/errors.js';
import { shellQuote } from '../util/shell.js';
import { MOCHA_REPORT_FILE, MOCHA_REPORTER_FILE, mochaReporterOneLine } from './mochaReporter.js';
import { isTestFile } from './testFiles.js';
import type { RunnerKind, RunnerSpec } from './types.js';

export const DEFAULT_OUT_DIR = '/swt-out';

export const SUPPORTED_RUNNERS =
  'pytest, jest, vitest, mocha, node --test, tap (node-tap) and tape';

/** Which report a runner kind produces, relative to the out dir. */
export const REPORT_FILES: Record<RunnerKind, string> = {
  pytest: 'junit.xml',
  jest: 'jest.json',
  vitest: 'junit.xml',
  mocha: MOCHA_REPORT_FILE,
  'node-test': 'junit.xml',
  tap: 'tap.txt',
};

/** Runner detection, most specific first (`tape` before `tap`, `vitest` before `jest`). */
const DETECTORS: Array<{ kind: RunnerKind; re: RegExp }> = [
  { kind: 'pytest', re: /(^|[\s/;&|(])(py\.test|pytest)(\s|$|;|&|\|)|-m\s+pytest\b/ },
  { kind: 'vitest', re: /(^|[\s/;&|(])vitest(\s|$|;|&|\|)/ },
  { kind: 'jest', re: /(^|[\s/;&|(])jest(\.js)?(\s|$|;|&|\|)/ },
  { kind: 'mocha', re: /(^|[\s/;&|(])_?mocha(\.js)?(\s|$|;|&|\|)/ },
  { kind: 'node-test', re: /(^|[\s/;&|(])node\s+(?:[^;&|]*\s)?--test(\s|$|;|&|\||=)/ },
  { kind: 'tap', re: /(^|[\s/;&|(])tape(\s|$|;|&|\|)/ },
  { kind: 'tap', re: /(^|[\s/;&|(])tap(\s|$|;|&|\|)/ },
];

/** Recognise the runner in a plain command such as `npx mocha --exit {files}`. */
export function runnerFromCommand(template: string): RunnerSpec {
  const t = template.trim();
  if (!t) throw new SwtError('BAD_INPUT', 'The test command is empty', { hint: `supported runners: ${SUPPORTED_RUNNERS}` });
  if (/[\r\n]/.test(t)) throw new SwtError('BAD_INPUT', 'The test command must be a single line');
  for (const d of DETECTORS) if (d.re.test(t)) return { kind: d.kind, template: t };
  throw new SwtError('BAD_INPUT', `Cannot tell which test runner \`${t}\` uses`, {
    hint: `name the runner in the command; supported runners: ${SUPPORTED_RUNNERS}`,
  });
}

/** True when the spec runs tape (TAP on stdout, no reporter option) rather than node-tap. */
export function isTape(spec: RunnerSpec): boolean {
  return spec.kind === 'tap' && /(^|[\s/;&|(])tape(\s|$|;|&|\|)/.test(spec.template);
}

/** What runner and environment detection read of a repository at a revision. */
export interface RepoFacts {
  /** Repository file paths, relative to its root. */
  files: readonly string[];
  /** Parsed package.json at the root, if any (any JSON: detection checks every field it reads). */
  packageJson?: any;
}

const JEST_CONFIGS = /^jest\.config\.(js|cjs|mjs|ts|cts|mts|json)$/;

/** Pick a runner when the user gave no command. */
export function detectRunner(facts: RepoFacts): RunnerSpec {
  const pkg = facts.packageJson && typeof facts.packageJson === 'object' ? facts.packageJson : undefined;
  const deps: Record<string, unknown> = { ...(pkg?.dependencies ?? {}), ...(pkg?.devDependencies ?? {}), ...(pkg?.peerDependencies ?? {}) };
  const scripts: string = Object.values(pkg?.scripts ?? {}).filter((s) => typeof s === 'string').join(' ; ');
  const has = (name: string) => Object.prototype.hasOwnProperty.call(deps, name);
  const inScripts = (re: RegExp) => re.test(scripts);

  const pyFiles = facts.files.filter((f) => f.endsWith('.py'));
  const pyMarkers = facts.files.some((f) => /^(setup\.py|setup\.cfg|pyproject\.toml|pytest\.ini|tox\.ini|requirements[^/]*\.txt)$/.test(f));
  const jsTestFiles = facts.files.filter((f) => !f.endsWith('.py') && isTestFile(f));

  if (pkg) {
    if (has('vitest') || inScripts(/\bvitest\b/)) return { kind: 'vitest', template: 'npx vitest run {files}' };
    if (has('jest') || inScripts(/\bjest\b/)) {
      const hasJestConfig = facts.files.some((f) => JEST_CONFIGS.test(f)) || pkg.jest !== undefined;
      const tsJest = has('ts-jest') && !hasJestConfig;
      return { kind: 'jest', template: tsJest ? 'npx jest --preset ts-jest {files}' : 'npx jest {files}' };
    }
    if (has('mocha') || inScripts(/\bmocha\b/)) return { kind: 'mocha', template: 'npx mocha --exit {files}' };
    if (has('tape') || inScripts(/\btape\b/)) return { kind: 'tap', template: 'npx tape {files}' };
    if (has('tap') || inScripts(/(^|[\s;&|])tap(\s|$)/)) return { kind: 'tap', template: 'npx tap {files}' };
    if (inScripts(/\bnode\s+(?:[^;&|]*\s)?--test\b/)) return { kind: 'node-test', template: 'node --test {files}' };
  }
  if (pyMarkers || (pyFiles.length > 0 && pyFiles.length >= jsTestFiles.length)) {
    return { kind: 'pytest', template: 'python3 -m pytest -p no:cacheprovider {files}' };
  }
  if (pkg) return { kind: 'node-test', template: 'node --test {files}' };
  throw new SwtError('BAD_INPUT', 'Cannot tell how to run this repository\'s tests', {
    hint: `give a test command; supported runners: ${SUPPORTED_RUNNERS}`,
  });
}

/** A test file path as a safe shell word: rejects control characters, keeps a leading `-` from reading as an option. */
export function quoteTestFile(file: string): string {
  if (file === '' || /[\u0000-\u001f\u007f]/.test(file)) {
    throw new SwtError('UNSAFE_PATH', `Refusing test file name ${JSON.stringify(file)}: empty or has control characters`);
  }
  return shellQuote(file.startsWith('-') ? `./${file}` : file);
}

/** Reporter options for a spec, inserted just before the files. */
function reporterArgs(spec: RunnerSpec, out: string, report: string): string[] {
  const q = (name: string) => shellQuote(`${out}/${name}`);
  switch (spec.kind) {
    case 'pytest':
      return ['-rA', '--continue-on-collection-errors', `--junitxml=${q('junit.xml')}`, '-o', 'junit_family=xunit1'];
    case 'jest':
      return ['--ci', '--runTestsByPath', '--json', `--outputFile=${q('jest.json')}`];
    case 'vitest': {
      const watchOff = /(^|\s)vitest\s+run(\s|$)/.test(spec.template) ? [] : ['--run'];
      return [...watchOff, '--reporter=default', '--reporter=junit', `--outputFile.junit=${q('junit.xml')}`];
    }
    case 'mocha':
      // Our own reporter (see mochaReporter.ts), by absolute path, which every mocha since 1.x
      // accepts; also required first, so that a test file that fails to load stops only itself.
      return ['--require', q(MOCHA_REPORTER_FILE), '--reporter', q(MOCHA_REPORTER_FILE)];
    case 'node-test':
      return [
        '--test-reporter=junit', `--test-reporter-destination=${q(report)}`,
        '--test-reporter=spec', '--test-reporter-destination=stdout',
      ];
    case 'tap':
      return isTape(spec) ? [] : ['--reporter=tap'];
  }
}

/**
 * Runner kinds whose report cannot tell which file a test came from when several files run
 * together (node --test's junit has no file attribute; tape's TAP has none): these run one
 * file per invocation, each writing its own numbered report (`junit-0.xml`, `tap-1.txt`, …).
 */
export function runsPerFile(spec: RunnerSpec): boolean {
  return spec.kind === 'node-test' || isTape(spec);
}

/** The report file names a run of `files` leaves under the out dir, in file order when per file. */
export function reportNames(spec: RunnerSpec, fileCount: number): string[] {
  const base = REPORT_FILES[spec.kind];
  if (!runsPerFile(spec) || fileCount === 0) return [base];
  const dot = base.lastIndexOf('.');
  return Array.from({ length: fileCount }, (_, i) => `${base.slice(0, dot)}-${i}${base.slice(dot)}`);
}

/** mocha accepts one reporter: drop the template's own (and its options) so the harness's applies. */
function withoutOwnReporter(spec: RunnerSpec): string {
  const tpl = spec.template.trim();
  if (spec.kind !== 'mocha') return tpl;
  return tpl
    .replace(/\s(?:--reporter|-R)(?:=|\s+)\S+/g, '')
    .replace(/\s(?:--reporter-options?|-O)(?:=|\s+)\S+/g, '');
}

function fillTemplate(spec: RunnerSpec, files: string[], out: string, report: string): string {
  const fileWords = files.map(quoteTestFile).join(' ');
  const opts = reporterArgs(spec, out, report).join(' ');
  const insert = [opts, fileWords].filter(Boolean).join(' ');
  const tpl = withoutOwnReporter(spec);
  const cmd = tpl.includes('{files}') ? tpl.split('{files}').join(insert) : `${tpl} ${insert}`.trim();
  if (spec.kind !== 'tap') return cmd;
  // TAP goes to stdout: keep it in the output and in a file, and keep the runner's exit code (sh has no pipefail).
  const tap = shellQuote(`${out}/${report}`);
  const rc = shellQuote(`${out}/${report}.rc`);
  return `{ { ${cmd}; echo $? > ${rc}; } | tee ${tap}; }; exit "$(cat ${rc} 2>/dev/null || echo 1)"`;
}

/**
 * The part of the command that puts the harness's own reporter into the out dir (mocha), with a
 * leading space; empty for other runners. It travels in the command: no extra step in the sandbox.
 */
export function reporterInstall(spec: RunnerSpec, outDir: string = DEFAULT_OUT_DIR): string {
  if (spec.kind !== 'mocha') return '';
  const out = outDir.replace(/\/+$/, '') || '/';
  return ` printf '%s\\n' ${shellQuote(mochaReporterOneLine())} > ${shellQuote(`${out}/${MOCHA_REPORTER_FILE}`)};`;
}

/**
 * The shell command that runs `files` with `spec` and leaves its report(s) under `outDir`
 * (see reportNames). `{files}` in the template is replaced by the quoted files, with the
 * reporter options just before them; a template without `{files}` gets both appended.
 */
export function buildTestCommand(spec: RunnerSpec, files: string[], outDir: string = DEFAULT_OUT_DIR): string {
  if (/[\r\n]/.test(spec.template)) throw new SwtError('BAD_INPUT', 'The test command must be a single line');
  const out = outDir.replace(/\/+$/, '') || '/';
  const mkdir = `mkdir -p ${shellQuote(out)} 2>/dev/null;${reporterInstall(spec, out)}`;
  const reports = reportNames(spec, files.length);
  if (!runsPerFile(spec) || files.length === 0) {
    const cmd = fillTemplate(spec, files, out, reports[0]);
    return spec.kind === 'tap' ? `${mkdir} ( ${cmd} )` : `${mkdir} ${cmd}`;
  }
  const runs = files.map((f, i) => `( ${fillTemplate(spec, [f], out, reports[i])} ) || rc=$?;`);
  return `${mkdir} rc=0; ${runs.join(' ')} exit $rc`;
}

const NOT_FOUND_PATTERNS: RegExp[] = [
  /^(?:\/bin\/)?(?:sh|dash): \d+: \S+: not found$/m, // dash: `sh: 1: jest: not found`
  /^(?:\/bin\/)?(?:ba)?sh: (?:line \d+: )?\S+: command not found$/m, // bash
  /^(?:\/bin\/)?(?:sh|ash): \S+: not found$/m, // busybox
  /(npm ERR!|npm error) could not determine executable to run/,
  /npx canceled due to missing packages/,
  /npm (warn|WARN) exec The following package(s were| was) not found and will be installed/,
  /No module named '?pytest'?/,
  /^.*\b(python3?|pytest|node|npx): (can't open file|No such file or directory)/m,
];

/**
 * When a run failed because the test command itself does not exist (exit 127, `sh: 1: x: not
 * found`, npx cannot find the executable, no pytest module), the line that says so; else null.
 * Callers should only ask when the run produced no report.
 */
export function missingTestCommand(outcome: { exitCode: number | null; output: string }): string | null {
  if (outcome.exitCode === 0) return null;
  for (const re of NOT_FOUND_PATTERNS) {
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
