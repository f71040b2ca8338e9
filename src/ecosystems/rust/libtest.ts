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
import { firstLines, stripAnsi } from '../../harness/parsers/common.js';
import type { FileError, TestResult } from '../../harness/types.js';
import type { BuildFailure, OneReport, ReportContext } from '../types.js';

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
  const lines = stripAnsi(content).replace(/\r\n?/g, '\n').split('\n');
  const requested = ctx.files;
  const tests: TestResult[] = [];
  const byId = new Map<string, TestResult>();
  const fileErrors: FileError[] = [];
  const buildFailures: BuildFailure[] = [];
  const errors: string[] = [];
  const binaries: Binary[] = [];
  let pkgDir = '';
  let bin: Binary | undefined;
  let block: { id: string; lines: string[] } | undefined;
  let compilerLines: string[] = [];
  let crashed: string | undefined;

  const idOf = (b: Binary, name: string) => `${b.target}::${name}`;
  const closeBlock = () => {
    if (!block) return;
    const t = byId.get(block.id);
    const text = block.lines.join('\n').trim();
    if (t && t.outcome === 'failed' && text) t.message = firstLines(stripPanicPrefix(text));
    if (t && t.outcome === 'failed') t.failureKind = /has overflowed its stack|timed out/i.test(text) ? (/timed out/i.test(text) ? 'timeout' : 'error') : /panicked at/.test(text) ? 'assertion' : 'error';
    block = undefined;
  };
  const record = (b: Binary, name: string, outcome: TestResult['outcome'], reason?: string) => {
    const id = idOf(b, name);
    const t: TestResult = { id, outcome };
    const file = fileOfUnitTest(name, b, requested);
    if (file) t.file = file;
    if (outcome === 'failed') t.failureKind = 'assertion';
    if (outcome === 'skipped' && reason) t.message = reason;
    b.running.delete(name);
    const prev = byId.get(id);
    if (prev) Object.assign(prev, t);
    else {
      byId.set(id, t);
      tests.push(t);
    }
  };

  for (const raw of lines) {
    const line = raw.trimEnd();
    if (line.startsWith(PACKAGE_MARKER)) {
      closeBlock();
      const dir = line.slice(PACKAGE_MARKER.length).trim();
      pkgDir = dir === '.' ? '' : dir;
      continue;
    }
    let m = RUNNING.exec(line);
    if (m && (m[3] || m[2].includes('target/') || m[2].includes('deps/'))) {
      closeBlock();
      const path = m[3] ? m[2] : undefined;
      bin = path
        ? { target: joinPath(pkgDir, path), file: joinPath(pkgDir, path), pkgDir, finished: false, running: new Set() }
        : { target: joinPath(pkgDir, binaryName(m[2])), pkgDir, finished: false, running: new Set() };
      binaries.push(bin);
      continue;
    }
    m = DOC_TESTS.exec(line);
    if (m) {
      closeBlock();
      bin = { target: joinPath(pkgDir, `doc-tests ${m[1]}`), pkgDir, finished: false, running: new Set() };
      binaries.push(bin);
      continue;
    }
    if (bin && !bin.finished) {
      m = TEST_LINE.exec(line);
      if (m) {
        const name = m[1].replace(/ - should panic$/, '');
        record(bin, name, m[2] === 'ok' ? 'passed' : m[2] === 'FAILED' ? 'failed' : 'skipped', m[3]);
        continue;
      }
      m = STILL_RUNNING.exec(line);
      if (m) {
        bin.running.add(m[1]);
        continue;
      }
      m = FAILURE_BLOCK.exec(line);
      if (m) {
        closeBlock();
        block = { id: idOf(bin, m[1].replace(/ - should panic$/, '')), lines: [] };
        continue;
      }
      if (RESULT.test(line)) {
        closeBlock();
        bin.finished = true;
        continue;
      }
      if (block) {
        if (line === 'failures:') closeBlock();
        else block.lines.push(line);
        continue;
      }
    }
    m = CRASH.exec(line);
    if (m) {
      crashed = m[1];
      continue;
    }
    // The compiler's diagnostics: the error lines and where they point.
    if ((/^error(\[E\d+\])?: /.test(line) && !/^error: (test failed|\d+ targets? failed|could not compile)/.test(line)) || (compilerLines.length && /^\s+--> /.test(line))) {
      compilerLines.push(line);
    }
    m = COMPILE_FAILED.exec(line);
    if (m) {
      const message = firstLines(compilerLines.join('\n')) ?? line;
      buildFailures.push({ unit: m[1], dir: pkgDir, message });
      for (const f of requested) if (packageDirOf(f) === pkgDir) fileErrors.push({ file: f, kind: 'collection', message });
      compilerLines = [];
      continue;
    }
  }
  closeBlock();

  let complete = buildFailures.length === 0;
  for (const b of binaries) {
    if (b.finished) continue;
    complete = false;
    for (const name of b.running) {
      record(b, name, 'failed');
      const t = byId.get(idOf(b, name))!;
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

/** libtest ≥ 1.73 puts `thread 'x' (id) panicked at file:line:col:` on its own line; older on the message's. */
function stripPanicPrefix(text: string): string {
  return text.replace(/^thread '[^']*'(?: \(\d+\))? panicked at /m, 'panicked at ');
}
