/** The JSON lines of swt-bot's mocha reporter (see ../mochaReporter.ts). Pure. */
import { MOCHA_MARKER } from './mochaReporter.js';
import type { FailureKind, FileError, TestResult } from '../types.js';
import { failureKindOf, firstLines, mergeDuplicates, mergeFileErrors, normalizeRel, resolveFile, stripAnsi, type ParseContext, type ParsedReport } from './common.js';
import { joinJs } from './junit.js';

interface RecordErr {
  name?: string;
  message?: string;
  code?: string;
  timeout?: boolean;
  stack?: string;
}

interface MochaRecord {
  event: 'start' | 'end' | 'test' | 'hook' | 'load-error' | 'error';
  file?: string | null;
  title?: string[];
  state?: 'passed' | 'failed' | 'pending';
  err?: RecordErr;
  hook?: string;
}

export interface MochaReport extends ParsedReport {
  /** The run reached mocha's `end` event: every test it was going to run was reported. */
  complete: boolean;
  /** Errors outside any test or hook (the run's exit code may come from them). */
  errors: string[];
}

/** The reporter's lines that went to stdout because the report file could not be written; undefined when none did. */
export function mochaMarkerLines(output: string): string | undefined {
  const lines = stripAnsi(output)
    .split('\n')
    .map((l) => {
      const at = l.indexOf(MOCHA_MARKER);
      return at >= 0 ? l.slice(at + MOCHA_MARKER.length) : undefined;
    })
    .filter((l): l is string => l !== undefined);
  return lines.length ? lines.join('\n') : undefined;
}

/**
 * Parse the reporter's JSON lines. A line that is not JSON (a run killed mid-write) is skipped;
 * text with no record at all throws (not this reporter's output).
 */
export function parseMochaJsonl(text: string, ctx: ParseContext): MochaReport {
  const records: MochaRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as MochaRecord;
      if (r && typeof r === 'object' && typeof r.event === 'string') records.push(r);
    } catch {
      // a truncated last line
    }
  }
  if (!records.length) throw new Error('not a swt-bot mocha report: no records');
  const single = ctx.files.length === 1 ? normalizeRel(ctx.files[0]) : undefined;
  const fileOf = (r: MochaRecord) => (r.file ? resolveFile(r.file, ctx) : single);
  const tests: TestResult[] = [];
  const fileErrors: FileError[] = [];
  const errors: string[] = [];
  let complete = false;
  for (const r of records) {
    if (r.event === 'end') complete = true;
    else if (r.event === 'test') {
      const file = fileOf(r);
      const t: TestResult = { id: joinJs(file, r.title ?? []), outcome: 'passed' };
      if (file) t.file = file;
      if (r.state === 'pending') t.outcome = 'skipped';
      else if (r.state === 'failed') {
        t.outcome = 'failed';
        t.failureKind = kindOf(r.err, r.hook);
        const m = messageOf(r.err);
        t.message = r.hook ? `${r.hook} failed: ${m ?? ''}`.trim() : m;
      }
      tests.push(t);
    } else if (r.event === 'hook') {
      const file = fileOf(r);
      const message = `${(r.title ?? []).join(' > ') || 'hook'} failed: ${messageOf(r.err) ?? ''}`.trim();
      if (file) fileErrors.push({ file, kind: r.err?.timeout ? 'timeout' : 'collection', message });
      else errors.push(message);
    } else if (r.event === 'load-error') {
      const file = fileOf(r);
      const message = messageOf(r.err) ?? 'failed to load';
      if (file) fileErrors.push({ file, kind: 'collection', message: loadMessage(r.err) ?? message });
      else errors.push(message);
    } else if (r.event === 'error') {
      errors.push(messageOf(r.err) ?? 'error outside any test');
    }
  }
  // A hook failure names the file, but the file's tests decide: keep it only for files without tests.
  const withTests = new Set(tests.map((t) => t.file));
  return {
    tests: mergeDuplicates(tests),
    fileErrors: mergeFileErrors(fileErrors.filter((e) => !withTests.has(e.file))),
    complete,
    errors,
  };
}

function kindOf(err: RecordErr | undefined, hook?: string): FailureKind {
  if (err?.timeout || err?.code === 'ERR_MOCHA_TIMEOUT') return 'timeout';
  if (hook) return 'error';
  if (err?.code === 'ERR_ASSERTION') return 'assertion';
  return failureKindOf(`${err?.message ?? ''}\n${err?.stack ?? ''}`, err?.name);
}

/** A load error: its message, or for a syntax error the source line and caret V8 puts above it. */
function loadMessage(err: RecordErr | undefined): string | undefined {
  const m = messageOf(err);
  if (!err?.stack || err.name !== 'SyntaxError') return m;
  const head = err.stack.split('\n');
  const at = head.findIndex((l) => l.startsWith('SyntaxError'));
  return at > 0 ? firstLines(head.slice(0, at + 1).join('\n')) : m;
}

function messageOf(err: RecordErr | undefined): string | undefined {
  if (!err) return undefined;
  const msg = err.message ?? '';
  const named = err.name && err.name !== 'Error' && !msg.startsWith(err.name) ? `${err.name}: ${msg}` : msg;
  return firstLines(named);
}
