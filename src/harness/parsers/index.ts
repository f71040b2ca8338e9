/** From a finished run (its /swt-out files and output) to tests and file errors. Pure. */
import { reportNames, runsPerFile } from '../runners.js';
import type { FileError, RunnerSpec, TestResult } from '../types.js';
import { excerptForFile, mergeDuplicates, mergeFileErrors, normalizeRel, tail, type ParsedReport } from './common.js';
import { parseJestJson } from './jest.js';
import { parseJUnit, type JUnitFlavor } from './junit.js';
import { mochaMarkerLines, parseMochaJsonl } from './mocha.js';
import { parseTap } from './tap.js';

export { parseJUnit, type JUnitFlavor, type JUnitContext } from './junit.js';
export { parseJestJson } from './jest.js';
export { parseTap, type TapContext } from './tap.js';
export { parseMochaJsonl, mochaMarkerLines, type MochaReport } from './mocha.js';
export * from './common.js';

export interface RunReportInput {
  /** The requested test files, repository-relative. */
  files: string[];
  /** What the run wrote under the out dir, by relative path. */
  reports: Record<string, string>;
  output: string;
  exitCode: number | null;
  timedOut: boolean;
  oomKilled?: boolean;
  diskLimit?: boolean;
  /** Repository root inside the run. */
  root?: string;
}

export interface ParsedRun extends ParsedReport {
  /** At least one report file was found and read. */
  reportFound: boolean;
  /** Reports that were missing or unreadable, for logs. */
  problems: string[];
}

interface OneReport {
  tests: TestResult[];
  fileErrors: FileError[];
  /** The report covers the whole run (false: the run stopped midway). */
  complete: boolean;
  /** Failures the report names outside any test or file. */
  errors: string[];
}

const FLAVOR: Partial<Record<RunnerSpec['kind'], JUnitFlavor>> = {
  pytest: 'pytest',
  vitest: 'vitest',
  'node-test': 'node',
};

function findReport(reports: Record<string, string>, name: string): string | undefined {
  if (name in reports) return reports[name];
  const key = Object.keys(reports).find((k) => k.replace(/^\.?\/+/, '').replace(/^swt-out\//, '') === name || k.endsWith(`/${name}`));
  return key === undefined ? undefined : reports[key];
}

/**
 * Parse the report(s) of a run. Requested files that end up with neither tests nor an error
 * get a FileError when the run failed: `timeout` when it timed out, else `collection`, with the
 * part of the output that names the file (or its tail) as the message.
 */
export function parseRunReports(spec: RunnerSpec, input: RunReportInput): ParsedRun {
  const files = input.files.map(normalizeRel);
  const ctx = { files, root: input.root, output: input.output };
  const names = reportNames(spec, files.length);
  const perFile = runsPerFile(spec) && files.length > 0;
  let tests: TestResult[] = [];
  let fileErrors: FileError[] = [];
  const problems: string[] = [];
  const missingFor = new Set<string>();
  let reportFound = false;

  let complete = true;
  const runErrors: string[] = [];
  names.forEach((name, i) => {
    // mocha's reporter falls back to marker lines on stdout when it cannot write its file.
    const content = findReport(input.reports, name) ?? (spec.kind === 'mocha' ? mochaMarkerLines(input.output) : undefined);
    const file = perFile ? files[i] : undefined;
    if (content === undefined) {
      problems.push(`no ${name}`);
      for (const f of file ? [file] : files) missingFor.add(f);
      return;
    }
    try {
      const parsed = parseOne(spec, content, { ...ctx, file });
      tests.push(...parsed.tests);
      fileErrors.push(...parsed.fileErrors);
      runErrors.push(...parsed.errors);
      complete &&= parsed.complete;
      reportFound = true;
    } catch (e) {
      problems.push(`unreadable ${name}: ${(e as Error).message}`);
      for (const f of file ? [file] : files) missingFor.add(f);
    }
  });

  if ((spec.kind === 'vitest' || spec.kind === 'mocha') && files.length) {
    // vitest treats file arguments as substring filters, mocha adds its config's `spec` files: keep only the requested files.
    const wanted = new Set(files);
    tests = tests.filter((t) => !t.file || wanted.has(t.file));
    fileErrors = fileErrors.filter((e) => wanted.has(e.file));
  }

  const failed = input.timedOut || !!input.oomKilled || !!input.diskLimit || input.exitCode !== 0;
  // The report itself explains a non-zero exit: a test failed, a file or hook errored.
  const explained = tests.some((t) => t.outcome === 'failed') || fileErrors.length > 0 || runErrors.length > 0;
  const seen = new Set<string>([...tests.map((t) => t.file ?? ''), ...fileErrors.map((e) => e.file)]);
  const silent = files.filter((f) => !seen.has(f));
  const silentMissing = silent.filter((f) => missingFor.has(f));
  const culprits = silentMissing.filter((f) => mentions(input.output, f));
  for (const f of silent) {
    if (!missingFor.has(f)) {
      // The report covers this file and holds no test of it. Only a run that stopped midway, or a
      // failure nothing in the report accounts for, can be this file's doing: an entry made from
      // the exit code alone would turn into a `missing` failure on a side that exits 0. (A file
      // run alone has its own report: an empty one is its own failure.)
      if (!failed) continue;
      if (!perFile && complete && explained && !input.timedOut && !input.oomKilled && !input.diskLimit) continue;
    }
    fileErrors.push({ file: f, kind: input.diskLimit ? 'disk' : input.timedOut ? 'timeout' : 'collection', message: silentMessage(f, input, missingFor.has(f), culprits) });
  }
  tests = mergeDuplicates(tests);
  fileErrors = mergeFileErrors(fileErrors);
  return { tests, fileErrors, reportFound, problems };
}

function parseOne(spec: RunnerSpec, content: string, ctx: { files: string[]; root?: string; output: string; file?: string }): OneReport {
  if (spec.kind === 'mocha') return parseMochaJsonl(content, ctx);
  const whole = (r: ParsedReport): OneReport => ({ ...r, complete: true, errors: [] });
  if (spec.kind === 'jest') return whole(parseJestJson(content, ctx));
  if (spec.kind === 'tap') return whole(parseTap(content, ctx));
  return whole(parseJUnit(content, { ...ctx, flavor: FLAVOR[spec.kind] ?? 'generic' }));
}

function lastLines(output: string, n: number): string {
  return tail(output, 2000).trimEnd().split('\n').slice(-n).join('\n');
}

function mentions(output: string, file: string): boolean {
  return output.includes(file);
}

function silentMessage(file: string, input: RunReportInput, reportMissing: boolean, culprits: string[]): string {
  if (input.diskLimit) return `killed: disk limit (the run wrote more than its disk limit)\n${lastLines(input.output, 4)}`.trim();
  if (input.timedOut) return `timed out before reporting results for this file\n${lastLines(input.output, 4)}`.trim();
  if (input.oomKilled) return 'killed: out of memory';
  if (!reportMissing) return excerptForFile(input.output, file) || 'the runner reported no tests for this file';
  if (culprits.length && !culprits.includes(file)) {
    return `not run: the runner stopped before running tests (${culprits.join(', ')} failed to load)`;
  }
  const excerpt = mentions(input.output, file) ? excerptForFile(input.output, file) : tail(input.output, 600).trim();
  return excerpt || `the runner exited with code ${String(input.exitCode)} and wrote no report`;
}
