/**
 * `go test -json` events (test2json) to per-test results. Pure.
 *
 * - Ids are Go's own: `<import path>.<TestName>/<subtest>`; Go already numbers duplicate subtest
 *   names (`same#01`).
 * - A package whose test binary did not build ("[build failed]", `FailedBuild`, Go ≥ 1.24's
 *   `build-fail`) reports no tests: it becomes a build failure of that package (and a file error
 *   for each requested file in it), with the compiler's lines as the message: from `build-output`
 *   events (Go ≥ 1.24) or, before, from the `# <package>` block the go command writes to stderr.
 * - A test that started and never finished died with its binary: a timeout when the binary said
 *   `panic: test timed out`, else an error (a panic in another goroutine, os.Exit).
 */
import { firstLines, stripAnsi } from '../../results/formats/common.js';
import type { FailureKind, FileError, TestResult } from '../../results/types.js';
import type { BuildFailure } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

interface Event {
  Action?: string;
  Package?: string;
  ImportPath?: string;
  Test?: string;
  Output?: string;
  FailedBuild?: string;
}

interface TestState {
  pkg: string;
  name: string;
  outcome?: 'pass' | 'fail' | 'skip';
  output: string[];
}

interface PackageState {
  outcome?: 'pass' | 'fail' | 'skip';
  output: string[];
  buildFailed: boolean;
}

const NOISE = /^(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP):|PASS$|FAIL$|ok\s|FAIL\s)/;

/** The repository directory of an import path, among the directories of the requested files. */
export function packageDir(importPath: string, dirs: readonly string[]): string | undefined {
  const named = [...dirs].filter((d) => d !== '').sort((a, b) => b.length - a.length);
  const hit = named.find((d) => importPath === d || importPath.endsWith(`/${d}`));
  if (hit !== undefined) return hit;
  return dirs.includes('') ? '' : undefined;
}

/** A file's directory, '' at the root: the package a Go file belongs to. */
export function dirOf(file: string): string {
  const i = file.lastIndexOf('/');
  return i < 0 ? '' : file.slice(0, i);
}

/** The compiler's lines for a package, from the `# <pkg>` blocks the go command writes (stderr before Go 1.24). */
function buildBlock(output: string, pkg: string): string | undefined {
  const lines = stripAnsi(output).replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let inside = false;
  for (const l of lines) {
    if (l.startsWith('# ')) {
      const name = l.slice(2).split(' ')[0];
      inside = name === pkg;
      continue;
    }
    if (inside) {
      if (!l.trim() || /^(FAIL|ok)\s/.test(l) || /^\{/.test(l)) {
        inside = false;
        continue;
      }
      out.push(l);
    }
  }
  return out.length ? out.join('\n') : undefined;
}

function failureKind(text: string, timedOut: boolean): FailureKind {
  if (timedOut || /panic: test timed out/.test(text)) return 'timeout';
  if (/^panic:|\n\s*panic:|\[recovered/.test(text)) return 'error';
  return 'assertion';
}

export function parseGoTestJson(text: string, ctx: Pick<ReportContext, 'files' | 'output'>): OneReport {
  const run = readEvents(text);
  const dirs = [...new Set(ctx.files.map(dirOf))];
  const results = testResults(run, ctx.files, dirs);
  const { fileErrors, buildFailures, errors } = packageErrors(run, ctx, dirs);
  return { tests: results, fileErrors, complete: true, errors, ...(buildFailures.length ? { buildFailures } : {}) };
}

/** What `go test -json` said, by test and by package. */
interface GoRun {
  tests: Map<string, TestState>;
  packages: Map<string, PackageState>;
  buildOutput: Map<string, string[]>;
}

function readEvents(text: string): GoRun {
  const tests = new Map<string, TestState>();
  const packages = new Map<string, PackageState>();
  const buildOutput = new Map<string, string[]>();
  let events = 0;
  const pkgState = (p: string) => {
    let s = packages.get(p);
    if (!s) packages.set(p, (s = { output: [], buildFailed: false }));
    return s;
  };
  for (const line of text.split('\n')) {
    // Before Go 1.24 the go command prints a package that did not build as a plain line among the events.
    const plain = /^FAIL\s+(\S+)\s+\[(build|setup) failed\]/.exec(line);
    if (plain) {
      pkgState(plain[1]!).buildFailed = true;
      pkgState(plain[1]!).outcome = 'fail';
      continue;
    }
    if (!line.startsWith('{')) continue;
    let e: Event;
    try {
      e = JSON.parse(line) as Event;
    } catch {
      continue; // a line cut by a killed run
    }
    events++;
    if (e.Action === 'build-output' && e.ImportPath) {
      const pkg = e.ImportPath.split(' ')[0]!;
      const lines = buildOutput.get(pkg) ?? [];
      if (!e.Output?.startsWith('# ')) lines.push((e.Output ?? '').replace(/\n$/, ''));
      buildOutput.set(pkg, lines);
      continue;
    }
    if (e.Action === 'build-fail' && e.ImportPath) {
      pkgState(e.ImportPath.split(' ')[0]!).buildFailed = true;
      continue;
    }
    if (!e.Package) continue;
    const pkg = pkgState(e.Package);
    if (!e.Test) {
      if (e.Action === 'output' && e.Output) {
        pkg.output.push(e.Output);
        if (/\[(build|setup) failed\]/.test(e.Output)) pkg.buildFailed = true;
      } else if (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') {
        pkg.outcome = e.Action;
        if (e.FailedBuild) pkg.buildFailed = true;
      }
      continue;
    }
    const id = `${e.Package}.${e.Test}`;
    let t = tests.get(id);
    if (!t) tests.set(id, (t = { pkg: e.Package, name: e.Test, output: [] }));
    if (e.Action === 'output' && e.Output) t.output.push(e.Output);
    else if (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') t.outcome = e.Action;
  }
  if (events === 0 && text.trim()) throw new Error('not go test -json output: no JSON events');
  return { tests, packages, buildOutput };
}

/** Each test's outcome; one that started and never finished died with its binary (a timeout, a crash). */
function testResults({ tests, packages }: GoRun, files: readonly string[], dirs: string[]): TestResult[] {
  const fileOf = (pkg: string): string | undefined => {
    const d = packageDir(pkg, dirs);
    return d === undefined ? undefined : files.find((f) => dirOf(f) === d);
  };
  const results: TestResult[] = [];
  for (const [id, t] of tests) {
    const pkg = packages.get(t.pkg)!;
    const pkgText = pkg.output.join('');
    const timedOut = /panic: test timed out/.test(pkgText) || t.output.some((o) => /panic: test timed out/.test(o));
    const file = fileOf(t.pkg);
    const base = { id, ...(file ? { file } : {}) };
    const said = firstLines(t.output.filter((o) => !NOISE.test(o.trim())).join(''));
    if (t.outcome === 'pass') results.push({ ...base, outcome: 'passed' });
    else if (t.outcome === 'skip') results.push({ ...base, outcome: 'skipped', ...(said ? { message: said } : {}) });
    else if (t.outcome === 'fail') results.push({ ...base, outcome: 'failed', failureKind: failureKind(t.output.join(''), false), ...(said ? { message: said } : {}) });
    else {
      // Started, never finished: the binary died under it.
      const all = t.output.join('') + pkgText;
      const why = timedOut ? firstLines(all.slice(all.indexOf('panic: test timed out'))) : firstLines(pkgText) ?? said;
      results.push({ ...base, outcome: 'failed', failureKind: timedOut ? 'timeout' : 'error', ...(why ? { message: why } : {}) });
    }
  }
  return results;
}

/** Packages that did not build, or whose binary failed before any test: their files' errors. */
function packageErrors({ tests, packages, buildOutput }: GoRun, ctx: Pick<ReportContext, 'files' | 'output'>, dirs: string[]): { fileErrors: FileError[]; buildFailures: BuildFailure[]; errors: string[] } {
  const files = ctx.files;
  const fileErrors: FileError[] = [];
  const buildFailures: BuildFailure[] = [];
  const errors: string[] = [];
  for (const [p, s] of packages) {
    const d = packageDir(p, dirs);
    const inPkg = d === undefined ? [] : files.filter((f) => dirOf(f) === d);
    if (s.buildFailed) {
      const message = firstLines(buildOutput.get(p)?.join('\n') ?? buildBlock(ctx.output, p) ?? s.output.join(''), 12) ?? 'build failed';
      buildFailures.push({ unit: p, dir: d ?? p, message });
      for (const f of inPkg) fileErrors.push({ file: f, kind: 'collection', message });
      continue;
    }
    const hasTests = [...tests.values()].some((t) => t.pkg === p);
    if (s.outcome === 'fail' && !hasTests) {
      // The binary failed before any test (TestMain, init, a flag): the package's files did not run.
      const message = firstLines(s.output.filter((o) => !/^(FAIL|ok)\s/.test(o)).join('')) ?? 'the test binary failed before running a test';
      if (inPkg.length) for (const f of inPkg) fileErrors.push({ file: f, kind: 'collection', message });
      else errors.push(message);
    }
  }
  return { fileErrors, buildFailures, errors };
}
