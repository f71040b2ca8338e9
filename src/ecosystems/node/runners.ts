/** Node's runners: vitest, jest, ava, jasmine, bun test, deno test, mocha, uvu, node --test, node-tap and tape. Pure. */
import { jestJsonPrepare } from './jestJson.js';
import { MOCHA_REPORT_FILE, MOCHA_REPORTER_FILE, mochaReporterOneLine } from '../../results/formats/mochaReporter.js';
import { parseJestJson } from '../../results/formats/jest.js';
import { parseJUnit } from '../../results/formats/junit.js';
import { mochaMarkerLines, parseMochaJsonl } from '../../results/formats/mocha.js';
import { parseTap } from '../../results/formats/tap.js';
import type { RunnerSpec } from '../../results/types.js';
import { shellQuote } from '../../util/shell.js';
import { parseAvaTap } from './ava.js';
import { parseBunJUnit } from './bun.js';
import { DENO_TEST, denoStopped, parseDenoJUnit } from './deno.js';
import { parseUvuJsonl, uvuCommand } from './uvu.js';
import { uvuHookWrite } from './uvuHook.js';
import { jestRounds } from './jestRounds.js';
import { withLocalNpx } from './localNpx.js';
import { MOCHA_ROUNDS_FILE, mochaRounds } from './mochaRounds.js';
import { VITEST_ROUNDS_FILE, vitestRounds } from './vitestRounds.js';
import { JASMINE_OUT_ENV, JASMINE_REPORTER_FILE, jasmineReporterWrite, parseJasmineJsonl } from './jasmine.js';
import { commandWord, fillTemplate, quoteTestFile, reportPath } from '../command.js';
import type { OneReport, ReportContext, RunnerDef } from '../types.js';

const whole = (r: { tests: OneReport['tests']; fileErrors: OneReport['fileErrors'] }): OneReport => ({ ...r, complete: true, errors: [] });
const words = (files: string[]) => files.map(quoteTestFile);

const TAPE = commandWord('tape');

/**
 * A name pattern matching the given tests (`file > suite > name` ids) by their own names: every
 * Node runner matches its pattern against the full name, of which the test's own name is a part.
 */
function namePattern(ids: readonly string[]): string {
  const names = [...new Set(ids.map((id) => id.split(' > ').pop() ?? id))];
  return shellQuote(names.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'));
}

/** True when the spec runs tape (TAP on stdout, no reporter option) rather than node-tap. */
export function isTape(spec: RunnerSpec): boolean {
  return spec.kind === 'tap' && TAPE.test(spec.template);
}

/** mocha accepts one reporter: drop the template's own (and its options) so the harness's applies. */
function withoutOwnReporter(template: string): string {
  return template
    .trim()
    .replace(/\s(?:--reporter|-R)(?:=|\s+)\S+/g, '')
    .replace(/\s(?:--reporter-options?|-O)(?:=|\s+)\S+/g, '');
}

const NOT_FOUND = [
  /(npm ERR!|npm error) could not determine executable to run/,
  /npx canceled due to missing packages/,
  /npm (warn|WARN) exec The following package(s were| was) not found and will be installed/,
  /^.*\b(node|npx): (can't open file|No such file or directory)/m,
];

function vitestOptions(spec: RunnerSpec, out: string, report: string, rounds = false): string[] {
  const watchOff = /(^|\s)vitest\s+run(\s|$)/.test(spec.template) ? [] : ['--run'];
  return [...watchOff, '--reporter=default', '--reporter=junit', `--outputFile.junit=${reportPath(out, report)}`, ...(rounds ? [`--reporter=${VITEST_ROUNDS_FILE}`] : [])];
}

export const vitest: RunnerDef = {
  kind: 'vitest',
  recognise: commandWord('vitest'),
  reportFile: 'junit.xml',
  onlyRequested: true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report, opts) => fillTemplate(spec.template, [...vitestOptions(spec, out, report, !!opts?.rounds), ...words(files)]),
  commandForTests: (spec, file, ids, out, report) => fillTemplate(spec.template, [...vitestOptions(spec, out, report), '-t', namePattern(ids), ...words([file])]),
  parse: (content, ctx) => whole(parseJUnit(content, { ...ctx, flavor: 'vitest' })),
  // Rounds through vitest's own API in the run's process (a new worker per test file).
  roundsInProcess: vitestRounds,
};

export const jest: RunnerDef = {
  kind: 'jest',
  recognise: /(^|[\s/;&|(])jest(\.js)?(\s|$|;|&|\|)/,
  reportFile: 'jest.json',
  notFound: NOT_FOUND,
  command(spec, files, out, report) {
    return fillTemplate(spec.template, ['--ci', '--runTestsByPath', '--json', `--outputFile=${reportPath(out, report)}`, ...words(files)]);
  },
  commandForTests(spec, file, ids, out, report) {
    return fillTemplate(spec.template, ['--ci', '--runTestsByPath', '--json', `--outputFile=${reportPath(out, report)}`, '-t', namePattern(ids), ...words([file])]);
  },
  // Its --json report even when a failure's details are not JSON (jest 28 and later wrote none).
  prepare: () => jestJsonPrepare(),
  parse: (content, ctx) => whole(parseJestJson(content, ctx)),
  // runCLI again in the run's own process (a new module registry per test file): the rounds cost the tests, not jest's start.
  roundsInProcess: jestRounds,
};

export const mocha: RunnerDef = {
  kind: 'mocha',
  recognise: /(^|[\s/;&|(])_?mocha(\.js)?(\s|$|;|&|\|)/,
  reportFile: MOCHA_REPORT_FILE,
  onlyRequested: true,
  notFound: NOT_FOUND,
  command(spec, files, out, _report, opts) {
    // Our own reporter (see mochaReporter.ts), by absolute path, which every mocha since 1.x
    // accepts; also required first, so that a test file that fails to load stops only itself.
    // The rounds' hook comes after the project's own --require modules, whose state rounds keep.
    const reporter = reportPath(out, MOCHA_REPORTER_FILE);
    return fillTemplate(withoutOwnReporter(spec.template), ['--require', reporter, ...(opts?.rounds ? ['--require', MOCHA_ROUNDS_FILE] : []), '--reporter', reporter, ...words(files)]);
  },
  commandForTests(spec, file, ids, out) {
    const reporter = reportPath(out, MOCHA_REPORTER_FILE);
    return fillTemplate(withoutOwnReporter(spec.template), ['--require', reporter, '--reporter', reporter, '--grep', namePattern(ids), ...words([file])]);
  },
  prepare: (_spec, out) => ` printf '%s\\n' ${shellQuote(mochaReporterOneLine())} > ${shellQuote(`${out}/${MOCHA_REPORTER_FILE}`)};`,
  parse: (content, ctx: ReportContext) => parseMochaJsonl(content, ctx),
  // The reporter falls back to marker lines on stdout when it cannot write its file.
  fromOutput: mochaMarkerLines,
  // A new Mocha per round in the run's process, with the modules and globals of before its first test file.
  roundsInProcess: mochaRounds,
};

/** node --test's junit has no file attribute: one file per invocation. */
export const nodeTest: RunnerDef = {
  kind: 'node-test',
  recognise: /(^|[\s/;&|(])node\s+(?:[^;&|]*\s)?--test(\s|$|;|&|\||=)/,
  reportFile: 'junit.xml',
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command(spec, files, out, report) {
    return fillTemplate(spec.template, [
      '--test-reporter=junit', `--test-reporter-destination=${reportPath(out, report)}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      ...words(files),
    ]);
  },
  commandForTests(spec, file, ids, out, report) {
    return fillTemplate(spec.template, [
      '--test-reporter=junit', `--test-reporter-destination=${reportPath(out, report)}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      `--test-name-pattern=${namePattern(ids)}`,
      ...words([file]),
    ]);
  },
  parse: (content, ctx) => whole(parseJUnit(content, { ...ctx, flavor: 'node' })),
};

/** `{ cmd; } | tee report`, keeping the runner's exit code (sh has no pipefail): the report is also in the output. */
function teeStdout(cmd: string, out: string, report: string): string {
  const file = reportPath(out, report);
  const rc = reportPath(out, `${report}.rc`);
  return `{ { ${cmd}; echo $? > ${rc}; } | tee ${file}; }; exit "$(cat ${rc} 2>/dev/null || echo 1)"`;
}

/** ava's `--match` takes a title with `*` wildcards: each id's own title, exactly. */
function avaMatches(ids: readonly string[]): string[] {
  const titles = [...new Set(ids.map((id) => id.split(' > ').slice(1).join(' > ')))];
  return titles.flatMap((t) => ['--match', shellQuote(t)]);
}

/** ava: TAP on stdout, one file per invocation so titles come without ava's `file ›` prefix. */
export const ava: RunnerDef = {
  kind: 'ava',
  recognise: /(^|[\s/;&|(])ava(\.js)?(\s|$|;|&|\|)/,
  reportFile: 'ava.tap',
  runsPerFile: () => true,
  exits: true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => teeStdout(fillTemplate(spec.template, ['--tap', ...words(files)]), out, report),
  commandForTests: (spec, file, ids, out, report) => teeStdout(fillTemplate(spec.template, ['--tap', ...avaMatches(ids), ...words([file])]), out, report),
  parse: (content, ctx) => parseAvaTap(content, ctx),
};

/** jasmine's own reporter replaced by swt's (see jasmine.ts): the report file is named through the environment. */
function jasmineCommand(spec: RunnerSpec, extra: string[], files: string[], out: string, report: string): string {
  const reporter = `--reporter=${reportPath(out, JASMINE_REPORTER_FILE)}`;
  return `export ${JASMINE_OUT_ENV}=${reportPath(out, report)}; ${fillTemplate(withoutOwnReporter(spec.template), [reporter, ...extra, ...words(files)])}`;
}

export const jasmine: RunnerDef = {
  kind: 'jasmine',
  // `jasmine`, `npx jasmine`, `node ./bin/jasmine.js` (jasmine-npm's own suite) or node_modules/jasmine/bin/jasmine.js
  recognise: /(^|[\s/;&|(])jasmine(\.js)?(\s|$|;|&|\|)/,
  reportFile: 'jasmine.jsonl',
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => jasmineCommand(spec, [], files, out, report),
  // --filter is a regular expression on the spec's full name (suites and spec joined by spaces).
  commandForTests: (spec, file, ids, out, report) => jasmineCommand(spec, [`--filter=${namePattern(ids)}`], [file], out, report),
  prepare: (_spec, out) => jasmineReporterWrite(out),
  parse: (content, ctx) => parseJasmineJsonl(content, ctx),
};

/**
 * uvu: swt's hook preloaded (see uvuHook.ts), one file per invocation (uvu takes a directory and
 * a pattern, and a file that fails to load stops the whole run). uvu selects no test by name:
 * reruns run the whole file.
 */
export const uvu: RunnerDef = {
  kind: 'uvu',
  recognise: /(^|[\s/;&|(])uvu(\.js)?(\s|$|;|&|\|)/,
  reportFile: 'uvu.jsonl',
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => uvuCommand(spec.template, files[0] ?? '', out, report),
  prepare: (_spec, out) => uvuHookWrite(out),
  parse: (content, ctx) => parseUvuJsonl(content, ctx),
};

function bunOptions(out: string, report: string): string[] {
  return ['--reporter=junit', `--reporter-outfile=${reportPath(out, report)}`];
}

/** bun test: JUnit with a file per test case. Its file arguments are path filters: keep only the requested files. */
export const bunTest: RunnerDef = {
  kind: 'bun-test',
  recognise: /(^|[\s/;&|(])bun\s+test(\s|$|;|&|\|)/,
  reportFile: 'junit.xml',
  onlyRequested: true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => fillTemplate(spec.template, [...bunOptions(out, report), ...words(files)]),
  commandForTests: (spec, file, ids, out, report) => fillTemplate(spec.template, [...bunOptions(out, report), '-t', namePattern(ids), ...words([file])]),
  parse: parseBunJUnit,
};

/** Deno's `--filter` is on a test's own (top-level) name: `/^(?:a|b)$/` of the tests the ids are or whose steps they are. */
function denoFilter(ids: readonly string[]): string {
  const names = [...new Set(ids.map((id) => id.split(' > ')[1] ?? id))];
  return shellQuote(`/^(?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$/`);
}

/** deno test: JUnit (see deno.ts), one file per invocation (a type error in one file stops the whole run). */
export const denoTest: RunnerDef = {
  kind: 'deno-test',
  recognise: DENO_TEST,
  reportFile: 'junit.xml',
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => fillTemplate(spec.template, [`--junit-path=${reportPath(out, report)}`, ...words(files)]),
  commandForTests: (spec, file, ids, out, report) => fillTemplate(spec.template, [`--junit-path=${reportPath(out, report)}`, `--filter=${denoFilter(ids)}`, ...words([file])]),
  parse: parseDenoJUnit,
  fromOutput: denoStopped,
};

/** node-tap and tape: TAP on stdout, kept in the output and in a file. tape's TAP names no file: one file per invocation. */
export const tap: RunnerDef = {
  kind: 'tap',
  recognise: /(^|[\s/;&|(])tape?(\s|$|;|&|\|)/,
  reportFile: 'tap.txt',
  runsPerFile: isTape,
  exits: true,
  notFound: NOT_FOUND,
  command(spec, files, out, report) {
    return teeStdout(fillTemplate(spec.template, [...(isTape(spec) ? [] : ['--reporter=tap']), ...words(files)]), out, report);
  },
  parse: (content, ctx) => whole(parseTap(content, ctx)),
};

/** Most specific first: vitest before jest, tape/tap last. Each calls an installed bin without npm's start (localNpx.ts). */
export const NODE_RUNNERS: readonly RunnerDef[] = [vitest, jest, ava, jasmine, bunTest, denoTest, mocha, uvu, nodeTest, tap].map(withLocalNpx);
