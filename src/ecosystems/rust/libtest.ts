/**
 * `cargo test` output to per-test results, from libtest's per-test lines (its JSON output is
 * unstable). Pure.
 *
 * - Each test binary starts with cargo's `Running unittests src/lib.rs (target/debug/deps/x-…)`
 *   (`Running target/debug/deps/x-…` before cargo 1.52) and ends with `test result:`. Ids are
 *   `<target source>::<test path>` (`src/lib.rs::tests::adds`, `tests/api.rs::same`), prefixed
 *   with the package's directory in a workspace (the command marks each package's run with a
 *   `swt-cargo-package:` line, since cargo prints target paths relative to the package).
 * - `test x ... ok|FAILED|ignored` gives the outcome; `---- x stdout ----` blocks the message.
 * - A build error (`error: could not compile`) fails every test of the package: a build failure
 *   of that package, and a file error for each requested file in it.
 * - A binary that stops before `test result:` crashed (a signal, `process::abort`) or was killed
 *   for time: tests libtest said were still running fail as timeouts, and the target's file gets
 *   a file error.
 */
import { firstLines, stripAnsi } from '../../results/formats/common.js';
import type { FileError, TestResult } from '../../results/types.js';
import type { BuildFailure } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

/** The line the command writes before each package's `cargo test`. */
export const PACKAGE_MARKER = 'swt-cargo-package:';

interface Binary {
  /** Id prefix: the target's source path (package-relative) or, for old cargo, the binary's name. */
  target: string;
  /** Repository-relative source file of the target, when cargo named it. */
  file?: string;
  pkgDir: string;
  finished: boolean;
  running: Set<string>;
}

const RUNNING = /^\s*Running (?:(unittests|tests|benches) )?(\S+)(?: \((\S+)\))?\s*$/;
const DOC_TESTS = /^\s*Doc-tests (\S+)/;
const TEST_LINE = /^test (.+?) \.\.\. (ok|FAILED|ignored)\b(?:, (.*))?$/;
const STILL_RUNNING = /^test (.+?) has been running for over \d+ seconds$/;
const FAILURE_BLOCK = /^---- (.+?) stdout ----$/;
const RESULT = /^test result: (ok|FAILED)\./;
const COMPILE_FAILED = /^error: could not compile `([^`]+)`/;
const CRASH = /process didn't exit successfully: .*\((signal: \d+[^)]*|exit (?:status|code): ?\d+)\)/;

function joinPath(dir: string, rel: string): string {
  return dir ? `${dir}/${rel}` : rel;
}

/** `target/debug/deps/glob_std-0123abcd` → `glob_std`. */
function binaryName(path: string): string {
  const base = path.split('/').pop() ?? path;
  return base.replace(/-[0-9a-f]{8,}$/, '');
}

/** `src/a/b.rs` and `src/a/b/mod.rs` → `a::b` (lib.rs / main.rs → ''). */
export function modulePath(srcRel: string): string | undefined {
  const m = /^src\/(.+)\.rs$/.exec(srcRel);
  if (!m) return undefined;
  const parts = m[1].split('/');
  if (parts[parts.length - 1] === 'mod') parts.pop();
  if (parts.length === 1 && (parts[0] === 'lib' || parts[0] === 'main')) return '';
  return parts.join('::');
}

/** The requested source file a unit test's module path lives in (longest module match), else the target's. */
function fileOfUnitTest(name: string, bin: Binary, requested: readonly string[]): string | undefined {
  const rel = bin.pkgDir && bin.target.startsWith(`${bin.pkgDir}/`) ? bin.target.slice(bin.pkgDir.length + 1) : bin.target;
  if (!bin.file || !/^src\/(lib|main)\.rs$/.test(rel)) return bin.file;
  let best: { file: string; len: number } | undefined;
  for (const f of requested) {
    const rel = bin.pkgDir ? (f.startsWith(`${bin.pkgDir}/`) ? f.slice(bin.pkgDir.length + 1) : undefined) : f;
    const mod = rel === undefined ? undefined : modulePath(rel);
    if (!mod) continue;
    if ((name === mod || name.startsWith(`${mod}::`)) && (!best || mod.length > best.len)) best = { file: f, len: mod.length };
  }
  return best?.file ?? bin.file;
}

/** The package directory of a repository path: what precedes its first `src/` or `tests/` segment. */
export function packageDirOf(file: string): string {
  const segs = file.split('/');
  const i = segs.findIndex((s, k) => k < segs.length - 1 && (s === 'src' || s === 'tests' || s === 'benches' || s === 'examples'));
  return i <= 0 ? '' : segs.slice(0, i).join('/');
}

export function parseLibtest(content: string, ctx: ReportContext): OneReport {
  const reader = new LibtestReader(ctx.files);
  for (const raw of stripAnsi(content).replace(/\r\n?/g, '\n').split('\n')) reader.line(raw.trimEnd());
  return reader.finish();
}

/** One pass over cargo test's output: the binaries it ran, their tests, failure blocks and the compiler's errors. */
class LibtestReader {
  readonly tests: TestResult[] = [];
  readonly byId = new Map<string, TestResult>();
  readonly fileErrors: FileError[] = [];
  readonly buildFailures: BuildFailure[] = [];
  readonly errors: string[] = [];
  readonly binaries: Binary[] = [];
  pkgDir = '';
  bin: Binary | undefined;
  block: { id: string; lines: string[] } | undefined;
  compilerLines: string[] = [];
  crashed: string | undefined;

  readonly requested: readonly string[];

  constructor(requested: readonly string[]) {
    this.requested = requested;
  }

  line(line: string): void {
    if (line.startsWith(PACKAGE_MARKER)) {
      this.closeBlock();
      const dir = line.slice(PACKAGE_MARKER.length).trim();
      this.pkgDir = dir === '.' ? '' : dir;
      return;
    }
    if (this.binaryStarts(line)) return;
    if (this.bin && !this.bin.finished && this.inBinary(this.bin, line)) return;
    const m = CRASH.exec(line);
    if (m) {
      this.crashed = m[1];
      return;
    }
    this.compilerLine(line);
  }

  /** `Running …` or `Doc-tests …`: a new binary's output begins. */
  binaryStarts(line: string): boolean {
    const { pkgDir } = this;
    let m = RUNNING.exec(line);
    if (m && (m[3] || m[2].includes('target/') || m[2].includes('deps/'))) {
      this.closeBlock();
      const path = m[3] ? m[2] : undefined;
      this.bin = path
        ? { target: joinPath(pkgDir, path), file: joinPath(pkgDir, path), pkgDir, finished: false, running: new Set() }
        : { target: joinPath(pkgDir, binaryName(m[2])), pkgDir, finished: false, running: new Set() };
      this.binaries.push(this.bin);
      return true;
    }
    m = DOC_TESTS.exec(line);
    if (!m) return false;
    this.closeBlock();
    this.bin = { target: joinPath(pkgDir, `doc-tests ${m[1]}`), pkgDir, finished: false, running: new Set() };
    this.binaries.push(this.bin);
    return true;
  }

  /** A line of a running binary's output: a test's result, one still running, a failure block, the summary. */
  inBinary(bin: Binary, line: string): boolean {
    let m = TEST_LINE.exec(line);
    if (m) {
      const name = m[1].replace(/ - should panic$/, '');
      this.record(bin, name, m[2] === 'ok' ? 'passed' : m[2] === 'FAILED' ? 'failed' : 'skipped', m[3]);
      return true;
    }
    m = STILL_RUNNING.exec(line);
    if (m) {
      bin.running.add(m[1]);
      return true;
    }
    m = FAILURE_BLOCK.exec(line);
    if (m) {
      this.closeBlock();
      this.block = { id: idOf(bin, m[1].replace(/ - should panic$/, '')), lines: [] };
      return true;
    }
    if (RESULT.test(line)) {
      this.closeBlock();
      bin.finished = true;
      return true;
    }
    if (!this.block) return false;
    if (line === 'failures:') this.closeBlock();
    else this.block.lines.push(line);
    return true;
  }

  /** The compiler's diagnostics: the error lines and where they point, until a crate fails to compile. */
  compilerLine(line: string): void {
    if ((/^error(\[E\d+\])?: /.test(line) && !/^error: (test failed|\d+ targets? failed|could not compile)/.test(line)) || (this.compilerLines.length && /^\s+--> /.test(line))) {
      this.compilerLines.push(line);
    }
    const m = COMPILE_FAILED.exec(line);
    if (!m) return;
    const message = firstLines(this.compilerLines.join('\n')) ?? line;
    this.buildFailures.push({ unit: m[1], dir: this.pkgDir, message });
    for (const f of this.requested) if (packageDirOf(f) === this.pkgDir) this.fileErrors.push({ file: f, kind: 'collection', message });
    this.compilerLines = [];
  }

  closeBlock(): void {
    const { block } = this;
    if (!block) return;
    const t = this.byId.get(block.id);
    const text = block.lines.join('\n').trim();
    if (t && t.outcome === 'failed' && text) t.message = firstLines(stripPanicPrefix(text));
    if (t && t.outcome === 'failed') t.failureKind = /has overflowed its stack|timed out/i.test(text) ? (/timed out/i.test(text) ? 'timeout' : 'error') : /panicked at/.test(text) ? 'assertion' : 'error';
    this.block = undefined;
  }

  record(b: Binary, name: string, outcome: TestResult['outcome'], reason?: string): void {
    const id = idOf(b, name);
    const t: TestResult = { id, outcome };
    const file = fileOfUnitTest(name, b, this.requested);
    if (file) t.file = file;
    if (outcome === 'failed') t.failureKind = 'assertion';
    if (outcome === 'skipped' && reason) t.message = reason;
    b.running.delete(name);
    const prev = this.byId.get(id);
    if (prev) Object.assign(prev, t);
    else {
      this.byId.set(id, t);
      this.tests.push(t);
    }
  }

  /** Binaries that did not finish: their running tests timed out, their files did not run. */
  finish(): OneReport {
    this.closeBlock();
    const { tests, fileErrors, errors, buildFailures, requested, crashed } = this;
    let complete = buildFailures.length === 0;
    for (const b of this.binaries) {
      if (b.finished) continue;
      complete = false;
      for (const name of b.running) {
        this.record(b, name, 'failed');
        const t = this.byId.get(idOf(b, name))!;
        t.failureKind = 'timeout';
        t.message = 'still running when the run ended (libtest: has been running for over 60 seconds)';
      }
      const why = crashed ? `the test binary ${b.target} did not finish (${crashed})` : `the test binary ${b.target} did not finish`;
      errors.push(why);
      if (b.file && requested.includes(b.file) && !crashed) continue;
      if (b.file && requested.includes(b.file)) fileErrors.push({ file: b.file, kind: 'collection', message: why });
    }
    return { tests, fileErrors, complete, errors, ...(buildFailures.length ? { buildFailures } : {}) };
  }
}

const idOf = (b: Binary, name: string) => `${b.target}::${name}`;

/** libtest ≥ 1.73 puts `thread 'x' (id) panicked at file:line:col:` on its own line; older on the message's. */
function stripPanicPrefix(text: string): string {
  return text.replace(/^thread '[^']*'(?: \(\d+\))? panicked at /m, 'panicked at ');
}
