/** Shared helpers for the report parsers. Pure. */
import type { FailureKind, FileError, Outcome, TestResult } from '../types.js';

export interface ParsedReport {
  tests: TestResult[];
  fileErrors: FileError[];
}

export interface ParseContext {
  /** The test files that were requested, relative to the repository root. */
  files: string[];
  /** Absolute path of the repository root in the run (to relativise absolute paths). */
  root?: string;
}

export const DEFAULT_ROOT = '/testbed';
export const MESSAGE_MAX_LINES = 8;
export const MESSAGE_MAX_CHARS = 600;

// `#x1B` is how pytest's junitxml writes ESC, a character XML 1.0 cannot hold (a project whose addopts force colour).
// eslint-disable-next-line no-control-regex
const ANSI = /(?:\u001b|#x1B)\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

/** First non-empty lines of a message, trimmed and bounded. */
export function firstLines(text: string | undefined, maxLines = MESSAGE_MAX_LINES, maxChars = MESSAGE_MAX_CHARS): string | undefined {
  if (!text) return undefined;
  const lines = stripAnsi(text)
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''));
  while (lines.length && !lines[0].trim()) lines.shift();
  const kept: string[] = [];
  let blank = false;
  for (const l of lines) {
    if (kept.length >= maxLines) break;
    if (!l.trim()) {
      if (!blank && kept.length) kept.push('');
      blank = true;
      continue;
    }
    blank = false;
    kept.push(l);
  }
  while (kept.length && !kept[kept.length - 1].trim()) kept.pop();
  let out = dedent(kept).join('\n');
  if (out.length > maxChars) out = `${out.slice(0, maxChars - 1)}…`;
  return out || undefined;
}

function dedent(lines: string[]): string[] {
  const indents = lines.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length);
  const min = indents.length ? Math.min(...indents) : 0;
  return min ? lines.map((l) => l.slice(min)) : lines;
}

/** The last `maxChars` characters of an output, starting on a line boundary. */
export function tail(output: string, maxChars = 4000): string {
  const s = stripAnsi(output);
  if (s.length <= maxChars) return s;
  const cut = s.slice(s.length - maxChars);
  const nl = cut.indexOf('\n');
  return nl >= 0 && nl < 200 ? cut.slice(nl + 1) : cut;
}

/** Normalise a path a runner reported to the repository-relative form, preferring a requested file. */
export function resolveFile(reported: string, ctx: ParseContext): string {
  let p = reported.trim().replace(/\\/g, '/');
  if (p.startsWith('file://')) p = decodeURIComponent(p.slice('file://'.length));
  const root = (ctx.root ?? DEFAULT_ROOT).replace(/\/+$/, '');
  if (root && p.startsWith(`${root}/`)) p = p.slice(root.length + 1);
  p = p.replace(/^(\.\/)+/, '');
  const files = ctx.files.map(normalizeRel);
  if (files.includes(p)) return p;
  // Runner reported relative to another directory (pytest rootdir, a package subdir), or absolute elsewhere.
  const bySuffix = files.filter((f) => f.endsWith(`/${p}`) || p.endsWith(`/${f}`));
  if (bySuffix.length === 1) return bySuffix[0];
  return p;
}

export function normalizeRel(f: string): string {
  return f.trim().replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}

const TIMEOUT_RE = /\b(timed? ?out|timeout of \d+\s*ms exceeded|exceeded timeout|Timeout >\s*[\d.]+s)\b/i;
const ASSERTION_RE = /\b(AssertionError|ERR_ASSERTION|AssertionFailedError|JestAssertionError)\b|expect\((received|jest\.fn\(\))\)|^\s*assert\s|^\s*Expected\b.*\n\s*Received\b/m;

/**
 * Classify a failure from its exception type (when the report gives one) and its message:
 * an explicit type wins; then a timeout headline; then assertion markers; else an error.
 */
export function failureKindOf(text: string, type?: string): FailureKind {
  const t = (type ?? '').trim();
  if (/timeout/i.test(t)) return 'timeout';
  if (/assert/i.test(t) || /^(Expectation|Assertion)/.test(t)) return 'assertion';
  const headline = stripAnsi(text).trim().split('\n', 1)[0] ?? '';
  if (TIMEOUT_RE.test(headline)) return 'timeout';
  const generic = !t || t === 'Error' || /failure$/i.test(t) || /^pytest\./.test(t);
  if (!generic) return 'error';
  if (ASSERTION_RE.test(text)) return 'assertion';
  return 'error';
}

const RANK: Record<Outcome, number> = { failed: 2, passed: 1, skipped: 0 };

/**
 * Merge results reported twice under one id in one run (pytest teardown errors, duplicate
 * titles, tap's repeated timeout point): a failure wins over a pass, a pass over a skip.
 */
export function mergeDuplicates(tests: TestResult[]): TestResult[] {
  const byId = new Map<string, TestResult>();
  for (const t of tests) {
    const prev = byId.get(t.id);
    if (!prev || RANK[t.outcome] > RANK[prev.outcome]) byId.set(t.id, t);
  }
  return [...byId.values()];
}

/** Keep one error per file, the first. */
export function mergeFileErrors(errors: FileError[]): FileError[] {
  const byFile = new Map<string, FileError>();
  for (const e of errors) if (!byFile.has(e.file)) byFile.set(e.file, e);
  return [...byFile.values()];
}

const ERROR_LINE = /^\s*(?:Exception during run:\s*)?(?:[\w.]*(?:Error|Exception)|Error)\b(?: \[\w+\])?:/;
const STACK_FRAME = /^\s+at\s|^\s*Node\.js v\d/;

/**
 * Lines of a run's output that explain what happened to `file`: the mention of the file that
 * has an error line (`SyntaxError: …`) closest after it (or just before it), with the lines in
 * between, stack frames dropped. Falls back to the output's last lines.
 */
export function excerptForFile(output: string, file: string, maxLines = MESSAGE_MAX_LINES): string {
  const lines = stripAnsi(output).replace(/\r\n?/g, '\n').split('\n');
  let mentions = lines.map((l, i) => (l.includes(file) ? i : -1)).filter((i) => i >= 0);
  if (!mentions.length) {
    const base = file.split('/').pop() ?? file;
    mentions = lines.map((l, i) => (l.includes(base) ? i : -1)).filter((i) => i >= 0);
  }
  if (!mentions.length) return firstLines(lines.filter((l) => !STACK_FRAME.test(l)).slice(-maxLines).join('\n'), maxLines) ?? '';
  for (const at of mentions) {
    const after = lines.slice(at, at + 15).findIndex((l) => ERROR_LINE.test(l));
    if (after >= 0) return firstLines(lines.slice(at, at + after + 1 + 2).filter((l) => !STACK_FRAME.test(l)).join('\n'), maxLines) ?? '';
    const before = lines.slice(Math.max(0, at - 4), at).reverse().findIndex((l) => ERROR_LINE.test(l));
    if (before >= 0) return firstLines(lines.slice(at - before - 1, at + 1).filter((l) => !STACK_FRAME.test(l)).join('\n'), maxLines) ?? '';
  }
  return firstLines(lines.slice(mentions[0], mentions[0] + maxLines).filter((l) => !STACK_FRAME.test(l)).join('\n'), maxLines) ?? '';
}
