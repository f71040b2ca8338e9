/** jest `--json` reports. Pure. */
import type { FileError, TestResult } from '../types.js';
import {
  failureKindOf,
  firstLines,
  mergeDuplicates,
  mergeFileErrors,
  resolveFile,
  stripAnsi,
  type ParseContext,
  type ParsedReport,
} from './common.js';
import { joinJs } from './junit.js';

const SKIPPED = new Set(['pending', 'skipped', 'todo', 'disabled']);

/** Parse jest's `--json` output; throws when it is not a jest report. */
export function parseJestJson(json: string, ctx: ParseContext): ParsedReport {
  const doc = JSON.parse(json) as any;
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.testResults)) throw new Error('not a jest --json report: no testResults');
  const tests: TestResult[] = [];
  const fileErrors: FileError[] = [];
  for (const suite of doc.testResults as any[]) {
    const file = resolveFile(String(suite.name ?? suite.testFilePath ?? ''), ctx);
    const assertions: any[] = Array.isArray(suite.assertionResults) ? suite.assertionResults : [];
    const suiteFailed = suite.status === 'failed';
    const anyTestFailed = assertions.some((a) => a.status === 'failed');
    if (suiteFailed && !anyTestFailed) {
      // "Test suite failed to run" (syntax/import/type error) or a failure outside any test (hook, leak).
      const message = suiteMessage(String(suite.message ?? suite.failureMessage ?? ''));
      fileErrors.push({ file, kind: failureKindOf(message) === 'timeout' ? 'timeout' : 'collection', message: message || 'Test suite failed to run' });
    }
    for (const a of assertions) {
      const ancestors: string[] = Array.isArray(a.ancestorTitles) ? a.ancestorTitles.map(String) : [];
      const t: TestResult = { id: joinJs(file, [...ancestors, String(a.title ?? a.fullName ?? '')]), file, outcome: 'passed' };
      if (a.status === 'failed') {
        t.outcome = 'failed';
        const messages: string[] = (Array.isArray(a.failureMessages) ? a.failureMessages : []).map((m: unknown) => stripAnsi(String(m)));
        const text = messages.join('\n');
        const details: any[] = Array.isArray(a.failureDetails) ? a.failureDetails : [];
        const matcher = details.some((d) => d && typeof d === 'object' && d.matcherResult);
        t.failureKind = matcher && failureKindOf(text) !== 'timeout' ? 'assertion' : failureKindOf(text);
        t.message = firstLines(stackless(text));
      } else if (SKIPPED.has(a.status)) {
        t.outcome = 'skipped';
        if (a.status === 'todo') t.message = 'todo';
      }
      tests.push(t);
    }
  }
  return { tests: mergeDuplicates(tests), fileErrors: mergeFileErrors(fileErrors) };
}

/** jest's suite message without the `● Test suite failed to run` banner or the transform advice. */
function suiteMessage(raw: string): string {
  let text = stripAnsi(raw)
    .split('\n')
    .filter((l) => !/^\s*●\s*Test suite failed to run\s*$/.test(l))
    .join('\n');
  // "Jest encountered an unexpected token" is followed by a page of advice; the error is under "Details:".
  const details = /\n\s*Details:\s*\n([\s\S]*)$/.exec(text);
  if (details) text = `${firstLines(text, 1) ?? ''}\n${details[1]}`;
  return firstLines(stackless(text)) ?? '';
}

/** Drop `at …` stack frames: the message is what matters. */
function stackless(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s+at\s/.test(l))
    .join('\n');
}
