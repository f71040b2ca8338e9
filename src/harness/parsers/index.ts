/** From a finished run (its /swt-out files and output) to tests and file errors. Pure. */
import { runnerDef } from '../../ecosystems/index.js';
import type { RunnerDef } from '../../ecosystems/types.js';
import type { BuildFailure } from '../../results/types.js';
import { groupByPackage, isGrouped, resultsToRepo } from '../packages.js';
import { GROUP_EXIT_FILE, reportNames, runsPerFile } from '../runners.js';
import type { FileError, RunnerSpec, TestResult } from '../../results/types.js';
import { excerptForFile, mergeDuplicates, mergeFileErrors, normalizeRel, tail, type ParsedReport } from '../../results/formats/common.js';

export { parseJUnit, type JUnitFlavor, type JUnitContext } from '../../results/formats/junit.js';
export { parseJestJson } from '../../results/formats/jest.js';
export { parseTap, type TapContext } from '../../results/formats/tap.js';
export { parseMochaJsonl, mochaMarkerLines, type MochaReport } from '../../results/formats/mocha.js';
export * from '../../results/formats/common.js';

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
  /** Compiled languages: units whose tests did not build (see OneReport.buildFailures). */
  buildFailures?: BuildFailure[];
}

/** A report by its name, whichever prefix (`./`, `swt-out/`, a sub dir) the run's files carry. */
export function findReport(reports: Record<string, string>, name: string): string | undefined {
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
  if (isGrouped(spec) && input.files.length) return parseGroupedReports(spec, input);
  const { def } = runnerDef(spec.kind);
  const files = input.files.map(normalizeRel);
  const perFile = runsPerFile(spec) && files.length > 0;
  const read = readReports(def, reportNames(spec, files.length), files, perFile, input);
  let { tests, fileErrors } = read;
  if (def.onlyRequested && files.length) {
    // e.g. vitest treats file arguments as substring filters, mocha adds its config's `spec` files: keep only the requested files.
    const wanted = new Set(files);
    tests = tests.filter((t) => !t.file || wanted.has(t.file));
    fileErrors = fileErrors.filter((e) => wanted.has(e.file));
  }
  const { missingFor } = read;
  const failed = input.timedOut || !!input.oomKilled || !!input.diskLimit || input.exitCode !== 0;
  // The report itself explains a non-zero exit: a test failed, a file or hook errored.
  const explained = tests.some((t) => t.outcome === 'failed') || fileErrors.length > 0 || read.runErrors.length > 0;
  const seen = new Set<string>([...tests.map((t) => t.file ?? ''), ...fileErrors.map((e) => e.file)]);
  const silent = files.filter((f) => !seen.has(f));
  const culprits = silent.filter((f) => missingFor.has(f) && mentions(input.output, f));
  for (const f of silent) {
    if (!missingFor.has(f)) {
      // The report covers this file and holds no test of it. Only a run that stopped midway, or a
      // failure nothing in the report accounts for, can be this file's doing: an entry made from
      // the exit code alone would turn into a `missing` failure on a side that exits 0. (A file
      // run alone has its own report: an empty one is its own failure.)
      if (!failed) continue;
      if (!perFile && read.complete && explained && !input.timedOut && !input.oomKilled && !input.diskLimit) continue;
    }
    fileErrors.push({ file: f, kind: input.diskLimit ? 'disk' : input.timedOut ? 'timeout' : 'collection', message: silentMessage(f, input, missingFor.has(f), culprits) });
  }
  const { reportFound, problems, buildFailures } = read;
  return { tests: mergeDuplicates(tests), fileErrors: mergeFileErrors(fileErrors), reportFound, problems, ...(buildFailures.length ? { buildFailures } : {}) };
}

/** Every report the run should have written, parsed; the files whose report is missing or unreadable in `missingFor`. */
function readReports(def: RunnerDef, names: string[], files: string[], perFile: boolean, input: RunReportInput) {
  const r = { tests: [] as TestResult[], fileErrors: [] as FileError[], buildFailures: [] as BuildFailure[], runErrors: [] as string[], problems: [] as string[], missingFor: new Set<string>(), complete: true, reportFound: false };
  names.forEach((name, i) => {
    const content = findReport(input.reports, name) ?? def.fromOutput?.(input.output);
    const file = perFile ? files[i] : undefined;
    if (content === undefined) r.problems.push(`no ${name}`);
    else {
      try {
        const parsed = def.parse(content, { files, root: input.root, output: input.output, ...(file ? { file } : {}) });
        r.tests.push(...parsed.tests);
        r.buildFailures.push(...(parsed.buildFailures ?? []));
        r.fileErrors.push(...parsed.fileErrors);
        r.runErrors.push(...parsed.errors);
        r.complete &&= parsed.complete;
        r.reportFound = true;
        return;
      } catch (e) {
        r.problems.push(`unreadable ${name}: ${(e as Error).message}`);
      }
    }
    for (const f of file ? [file] : files) r.missingFor.add(f);
  });
  return r;
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
  // The excerpt is the why; when it is empty (only stack frames, or nothing printed), say what there is.
  if (!reportMissing) {
    const none = 'the runner reported no tests for this file';
    return excerptForFile(input.output, file) || (input.output.trim() ? `${none}; the end of its output:\n${lastLines(input.output, 8)}` : `${none} and printed nothing (exit code ${String(input.exitCode)})`);
  }
  if (culprits.length && !culprits.includes(file)) {
    return `not run: the runner stopped before running tests (${culprits.join(', ')} failed to load)`;
  }
  const excerpt = mentions(input.output, file) ? excerptForFile(input.output, file) : tail(input.output, 600).trim();
  return excerpt || `the runner exited with code ${String(input.exitCode)} and wrote no report`;
}

/** The reports of the `i`th package group (buildTestCommand's `p<i>/`), keyed as that group's own run would be. */
function groupReports(reports: Record<string, string>, i: number): Record<string, string> {
  const out: Record<string, string> = {};
  const re = new RegExp(`^(?:\\.?/+)?(?:swt-out/)?p${i}/(.+)$`);
  for (const [k, v] of Object.entries(reports)) {
    const m = re.exec(k);
    if (m) out[m[1]] = v;
  }
  return out;
}

/**
 * A monorepo's run: each package group parsed with its own runner, from its own directory and
 * with its own exit status, then made repository-relative.
 */
function parseGroupedReports(spec: RunnerSpec, input: RunReportInput): ParsedRun {
  const merged: ParsedRun = { tests: [], fileErrors: [], reportFound: false, problems: [] };
  const buildFailures: BuildFailure[] = [];
  groupByPackage(spec, input.files.map(normalizeRel)).forEach((g, i) => {
    const reports = groupReports(input.reports, i);
    const status = reports[GROUP_EXIT_FILE]?.trim();
    delete reports[GROUP_EXIT_FILE];
    const exitCode = status && /^\d+$/.test(status) ? Number(status) : input.exitCode;
    const root = input.root ? (g.dir ? `${input.root.replace(/\/+$/, '')}/${g.dir}` : input.root) : undefined;
    const parsed = parseRunReports(g.spec, { ...input, files: g.local, reports, exitCode, ...(root ? { root } : {}) });
    const own = resultsToRepo(g.dir, parsed);
    merged.tests.push(...own.tests);
    merged.fileErrors.push(...own.fileErrors);
    merged.problems.push(...parsed.problems.map((p) => (g.dir ? `${g.dir}: ${p}` : p)));
    merged.reportFound ||= parsed.reportFound;
    buildFailures.push(...(parsed.buildFailures ?? []));
  });
  return { ...merged, ...(buildFailures.length ? { buildFailures } : {}) };
}
