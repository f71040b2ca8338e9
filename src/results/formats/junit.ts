/**
 * JUnit/xUnit XML: pytest (xunit1 and xunit2), vitest's junit reporter, node --test's junit
 * reporter, mocha's xunit reporter, Maven Surefire's and Gradle's TEST-*.xml; C and C++: CTest's
 * `--output-junit`, GoogleTest's XML, Meson's JUnit log, Catch2's and doctest's junit reporters. Pure.
 */
import { XMLParser } from 'fast-xml-parser';
import type { FailureKind, FileError, TestResult } from '../types.js';
import {
  excerptForFile,
  failureKindOf,
  firstLines,
  mergeDuplicates,
  mergeFileErrors,
  normalizeRel,
  resolveFile,
  stripAnsi,
  type ParseContext,
  type ParsedReport,
} from './common.js';

export type JUnitFlavor = 'pytest' | 'vitest' | 'mocha' | 'node' | 'surefire' | 'bun' | 'deno' | 'generic' | CxxFlavor;

/**
 * C and C++ reports, ids as the framework names a test (the ecosystem adds the file): CTest's test
 * name; GoogleTest's `Suite.Name`; Meson's test name, or a GoogleTest subtest's `Suite.Name`;
 * Catch2's and doctest's test case (`case/section`). Their `status="notrun"` (GoogleTest's
 * disabled, CTest's skipped or disabled) is a skip; GoogleTest's listing (no status) is no result.
 */
export type CxxFlavor = 'ctest' | 'gtest' | 'meson' | 'catch2';
const CXX = new Set<JUnitFlavor>(['ctest', 'gtest', 'meson', 'catch2']);

export interface JUnitContext extends ParseContext {
  flavor: JUnitFlavor;
  /** The one file this report is about (node --test is run one file at a time). */
  file?: string;
  /** The run's output, to explain file-level failures the report only calls "test failed". */
  output?: string;
}

interface Problem {
  text: string;
  message?: string;
  type?: string;
}

interface RawCase {
  name: string;
  classname: string;
  file?: string;
  suites: string[];
  depth: number;
  failures: Problem[];
  errors: Problem[];
  skipped: Problem[];
  /** GoogleTest's, CTest's and Meson's `status` (`run`, `fail`, `notrun`, `disabled`). */
  status?: string;
  /** What the test printed, out and err (CTest's and Meson's failures carry their message only there). */
  systemOut?: string;
}

const ARRAYS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);
const NOT_RUN = new Set(['notrun', 'disabled']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  alwaysCreateTextNode: true,
  htmlEntities: true,
  isArray: (name) => ARRAYS.has(name),
});

/** Parse a JUnit XML document; throws when it is not XML. */
export function parseJUnit(xml: string, ctx: JUnitContext): ParsedReport {
  const doc = parser.parse(xml) as Record<string, any>;
  const cases: RawCase[] = [];
  const root = doc.testsuites ?? doc;
  if (!root || typeof root !== 'object') throw new Error('not a JUnit report: no <testsuites> or <testsuite>');
  if (!doc.testsuites && !doc.testsuite) throw new Error('not a JUnit report: no <testsuites> or <testsuite>');
  walk(root, [], 0, cases);

  const tests: TestResult[] = [];
  const fileErrors: FileError[] = [];
  for (const c of cases) {
    if (CXX.has(ctx.flavor) && !cxxCase(c, ctx.flavor)) continue;
    const who = identify(c, ctx);
    const problem = c.failures[0] ?? c.errors[0];
    if (who.fileLevel) {
      if (problem) {
        const kind = failureKindOf(problemText(problem), problem.type) === 'timeout' ? 'timeout' : 'collection';
        fileErrors.push({ file: who.file!, kind, message: fileLevelMessage(problem, who.file!, ctx) });
      } else if (c.skipped.length) {
        tests.push({ id: who.file!, file: who.file, outcome: 'skipped', message: skipMessage(c.skipped[0]) });
      }
      continue;
    }
    const t: TestResult = { id: who.id, outcome: 'passed' };
    if (who.file) t.file = who.file;
    if (problem) {
      t.outcome = 'failed';
      const text = problemText(problem);
      const type = problem.type ?? (ctx.flavor === 'pytest' ? pytestExceptionType(problem.text) : undefined);
      t.failureKind = CXX.has(ctx.flavor) ? cxxFailureKind(c, `${text}\n${c.systemOut ?? ''}`) : failureKindOf(text, type);
      t.message =
        (ctx.flavor === 'ctest' || ctx.flavor === 'meson') && (!text.trim() || CTEST_STATUS.test(text.trim()))
          ? firstLines([CTEST_STATUS.test(text.trim()) && text.trim() !== 'Failed' ? text.trim() : '', ctestOutput(c.systemOut)].filter(Boolean).join('\n'), 12, 1200)
          : ctx.flavor === 'pytest'
          ? pytestMessage(problem)
          : ctx.flavor === 'node' && problem.message // node's text is an inspected error object; its message attribute is the message
            ? firstLines(problem.message)
            : firstLines(text);
    } else if (c.skipped.length) {
      t.outcome = 'skipped';
      const m = skipMessage(c.skipped[0]);
      if (m) t.message = m;
    }
    tests.push(t);
  }
  return { tests: mergeDuplicates(tests), fileErrors: mergeFileErrors(fileErrors) };
}

/**
 * A C/C++ case that is a result: GoogleTest's listing (`--gtest_list_tests` with XML output) has
 * no status; a case not run (disabled, CTest's skip) becomes a skip.
 */
function cxxCase(c: RawCase, flavor: JUnitFlavor): boolean {
  if (flavor === 'gtest' && c.status === undefined) return false;
  if (c.status && NOT_RUN.has(c.status) && !c.skipped.length && !c.failures.length && !c.errors.length) {
    c.skipped.push({ text: '', message: c.status === 'disabled' || c.name.startsWith('DISABLED_') ? 'disabled' : 'not run' });
  }
  return true;
}

/**
 * C/C++: a `<failure>` is a failed check (GoogleTest's EXPECT/ASSERT, Catch2's REQUIRE, doctest's
 * CHECK); an `<error>`, an exception or a signal the framework caught is an error.
 */
function cxxFailureKind(c: RawCase, text: string): FailureKind {
  if (c.errors.length || /\b(SIG[A-Z]+|exception|Segmentation|signal)\b/i.test(text)) return 'error';
  return failureKindOf(text) === 'timeout' ? 'timeout' : 'assertion';
}

/** CTest 3.26+ puts only its verdict in a failure's message (`Failed`, `SEGFAULT`, `Timeout`): the test's output says more. */
const CTEST_STATUS = /^(Failed|SEGFAULT|Timeout|Subprocess aborted|Child aborted|BUS error|ILLEGAL|INTERRUPT|NUMERICAL|OTHER_FAULT|Exception|Not Run)$/i;

/** GoogleTest's, Catch2's, doctest's and Unity's own banner, summary and passing lines. */
const FRAMEWORK_CHATTER =
  /^\[(=+|-+| +PASSED +| +FAILED +| +RUN +| +OK +)\]|^(Running main\(\)|Note: Google Test filter|Filters: |Randomness seeded|Run with -\? for options|test cases?:|assertions:)|^[-=.~]{10,}\s*$|^\[doctest\] (doctest version|run with|test cases|assertions|Status)|^\S+ is a Catch2? v[\d.]+ host application|^\S+:\d+:\w+:PASS\s*$|^\d+ Tests \d+ Failures \d+ Ignored\s*$/;

/** The end of what a CTest test printed, GoogleTest's and Catch2's own summary lines left out. */
function ctestOutput(out: string | undefined): string {
  const lines = (out ?? '').split('\n').filter((l) => l.trim() && !FRAMEWORK_CHATTER.test(l));
  return lines.slice(-12).join('\n');
}

function walk(node: any, suites: string[], depth: number, out: RawCase[]): void {
  for (const tc of asArray(node.testcase)) {
    out.push({
      name: str(tc['@_name']),
      classname: str(tc['@_classname']),
      file: tc['@_file'] !== undefined ? str(tc['@_file']) : undefined,
      suites,
      depth,
      failures: asArray(tc.failure).map(problem),
      errors: asArray(tc.error).map(problem),
      skipped: asArray(tc.skipped).map(problem),
      ...(tc['@_status'] !== undefined ? { status: str(tc['@_status']) } : {}),
      ...(tc['system-out'] !== undefined || tc['system-err'] !== undefined ? { systemOut: [tc['system-out'], tc['system-err']].map(textOf).join('\n') } : {}),
    });
  }
  for (const ts of asArray(node.testsuite)) {
    walk(ts, [...suites, str(ts['@_name'])], depth + 1, out);
  }
}

function textOf(x: any): string {
  return x === undefined || x === null ? '' : typeof x === 'object' ? str(x['#text']) : str(x);
}

function asArray(x: unknown): any[] {
  return x === undefined || x === null ? [] : Array.isArray(x) ? x : [x];
}

function str(x: unknown): string {
  return x === undefined || x === null ? '' : String(x);
}

function problem(p: any): Problem {
  if (typeof p !== 'object' || p === null) return { text: str(p) };
  return { text: stripAnsi(str(p['#text'])), message: p['@_message'] !== undefined ? stripAnsi(str(p['@_message'])) : undefined, type: p['@_type'] !== undefined ? str(p['@_type']) : undefined };
}

function problemText(p: Problem): string {
  const text = p.text.trim();
  if (!text) return p.message ?? '';
  if (p.message && !text.includes(p.message.trim().split('\n')[0])) return `${p.message}\n${text}`;
  return text;
}

function skipMessage(p: Problem): string | undefined {
  const m = p.message && p.message !== 'true' ? p.message : p.text.trim();
  return firstLines(m, 2, 200);
}

interface Identity {
  id: string;
  file?: string;
  fileLevel: boolean;
}

function identify(c: RawCase, ctx: JUnitContext): Identity {
  switch (ctx.flavor) {
    case 'pytest':
      return identifyPytest(c, ctx);
    case 'vitest': {
      const file = c.classname ? resolveFile(c.classname, ctx) : ctx.file;
      const fileLevel = !!file && (c.name === c.classname || resolveFile(c.name, ctx) === file);
      return { id: joinJs(file, [c.name]), file, fileLevel };
    }
    case 'mocha': {
      const file = c.file ? resolveFile(c.file, ctx) : ctx.file ?? (ctx.files.length === 1 ? normalizeRel(ctx.files[0]) : undefined);
      return { id: joinJs(file, [c.classname, c.name]), file, fileLevel: false };
    }
    case 'node': {
      const file = ctx.file ? normalizeRel(ctx.file) : undefined;
      const named = resolveFile(c.name, ctx);
      const fileLevel = c.depth === 0 && (named === file || ctx.files.map(normalizeRel).includes(named));
      if (fileLevel) return { id: named, file: named, fileLevel };
      return { id: joinJs(file, [...c.suites, c.name]), file, fileLevel: false };
    }
    case 'bun': {
      // A <testsuite> per file; bun 1.2 nests one per describe, bun 1.1 flattens them into classname, innermost first ("inner > outer").
      const file = c.file ? resolveFile(c.file, ctx) : c.suites[0] ? resolveFile(c.suites[0], ctx) : ctx.file;
      const describes = c.suites.length > 1 ? c.suites.slice(1) : c.classname ? c.classname.replace(/&gt;/g, '>').split(' > ').reverse() : [];
      return { id: joinJs(file, [...describes, c.name]), file, fileLevel: false };
    }
    case 'deno': {
      // classname is the file (`./test/a_test.ts`); a step's name is already `test > step > …`.
      const file = c.classname ? resolveFile(c.classname, ctx) : ctx.file;
      return { id: joinJs(file, [c.name]), file, fileLevel: false };
    }
    case 'surefire': {
      // JVM ids as the ecosystem writes them: `com.example.CalcTest.adds`; the file is the requested source of the (outer) class.
      const file = jvmSourceOf(c.classname, ctx.files);
      return { id: c.classname ? `${c.classname}.${c.name}` : c.name, file, fileLevel: false };
    }
    case 'ctest':
      return { id: c.name, fileLevel: false };
    case 'gtest':
      return { id: `${c.classname}.${c.name}`, ...(c.file ? { file: resolveFile(c.file, ctx) } : {}), fileLevel: false };
    case 'meson':
      // A GoogleTest subtest sits in a suite of its own (`project.test.Suite`), classname its suite.
      return { id: c.classname && c.classname !== c.suites[c.suites.length - 1] ? `${c.classname}.${c.name}` : c.name, fileLevel: false };
    case 'catch2': {
      // doctest's classname is the test's source file; Catch2's is `<binary>.global`.
      const file = /\.(c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx)$/i.test(c.classname) ? resolveFile(c.classname, ctx) : undefined;
      return { id: c.name, ...(file ? { file } : {}), fileLevel: false };
    }
    default: {
      const file = c.file ? resolveFile(c.file, ctx) : ctx.file;
      return { id: joinJs(file, [c.classname, c.name]), file, fileLevel: false };
    }
  }
}

/** The requested source file of a JVM class (`a.b.C$Inner` → `…/a/b/C.java`, `.kt`, `.groovy`). */
export function jvmSourceOf(classname: string, files: readonly string[]): string | undefined {
  const outer = classname.split('$')[0];
  if (!outer) return undefined;
  const stem = outer.replace(/\./g, '/');
  return files.map(normalizeRel).find((f) => /\.(java|kt|groovy)$/.test(f) && (f.replace(/\.[^.]+$/, '') === stem || f.replace(/\.[^.]+$/, '').endsWith(`/${stem}`)));
}

/** `path/to/file.spec.ts > describe > test name`; empty parts dropped. */
export function joinJs(file: string | undefined, parts: string[]): string {
  return [file, ...parts].filter((p): p is string => !!p && p.length > 0).join(' > ');
}

function moduleOf(file: string): string[] {
  return file.replace(/\.py$/, '').split('/');
}

/** Map a dotted pytest classname (xunit2 has no `file` attribute) to a requested file + classes. */
function splitPytestClassname(classname: string, ctx: ParseContext): { file: string; classes: string[] } {
  const parts = classname.split('.');
  let best: { file: string; used: number; offset: number } | undefined;
  for (const f of ctx.files.map(normalizeRel).filter((f) => f.endsWith('.py'))) {
    const mod = moduleOf(f);
    for (let k = 0; k < mod.length; k++) {
      const suffix = mod.slice(k);
      if (suffix.length > parts.length) continue;
      if (suffix.every((s, i) => s === parts[i])) {
        if (!best || suffix.length > best.used || (suffix.length === best.used && k < best.offset)) best = { file: f, used: suffix.length, offset: k };
        break;
      }
    }
  }
  if (best) return { file: best.file, classes: parts.slice(best.used) };
  // Unknown file: the module ends before the first CamelCase component (a class).
  const firstClass = parts.findIndex((p, i) => i > 0 && /^[A-Z]/.test(p));
  const modParts = firstClass > 0 ? parts.slice(0, firstClass) : parts;
  return { file: `${modParts.join('/')}.py`, classes: firstClass > 0 ? parts.slice(firstClass) : [] };
}

function identifyPytest(c: RawCase, ctx: JUnitContext): Identity {
  const collectionLike =
    !c.classname && (c.errors.some((e) => /collection failure/i.test(e.message ?? '')) || c.skipped.length > 0 || c.failures.length > 0 || c.errors.length > 0);
  if (collectionLike) {
    const file = c.file ? resolveFile(c.file, ctx) : splitPytestClassname(c.name, ctx).file;
    return { id: file, file, fileLevel: true };
  }
  let file: string;
  let classes: string[];
  if (c.file) {
    file = resolveFile(c.file, ctx);
    const reported = moduleOf(normalizeRel(c.file)).join('.');
    const own = moduleOf(file).join('.');
    const prefix = [reported, own].find((m) => c.classname === m || c.classname.startsWith(`${m}.`));
    classes = prefix !== undefined ? c.classname.slice(prefix.length).split('.').filter(Boolean) : splitPytestClassname(c.classname, ctx).classes;
  } else {
    ({ file, classes } = splitPytestClassname(c.classname, ctx));
  }
  return { id: [file, ...classes, c.name].join('::'), file, fileLevel: false };
}

/** The exception type on pytest's last traceback line, `path.py:12: TypeError`. */
function pytestExceptionType(text: string): string | undefined {
  const m = /^\S[^\n]*:\d+: ([A-Za-z_][\w.]*)\s*$/m.exec(lastNonEmptyLines(text, 3));
  return m?.[1];
}

function lastNonEmptyLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

/** pytest: the `E   …` lines are the message; otherwise the `message` attribute. */
function pytestMessage(p: Problem): string | undefined {
  const eLines = p.text
    .split('\n')
    .filter((l) => /^E( |$)/.test(l))
    .map((l) => l.replace(/^E {0,3}/, ''));
  if (eLines.length) return firstLines(eLines.join('\n'));
  return firstLines(p.message ?? p.text);
}

function fileLevelMessage(p: Problem, file: string, ctx: JUnitContext): string {
  if (ctx.flavor === 'pytest') return pytestMessage(p) ?? 'collection failure';
  const text = problemText(p);
  // node --test only says "test failed": the reason is in the output.
  if (ctx.flavor === 'node' && ctx.output && /^test failed$/i.test((p.message ?? '').trim())) {
    return excerptForFile(ctx.output, file) || firstLines(text) || 'test file failed';
  }
  return firstLines(text) ?? 'test file failed to load';
}
