/**
 * The C/C++ runners' report bundle (runners.ts) read back: the build's output, the runner's own
 * report, each GoogleTest binary's XML and the requested files' test declarations, into tests
 * with ids `<file> > <name>` (the name as the framework gives it; the file from the declarations,
 * else from the report). A file that did not compile is a file error and its unit a build
 * failure; a test killed by a signal or a timeout says so. Pure.
 */
import { XMLParser } from 'fast-xml-parser';
import { parseJUnit, type CxxFlavor } from '../../results/formats/junit.js';
import { firstLines, mergeDuplicates, normalizeRel, resolveFile } from '../../results/formats/common.js';
import type { BuildFailure, FileError, TestResult } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';
import { SECTION } from './runners.js';
import { declaredTests, fileOfTest, type Declared } from './declarations.js';

interface Section {
  kind: string;
  name: string;
  body: string;
}

/** The bundle split at its `@@swt-c <kind> <name>` lines. */
export function sections(content: string): Section[] {
  const out: Section[] = [];
  let cur: Section | undefined;
  for (const line of content.split('\n')) {
    if (line.startsWith(`${SECTION} `)) {
      const [kind = '', ...name] = line.slice(SECTION.length + 1).split(' ');
      cur = { kind, name: name.join(' ').trim(), body: '' };
      out.push(cur);
    } else if (cur) cur.body += `${line}\n`;
  }
  return out;
}

const REPORTS: Record<string, CxxFlavor> = { 'ctest-junit': 'ctest', gtest: 'gtest', 'meson-junit': 'meson', junit: 'catch2' };

/** Compiler diagnostics that stop a build: `file:line:col: error: …`, and the linker's. */
const COMPILE_ERROR = /^(?:\.\.\/)*([^\s:][^:]*):(\d+):(?:\d+:)? (?:fatal )?error: (.*)$/;

export function parseBundle(content: string, ctx: ReportContext): OneReport {
  const parts = sections(content);
  const body = (kind: string) => parts.find((s) => s.kind === kind)?.body;
  const build = parts.filter((s) => s.kind === 'build').map((s) => s.body).join('');
  const status = parts.find((s) => s.kind === 'status')?.name;
  const exit = parts.find((s) => s.kind === 'exit')?.name;
  const declared: Declared[] = parts.filter((s) => s.kind === 'decl').flatMap((s) => declaredTests(normalizeRel(s.name), s.body));
  const { frameworks, runner, failing, located } = reports(parts, ctx);
  const unity = unityResults(body('ctest-junit'), ctx);
  for (const [name, tests] of unity) {
    frameworks.push(...tests);
    if (tests.some((t) => t.outcome === 'failed')) failing.add(name);
  }
  const listing = ctestListing(body('ctest-tests'));
  const verdicts = ctestVerdicts(body('ctest-output'));
  // A discovered GoogleTest test under the name its binary gives it (CTest's may show a parameter's value instead of its index).
  const ran = runner.map((t) => ({ ...withVerdict(t, verdicts.get(t.id)), id: listing.filters.get(t.id) ?? t.id }));
  // A framework's own result wins over CTest's for the same test, and over a binary CTest ran
  // whole, unless that failed without the binary's XML saying why (a crash, a timeout).
  const named = new Set(frameworks.map((t) => t.id));
  const reported = new Set(parts.filter((s) => s.kind === 'gtest' || s.kind === 'junit').map((s) => binaryOf(s.name)));
  const covered = (t: TestResult) => {
    if (unity.has(t.id)) return t.outcome !== 'failed' || failing.has(t.id);
    const bin = listing.whole.get(t.id);
    return !!bin && reported.has(bin) && (t.outcome !== 'failed' || failing.has(bin));
  };
  // `<target>_NOT_BUILT`: CMake's stand-in for a GoogleTest target that did not build (the build failure says it).
  const kept = ran.filter((t) => !named.has(t.id) && !covered(t) && !/_NOT_BUILT$/.test(t.id));
  const trs = parts.filter((s) => s.kind === 'trs').map((s) => automakeResult(s, parts, ctx));
  // A Unity line and GoogleTest's XML name the test's own source file (`tests/parse_examples.c:52:…`,
  // `file="…/test/SetPath.cpp"`): those tests keep it, requested or not.
  for (const t of [...unity.values()].flat()) located.add(t);
  const built = mesonSources(body('meson-intro'), ctx);
  const tests = [...frameworks, ...kept, ...trs].map((t) => withFile(t, declared, ctx, located.has(t), built));
  const { fileErrors, buildFailures } = buildErrors(build, status, ctx, tests);
  // The build could not be configured: no test of the requested files ran (the run's error says why).
  if (status === 'configure-failed') fileErrors.push(...ctx.files.map((f) => ({ file: normalizeRel(f), kind: 'collection' as const, message: 'the build could not be configured' })));
  const fileLevel = tests.length === 0 && fileErrors.length === 0 && exit !== undefined ? exitVerdicts(exit, ctx, build) : [];
  return {
    tests: mergeDuplicates([...tests, ...fileLevel]),
    fileErrors,
    complete: exit !== undefined,
    errors: status === 'configure-failed' ? [`the build could not be configured:\n${firstLines(build.trim().split('\n').slice(-12).join('\n'), 12, 1200) ?? ''}`] : [],
    ...(buildFailures.length ? { buildFailures } : {}),
  };
}

/** Every XML report of the bundle: the frameworks' own (GoogleTest, Catch2, doctest) and the runner's (CTest, Meson). */
function reports(parts: readonly Section[], ctx: ReportContext): { frameworks: TestResult[]; runner: TestResult[]; failing: Set<string>; located: Set<TestResult> } {
  const frameworks: TestResult[] = [];
  const runner: TestResult[] = [];
  /** Tests whose report names their own source (GoogleTest's `file` attribute). */
  const located = new Set<TestResult>();
  /** Binaries whose own XML reports a failure. */
  const failing = new Set<string>();
  for (const s of parts) {
    const flavor = REPORTS[s.kind];
    if (!flavor || !s.body.trim()) continue;
    try {
      const parsed = parseJUnit(s.body, { files: ctx.files, root: ctx.root, output: ctx.output, flavor });
      (flavor === 'ctest' || flavor === 'meson' ? runner : frameworks).push(...parsed.tests);
      if (flavor === 'gtest') for (const t of parsed.tests) if (t.file) located.add(t);
      if (parsed.tests.some((t) => t.outcome === 'failed')) failing.add(binaryOf(s.name));
    } catch {
      // A report cut short (a binary killed mid-write): its tests are said by the runner's report.
    }
  }
  return { frameworks, runner, failing, located };
}

/** Unity's line for one test: `file:line:name:PASS`, `…:FAIL: message`, `…:IGNORE[: reason]`. */
const UNITY = /^(\S+?):(\d+):(\w+):(PASS|FAIL|IGNORE)(?::\s*(.*))?$/;
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', isArray: (n) => n === 'testcase' });

/**
 * Unity (C) prints a line per test: each CTest test whose output has them is judged test by test,
 * by CTest test name (a binary that crashed midway keeps CTest's verdict for itself).
 */
export function unityResults(junit: string | undefined, ctx: ReportContext): Map<string, TestResult[]> {
  const out = new Map<string, TestResult[]>();
  let cases: any[] = [];
  try {
    cases = (xml.parse(junit ?? '') as any)?.testsuite?.testcase ?? [];
  } catch {
    return out;
  }
  for (const c of cases) {
    const printed = typeof c['system-out'] === 'string' ? c['system-out'] : String(c['system-out']?.['#text'] ?? '');
    const tests: TestResult[] = [];
    for (const line of printed.split('\n')) {
      const m = UNITY.exec(line.trim());
      if (!m) continue;
      const t: TestResult = { id: m[3]!, file: resolveFile(m[1]!.replace(/^(\.\.\/)+/, ''), ctx), outcome: m[4] === 'PASS' ? 'passed' : m[4] === 'FAIL' ? 'failed' : 'skipped' };
      if (m[5]) t.message = m[5];
      if (t.outcome === 'failed') t.failureKind = 'assertion';
      tests.push(t);
    }
    if (tests.length) out.set(String(c['@_name']), tests);
  }
  return out;
}

/** CTest's console verdict of each test (`***Exception: SegFault`, `***Timeout`), by name. */
export function ctestVerdicts(output: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (output ?? '').split('\n')) {
    const m = /^\s*\d+\/\d+ Test\s+#\d+: (.+?) \.+\s*(?:\*{3})?(.+?)\s+[\d.]+ sec\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!.trim());
  }
  return out;
}

/** A failure CTest's console calls a crash or a timeout, said so. */
function withVerdict(t: TestResult, verdict: string | undefined): TestResult {
  if (t.outcome !== 'failed' || !verdict) return t;
  if (/^Timeout/.test(verdict)) return { ...t, failureKind: 'timeout', message: [`timed out (CTest's --timeout)`, t.message].filter(Boolean).join('\n') };
  if (/^(Exception|SEGFAULT|Subprocess aborted|Child aborted)/i.test(verdict)) return { ...t, failureKind: 'error', message: [`crashed: ${verdict.replace(/^Exception:\s*/, '')}`, t.message].filter(Boolean).join('\n') };
  return t;
}

/** `clampx_test` of GoogleTest's `clampx_test_3.xml` (one per process: `_<n>` when the name was taken). */
function binaryOf(xml: string): string {
  return xml.replace(/\.xml$/, '').replace(/_\d+$/, '');
}

/**
 * CTest's tests (`--show-only=json-v1`): those that run a binary whole (no arguments), by
 * test name, with the binary's file name; and a discovered GoogleTest test's own name (its filter).
 */
function ctestListing(json: string | undefined): { whole: Map<string, string>; filters: Map<string, string> } {
  const whole = new Map<string, string>();
  const filters = new Map<string, string>();
  try {
    const doc = JSON.parse(json ?? '{}') as { tests?: { name?: string; command?: string[] }[] };
    for (const t of doc.tests ?? []) {
      const [exe, ...args] = t.command ?? [];
      const filter = args.find((a) => a.startsWith('--gtest_filter='))?.slice('--gtest_filter='.length);
      if (!t.name || !exe) continue;
      if (filter && !/[*?:-]/.test(filter)) filters.set(t.name, filter);
      else if (!args.length) whole.set(t.name, exe.slice(exe.lastIndexOf('/') + 1));
    }
  } catch {
    // No listing: every CTest result stays as CTest names it.
  }
  return { whole, filters };
}

/**
 * The id `<file> > <name>` when the test's file is known: its declaration, or the report's path when
 * requested or when the report's line is the test's own (`ownFile`: Unity's, within the repository).
 */
function withFile(t: TestResult, declared: readonly Declared[], ctx: ReportContext, ownFile = false, built = new Map<string, string[]>()): TestResult {
  const requested = new Set(ctx.files.map(normalizeRel));
  // A path the build wrote from its directory (`../tests/a_test.cc`; ours is one level below the root).
  const own = ownFile && t.file ? t.file.replace(/^\.\.\//, '') : undefined;
  const reported = t.file && requested.has(t.file) ? t.file : own && !own.startsWith('/') && !own.startsWith('../') ? own : undefined;
  const fromBuild = (built.get(t.id) ?? []).filter((f) => requested.has(f));
  const file = fileOfTest(t.id, declared) ?? reported ?? (fromBuild.length === 1 ? fromBuild[0] : undefined) ?? programSource(t.id, requested);
  const out: TestResult = { ...t, id: file ? `${file} > ${t.id}` : t.id };
  if (file) out.file = file;
  else delete out.file;
  if (out.outcome === 'failed' && out.message && /\b(SegFault|SIGSEGV|SIGABRT|Child aborted|Subprocess aborted|killed by signal|Exception: )/i.test(out.message)) {
    out.failureKind = 'error';
  }
  if (out.outcome === 'failed' && out.message && /^\s*\*{0,3}Timeout\b|\btimed out\b/im.test(out.message)) out.failureKind = 'timeout';
  return out;
}

/**
 * Meson's tests and targets (`meson introspect --tests --targets`): each test's name with the
 * repository-relative sources of the programs it runs or depends on (inih's `test_multi` runs
 * `runtest.sh` on `unittest_multi`, built from `ini.c` and `tests/unittest.c`).
 */
export function mesonSources(json: string | undefined, ctx: ReportContext): Map<string, string[]> {
  const out = new Map<string, string[]>();
  try {
    const doc = JSON.parse(json ?? '{}') as {
      tests?: { name?: string; cmd?: string[]; depends?: string[] }[];
      targets?: { id?: string; filename?: string[]; target_sources?: { sources?: string[] }[] }[];
    };
    for (const t of doc.tests ?? []) {
      if (!t.name) continue;
      const programs = (doc.targets ?? []).filter((g) => (g.id && t.depends?.includes(g.id)) || g.filename?.some((f) => t.cmd?.includes(f)));
      const sources = programs.flatMap((g) => (g.target_sources ?? []).flatMap((s) => s.sources ?? []));
      out.set(t.name, [...new Set(sources.map((f) => resolveFile(f, ctx)))]);
    }
  } catch {
    // No introspection (an older run): tests keep the names alone.
  }
  return out;
}

/** A test named after a program (CTest's `misc_tests`, a Unity or plain C test binary) placed in the requested file of that name. */
function programSource(name: string, requested: ReadonlySet<string>): string | undefined {
  const hits = [...requested].filter((f) => f.slice(f.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '') === name);
  return hits.length === 1 ? hits[0] : undefined;
}

/** One automake test (`tests/test_x.trs`): its result, the end of its log as the message. */
function automakeResult(s: Section, parts: readonly Section[], ctx: ReportContext): TestResult {
  const result = /^:test-result:\s*(\S+)/m.exec(s.body)?.[1] ?? 'ERROR';
  const name = s.name.replace(/\.trs$/, '');
  const log = parts.find((p) => p.kind === 'log' && p.name === s.name)?.body ?? '';
  // The program's source: a requested file of the same stem (`tests/test_x` ← `tests/test_x.c`).
  const file = ctx.files.map(normalizeRel).find((f) => f.replace(/\.[^./]+$/, '') === name);
  const t: TestResult = { id: name, outcome: result === 'PASS' || result === 'XFAIL' ? 'passed' : result === 'SKIP' ? 'skipped' : 'failed', ...(file ? { file } : {}) };
  if (t.outcome !== 'passed') {
    const lines = log.split('\n').filter((l) => l.trim());
    // Exit statuses above 128 are a signal's (the test driver's shell says 128 + n).
    const signal = /\(exit status: (1(?:29|[3-9]\d)|2[0-5]\d)\)/.exec(log);
    const m = firstLines([...(signal ? [`crashed: killed by signal ${Number(signal[1]) - 128}`] : []), ...lines.slice(-8)].join('\n'));
    if (m) t.message = m;
    if (t.outcome === 'failed') t.failureKind = result === 'ERROR' || signal ? 'error' : 'assertion';
  }
  return t;
}

/**
 * Requested files the compiler refused: a file error each (its tests did not build), and the unit
 * (the directory) as a build failure, so tests there the patch did not touch are not judged.
 */
function buildErrors(build: string, status: string | undefined, ctx: ReportContext, tests: readonly TestResult[]): { fileErrors: FileError[]; buildFailures: BuildFailure[] } {
  const byFile = new Map<string, string[]>();
  for (const line of build.split('\n')) {
    const m = COMPILE_ERROR.exec(line);
    if (!m) continue;
    const file = resolveFile(m[1]!, ctx);
    byFile.set(file, [...(byFile.get(file) ?? []), `${file}:${m[2]}: error: ${m[3]}`]);
  }
  const requested = ctx.files.map(normalizeRel);
  const fileErrors: FileError[] = [];
  const buildFailures: BuildFailure[] = [];
  for (const [file, errors] of byFile) {
    const message = `build failed: ${firstLines(errors.join('\n'), 6, 800)}`;
    const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
    buildFailures.push({ unit: file, dir, message });
    if (requested.includes(file) && !tests.some((t) => t.file === file)) fileErrors.push({ file, kind: 'collection', message });
  }
  if (status && status !== '0' && status !== 'configure-failed' && byFile.size === 0 && /\bundefined reference to\b|\bld returned\b/.test(build)) {
    const link = build.split('\n').filter((l) => /undefined reference to|ld returned/.test(l));
    for (const file of requested) if (!tests.some((t) => t.file === file)) fileErrors.push({ file, kind: 'collection', message: `link failed: ${firstLines(link.join('\n'), 4) ?? ''}` });
  }
  return { fileErrors, buildFailures };
}

/** No report at all (a Makefile's own `check` target): each requested file judged by the run's exit status. */
function exitVerdicts(exit: string, ctx: ReportContext, build: string): TestResult[] {
  return ctx.files.map(normalizeRel).map((file) => {
    const t: TestResult = { id: file, file, outcome: exit === '0' ? 'passed' : 'failed', fileLevel: true };
    if (exit !== '0') {
      t.failureKind = 'error';
      t.message = firstLines(build.trim().split('\n').slice(-8).join('\n')) ?? `exit status ${exit}`;
    }
    return t;
  });
}
