/**
 * ava's `--tap` output, one file per invocation (ava prefixes titles with the file only when it
 * runs several, so one file per run keeps titles as the test file names them). Pure.
 *
 * A point is a test (`ok 1 - title`, `# SKIP`, `# TODO`), except the points ava adds for what
 * happened outside any test: an uncaught exception or rejection (`not ok - Error: message`, its
 * YAML names the error but no assertion), a duplicate title (ava throws on registration) and
 * the worker's exit (`<file> exited with a non-zero exit code: 1`, `timed out`): those make the
 * file's error.
 */
import { Parser } from 'tap-parser';
import { excerptForFile, failureKindOf, firstLines, mergeDuplicates, normalizeRel } from '../../results/formats/common.js';
import { joinJs } from '../../results/formats/junit.js';
import type { FileError, TestResult } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

interface Point {
  name: string;
  ok: boolean;
  skip: boolean;
  todo: boolean;
  diag: Record<string, unknown>;
}

const EXITED = / exited with a non-zero exit code: \d+$| exited due to \w+$|^Timed out while running tests$|^Failed to run tests?/;

function points(text: string): { points: Point[]; planSeen: boolean } {
  const out: Point[] = [];
  let planSeen = false;
  for (const [type, data] of Parser.parse(text) as Array<[string, any]>) {
    if (type === 'plan') planSeen = true;
    if (type !== 'assert') continue;
    out.push({
      name: String(data.name ?? ''),
      ok: !!data.ok,
      skip: !!data.skip,
      todo: !!data.todo,
      diag: data.diag && typeof data.diag === 'object' ? data.diag : {},
    });
  }
  return { points: out, planSeen };
}

/** ava reports an uncaught error as a point named `<ErrorName>: <message>` whose YAML has no assertion. */
function isUncaught(p: Point): boolean {
  if (p.ok || p.diag.assertion !== undefined) return false;
  const name = typeof p.diag.name === 'string' ? p.diag.name : '';
  const message = typeof p.diag.message === 'string' ? p.diag.message : '';
  return !!name && p.name === (message ? `${name}: ${message}` : name);
}

function messageOf(p: Point): string | undefined {
  const lines = [typeof p.diag.message === 'string' ? p.diag.message : p.name];
  // ava 4/5 name the compared values `values`, ava 6 `details`.
  for (const values of [p.diag.values, p.diag.details]) {
    if (values && typeof values === 'object') {
      for (const [k, v] of Object.entries(values as Record<string, unknown>)) lines.push(k, String(v));
    }
  }
  return firstLines(lines.join('\n'));
}

export function parseAvaTap(text: string, ctx: ReportContext): OneReport {
  const file = normalizeRel(ctx.file ?? ctx.files[0] ?? '');
  const { points: all, planSeen } = points(text);
  const tests: TestResult[] = [];
  const problems: string[] = [];
  for (const p of all) {
    if (EXITED.test(p.name) || isUncaught(p)) {
      problems.push(p.name);
      continue;
    }
    const t: TestResult = { id: joinJs(file, [p.name]), file, outcome: 'passed' };
    if (p.skip || p.todo) {
      t.outcome = 'skipped';
      t.message = p.skip ? 'skipped' : 'todo';
    } else if (!p.ok) {
      t.outcome = 'failed';
      const type = typeof p.diag.name === 'string' ? p.diag.name : undefined;
      // ava wraps an exception thrown in a test as "Error thrown in test": an error, not an assertion.
      t.failureKind = p.diag.message === 'Error thrown in test' ? 'error' : p.diag.assertion !== undefined ? 'assertion' : failureKindOf(p.name, type);
      t.message = messageOf(p);
    }
    tests.push(t);
  }
  const fileErrors: FileError[] = [];
  if (problems.length) {
    const timeout = problems.some((n) => /timed out/i.test(n));
    const fromOutput = ctx.output ? excerptForFile(ctx.output, file) : '';
    fileErrors.push({ file, kind: timeout ? 'timeout' : 'collection', message: firstLines(problems.join('\n')) ?? fromOutput ?? 'test file failed' });
  }
  return { tests: mergeDuplicates(tests), fileErrors, complete: planSeen, errors: [] };
}
