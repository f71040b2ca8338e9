/**
 * PHPUnit's JUnit log (`--log-junit`), PHPUnit 9–11, one report per test file. Read here rather
 * than by the shared JUnit parser because its meaning differs: PHPUnit 9 logs "risky" tests (no
 * assertion) as errors where 10+ log passes, and a hit time limit is a risky test too. Pure.
 */
import { XMLParser } from 'fast-xml-parser';
import { failureKindOf, firstLines, mergeDuplicates, normalizeRel, resolveFile } from '../../results/formats/common.js';
import type { TestResult } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

/** `tests/FooTest.php > Vendor\Pkg\FooTest::testBar` (data sets: `… with data set #3`). */
export function phpunitId(file: string | undefined, klass: string, name: string): string {
  return [file, `${klass}::${name}`].filter(Boolean).join(' > ');
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  alwaysCreateTextNode: true,
  isArray: (name) => ['testsuite', 'testcase', 'failure', 'error', 'skipped', 'warning'].includes(name),
});

interface Problem {
  type?: string;
  '#text'?: string;
}

const RISKY = /^PHPUnit\\Framework\\(RiskyTestError|RiskyTest)$/;
const TIME_LIMIT = /^(Execution aborted after \d+ seconds?|\* ?This test was aborted after)/m;

function* cases(node: any): Generator<any> {
  for (const tc of node?.testcase ?? []) yield tc;
  for (const ts of node?.testsuite ?? []) yield* cases(ts);
}

/** The message without PHPUnit's first line (the test's own name). */
function messageOf(p: Problem, testName: string): string {
  const text = (p['#text'] ?? '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  if (lines[0]?.includes(testName)) lines.shift();
  return lines.join('\n');
}

export function parsePhpunitJUnit(content: string, ctx: ReportContext): OneReport {
  // PHPUnit 10+ creates the log at start: an empty one means the process died before the end.
  if (!content.trim()) return { tests: [], fileErrors: [], complete: false, errors: [] };
  const doc = parser.parse(content) as any;
  if (!doc?.testsuites && !doc?.testsuite) throw new Error('not a JUnit report: no <testsuites> or <testsuite>');
  const root = doc.testsuites ?? doc;
  const tests: TestResult[] = [];
  for (const tc of cases(root)) {
    // `class` is PHPUnit's own attribute; `classname` has the namespace's backslashes as dots.
    const klass = String(tc.class ?? String(tc.classname ?? '').replace(/\./g, '\\'));
    const name = String(tc.name ?? '');
    const file = tc.file ? resolveFile(String(tc.file), ctx) : ctx.file ? normalizeRel(ctx.file) : undefined;
    const t: TestResult = { id: phpunitId(file, klass, name), outcome: 'passed' };
    if (file) t.file = file;
    const problems: Problem[] = [...(tc.failure ?? []), ...(tc.error ?? [])];
    const timeLimit = problems.find((p) => RISKY.test(p.type ?? '') && TIME_LIMIT.test(messageOf(p, name)));
    const real = problems.filter((p) => !RISKY.test(p.type ?? ''));
    if (timeLimit) {
      t.outcome = 'failed';
      t.failureKind = 'timeout';
      t.message = firstLines(messageOf(timeLimit, name));
    } else if (real.length) {
      const p = real[0]!;
      const text = messageOf(p, name);
      t.outcome = 'failed';
      t.failureKind = /ExpectationFailedException|AssertionFailedError/.test(p.type ?? '') ? 'assertion' : failureKindOf(text, p.type);
      const m = firstLines(text);
      if (m) t.message = m;
    } else if (tc.skipped?.length) {
      // Skipped and incomplete tests alike.
      t.outcome = 'skipped';
    }
    tests.push(t);
  }
  return { tests: mergeDuplicates(tests), fileErrors: [], complete: true, errors: [] };
}
