/**
 * TAP from node-tap (nested subtests, one top-level subtest per file) and tape (flat: a
 * `# name` comment opens each test, its assertions follow). Pure.
 */
import { Parser } from 'tap-parser';
import type { FailureKind, FileError, TestResult } from '../types.js';
import {
  excerptForFile,
  failureKindOf,
  firstLines,
  mergeDuplicates,
  mergeFileErrors,
  normalizeRel,
  resolveFile,
  type ParseContext,
  type ParsedReport,
} from './common.js';
import { joinJs } from './junit.js';

export interface TapContext extends ParseContext {
  /** The one file this stream is about (tape runs one file per invocation); else top-level subtests are files. */
  file?: string;
  /** The run's output (stderr holds crashes that the TAP stream does not). */
  output?: string;
}

interface Point {
  name: string;
  ok: boolean;
  skip: boolean | string;
  todo: boolean | string;
  diag: Record<string, unknown> | null;
  /** Points of the subtest this point closes; null when it is a plain assertion. */
  children: Point[] | null;
  /** A subtest that never closed (the process died inside it). */
  incomplete?: boolean;
}

interface Stream {
  points: Point[];
  /** Comments and points in order, for tape's flat grouping. */
  items: Array<{ comment: string } | { point: Point } | { plan: true }>;
  planSeen: boolean;
  bailout: boolean;
}

type EventLog = Array<[string, ...any[]]>;

/** Parse a TAP stream into tests and file errors. */
export function parseTap(text: string, ctx: TapContext): ParsedReport {
  const stream = build(Parser.parse(text) as EventLog);
  const tests: TestResult[] = [];
  const fileErrors: FileError[] = [];
  const nested = stream.points.some((p) => p.children !== null);
  if (ctx.file) {
    const file = normalizeRel(ctx.file);
    if (nested) collectNested(stream.points, file, [], tests);
    else collectFlat(stream, file, ctx, tests);
  } else if (nested) {
    for (const p of stream.points) {
      const file = resolveFile(p.name, ctx);
      const inner = p.children ?? [];
      if (inner.length === 0) {
        if (p.skip || p.todo) tests.push({ id: file, file, outcome: 'skipped', message: reason(p) });
        else if (!p.ok) fileErrors.push({ file, kind: isTimeout(p) ? 'timeout' : 'collection', message: fileMessage(p, file, ctx) });
        continue;
      }
      // A file of bare assertions (no subtests) is one test named after the file.
      if (!inner.some((c) => c.children !== null)) tests.push(judge(p, inner, file, []));
      else collectNested(inner, file, [], tests);
    }
  } else {
    collectFlat(stream, undefined, ctx, tests);
  }
  return { tests: mergeDuplicates(tests), fileErrors: mergeFileErrors(fileErrors) };
}

function build(events: EventLog): Stream {
  const s: Stream = { points: [], items: [], planSeen: false, bailout: false };
  let pending: { stream: Stream; name: string } | null = null;
  for (const [type, data] of events) {
    if (type === 'child') {
      if (pending) closeIncomplete(s, pending);
      const child = build(data as EventLog);
      pending = { stream: child, name: subtestName(child) };
    } else if (type === 'assert') {
      const r = data as any;
      const p: Point = {
        name: String(r.name ?? ''),
        ok: !!r.ok,
        skip: r.skip || false,
        todo: r.todo || false,
        diag: r.diag && typeof r.diag === 'object' ? r.diag : null,
        children: pending ? pending.stream.points : null,
      };
      pending = null;
      s.points.push(p);
      s.items.push({ point: p });
    } else if (type === 'comment') {
      s.items.push({ comment: String(data) });
    } else if (type === 'plan') {
      s.planSeen = true;
      s.items.push({ plan: true });
    } else if (type === 'bailout') {
      s.bailout = true;
    }
  }
  if (pending) closeIncomplete(s, pending);
  return s;
}

function closeIncomplete(s: Stream, pending: { stream: Stream; name: string }): void {
  const p: Point = { name: pending.name, ok: false, skip: false, todo: false, diag: null, children: pending.stream.points, incomplete: true };
  s.points.push(p);
  s.items.push({ point: p });
}

function subtestName(child: Stream): string {
  for (const it of child.items) {
    if ('comment' in it) {
      const m = /^#\s*Subtest:\s*(.*)$/.exec(it.comment.trim());
      if (m) return m[1].trim();
    }
  }
  return '';
}

/**
 * node-tap: a subtest whose points are plain assertions is a test; a subtest of subtests is a
 * suite (and a test too when it has failing-capable assertions of its own). At a level that has
 * subtests, a plain point with a SKIP/TODO directive is a skipped subtest.
 */
function collectNested(points: Point[], file: string | undefined, path: string[], out: TestResult[]): void {
  for (const p of points) {
    if (p.children === null) {
      if (p.skip || p.todo) out.push({ id: joinJs(file, [...path, p.name]), ...(file ? { file } : {}), outcome: 'skipped', message: reason(p) });
      continue;
    }
    const hasSubtests = p.children.some((c) => c.children !== null);
    if (!hasSubtests) {
      out.push(judge(p, p.children, file, [...path, p.name]));
      continue;
    }
    collectNested(p.children, file, [...path, p.name], out);
    const own = p.children.filter((c) => c.children === null && !c.skip && !c.todo);
    // Its own result already reflects its subtests: judge it on its own assertions only.
    if (own.length || p.incomplete) out.push(judge({ ...p, ok: true }, own, file, [...path, p.name]));
  }
}

function judge(p: Point, assertions: Point[], file: string | undefined, path: string[]): TestResult {
  const t: TestResult = { id: joinJs(file, path), outcome: 'passed' };
  if (file) t.file = file;
  if (p.skip || p.todo) {
    t.outcome = 'skipped';
    const r = reason(p);
    if (r) t.message = r;
    return t;
  }
  const failed = assertions.find((a) => !a.ok && !a.todo && !a.skip);
  if (p.ok && !failed && !p.incomplete) return t;
  t.outcome = 'failed';
  const culprit = failed ?? p;
  t.failureKind = p.incomplete && !failed ? 'error' : kindOf(culprit);
  t.message = p.incomplete && !failed ? 'the test process died inside this test' : messageOf(culprit);
  return t;
}

/** tape: `# name` opens a test; `# SKIP name` / `# TODO name` mark it; the plan ends the tests. */
function collectFlat(stream: Stream, file: string | undefined, ctx: TapContext, out: TestResult[]): void {
  interface Group { name: string; skip: boolean; todo: boolean; points: Point[] }
  const groups: Group[] = [];
  let current: Group | null = null;
  let planSeen = false;
  for (const it of stream.items) {
    if ('plan' in it) {
      planSeen = true;
      continue;
    }
    if ('comment' in it) {
      if (planSeen) continue;
      const c = it.comment.replace(/^#\s?/, '').replace(/\s+$/, '');
      if (/^(tests|pass|fail|todo|skip)\s+\d+$|^ok$|^test count\(/.test(c) || /^Subtest:/.test(c)) continue;
      const m = /^(SKIP|TODO)\s+(.*)$/.exec(c);
      current = { name: m ? m[2] : c, skip: m?.[1] === 'SKIP', todo: m?.[1] === 'TODO', points: [] };
      groups.push(current);
    } else if (current) {
      current.points.push(it.point);
    } else {
      // An assertion outside any named test: its own test.
      groups.push({ name: it.point.name, skip: !!it.point.skip, todo: !!it.point.todo, points: [it.point] });
    }
  }
  const complete = stream.planSeen && !stream.bailout;
  groups.forEach((g, i) => {
    const t: TestResult = { id: joinJs(file, [g.name]), outcome: 'passed' };
    if (file) t.file = file;
    const failed = g.points.find((p) => !p.ok && !p.todo && !p.skip);
    const crashed = !complete && i === groups.length - 1 && !failed;
    if (g.skip || g.todo || (g.points.length > 0 && g.points.every((p) => p.skip || p.todo))) {
      t.outcome = 'skipped';
      t.message = g.skip ? 'skipped' : 'todo';
    } else if (failed) {
      t.outcome = 'failed';
      t.failureKind = kindOf(failed);
      t.message = messageOf(failed);
    } else if (crashed) {
      t.outcome = 'failed';
      t.failureKind = 'error';
      t.message = (file && ctx.output ? excerptForFile(ctx.output, file) : '') || 'the test process died inside this test';
    }
    out.push(t);
  });
}

function isTimeout(p: Point): boolean {
  return kindOf(p) === 'timeout';
}

function kindOf(p: Point): FailureKind {
  const d = p.diag ?? {};
  if (d.expired !== undefined || /^timeout!?$/i.test(p.name)) return 'timeout';
  const type = typeof d.type === 'string' ? d.type : undefined;
  if (d.operator === 'error') return failureKindOf(`${p.name}\n${String(d.stack ?? '')}`, type ?? errorTypeOf(p.name));
  if (type) return failureKindOf(p.name, type);
  if ('compare' in d || 'diff' in d || 'found' in d || 'wanted' in d || 'expected' in d || 'actual' in d || d.operator !== undefined) return 'assertion';
  return failureKindOf(`${p.name}\n${String(d.stack ?? '')}`);
}

function errorTypeOf(name: string): string | undefined {
  return /^([A-Z]\w*(Error|Exception)):/.exec(name)?.[1];
}

function messageOf(p: Point): string | undefined {
  const d = p.diag ?? {};
  const lines = [p.name];
  if (typeof d.diff === 'string') lines.push(...d.diff.split('\n').filter((l) => /^[-+](?![-+]{2})/.test(l)));
  else if ('expected' in d || 'actual' in d) lines.push(`expected: ${show(d.expected ?? d.wanted)}`, `actual: ${show(d.actual ?? d.found)}`);
  else if ('wanted' in d || 'found' in d) lines.push(`wanted: ${show(d.wanted)}`, `found: ${show(d.found)}`);
  return firstLines(lines.join('\n'));
}

function show(v: unknown): string {
  return typeof v === 'string' ? v.trim() : JSON.stringify(v);
}

function reason(p: Point): string | undefined {
  const r = p.skip || p.todo;
  return typeof r === 'string' && r ? r : p.skip ? 'skipped' : p.todo ? 'todo' : undefined;
}

function fileMessage(p: Point, file: string, ctx: TapContext): string {
  const fromOutput = ctx.output ? excerptForFile(ctx.output, file) : '';
  const d = p.diag ?? {};
  const exit = d.exitCode !== undefined && d.exitCode !== null ? `exit code ${String(d.exitCode)}` : d.signal ? `signal ${String(d.signal)}` : '';
  return fromOutput || [p.name, exit].filter(Boolean).join(': ') || 'test file failed';
}
