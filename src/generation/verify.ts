/**
 * The verification rules, as a pure judgement of test runs on base (issue #4, item 3):
 * the patch adds tests; they run; at least one fails on base; the failure is an assertion or
 * the issue's exception, not a syntax, import or collection error of the test itself (unless the
 * issue is about exactly that); a second run agrees (no flakiness).
 */
import type { FileError, RunResult, TestResult } from '../results/types.js';
import type { FailureEvidence, IssueInput, ReproductionStatus } from './types.js';
import { isTestPath } from '../harness/testFiles.js';
import type { DiffFile } from '../patch/diffFiles.js';
import { exceptionNames, issueIsAboutHang, jsError, pythonTraceback } from './issueText.js';
import { ownErrorText } from '../ecosystems/index.js';

export interface RunEvidence {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  failures: FailureEvidence[];
  passed: number;
}

export interface Judgement {
  status: ReproductionStatus;
  reason: string;
  failureExcerpt?: string;
  reproducingTests: string[];
  runs: RunEvidence[];
  /** True when a reproducing failure names the issue's exception (type, and message where given). */
  matchesIssueException: boolean;
  /** Was the rejection caused by the test's own error (import/syntax/collection)? */
  ownError: boolean;
  /** For a reproduction: where its failure leaves the repository's source (the stand-in fix rewrites that function). */
  failureSite?: FailureSite;
}

/** A place in the repository's source that a failure's trace names. */
export interface FailureSite {
  path: string;
  /** 1-based, as the trace gives it. */
  line: number;
}

/**
 * Where a failure leaves the repository's own source, as its trace names it (pure): Python lists
 * the deepest frame last (`File "p", line N`, pytest's `p:N: in f`), other traces first (`at f (p:N:C)`).
 */
export function failureSite(failure: string, isSource: (p: string) => boolean = () => true): FailureSite | undefined {
  // Inside the sandbox the checkout is /testbed; any other absolute path is not the repository's.
  const strip = (p: string) => p.replace(/^\/testbed\//, '');
  const ours = (s: FailureSite) => !s.path.startsWith('/') && !isTestPath(s.path) && !/(^|\/)(node_modules|site-packages|vendor)\//.test(s.path) && isSource(s.path);
  const frames = [...failure.matchAll(/File "([^"]+)", line (\d+)/g)].map((m) => ({ path: strip(m[1]!), line: +m[2]! })).filter(ours);
  if (frames.length) return frames.at(-1);
  const places = [...failure.matchAll(/(?:^|[\s"'(])(\/?(?:[\w.-]+\/)*[\w.-]+\.[a-z]{1,4}):(\d+)(?=[:\s),]|$)/gm)].map((m) => ({ path: strip(m[1]!), line: +m[2]! })).filter(ours);
  return places[0]?.path.endsWith('.py') ? places.at(-1) : places[0];
}

/** Errors that, raised by a test, mean the test itself is broken. */
const OWN_ERRORS = new Set(['ImportError', 'ModuleNotFoundError', 'SyntaxError', 'IndentationError', 'TabError', 'NameError', 'ReferenceError']);
/** Text of a test broken by itself, each ecosystem's own (`undefined: X` in Go, `cannot find symbol` in Java, …). */
const OWN_ERROR_TEXT = ownErrorText();
const MISSING_TEXT = /\b(missing|undefined|null|None|NoneType|no longer (has|have|returns?))\b/;
/** Reading a property of nothing: how a missing value shows up when a test touches it. */
const NOTHING_ACCESS = /^(TypeError|AttributeError)\b.*\b(undefined|null|None|NoneType)\b/m;
/**
 * An assertion whose actual value is nothing (node's `+ undefined`, pytest's `assert None ==`,
 * jest's `Received: undefined`, chai's `expected undefined to`, JUnit's `but was:<null>`).
 */
const NOTHING_ACTUAL = /\+ actual - expected\s*\+ (?:undefined|null)\s*(?:-|$)|^\s*(?:E\s+)?(?:AssertionError: )?assert None (?:==|is|in)(?=\s)|^\s*Received:\s+(?:undefined|null)\s*$|\bexpected (?:undefined|null) to\b|\bbut was:\s*<null>/m;
const ASSERTION_TEXT = /^\s*(E\s+)?assert\b|\bAssertionError\b|DID NOT RAISE|DID NOT WARN|^\s*Failed: |expect\(|Expected values to be|Expected "actual"|expected .+ to (be|equal|deeply equal|strictly equal|have|include|contain|throw|match)|\bto(Be|Equal|StrictEqual|Throw|Match|Contain)\b/m;

/** What the issue reports of its failure: the exceptions it names and, from a traceback, the message (the App's IssueFacts, in github/decide.ts, are the facts it decides on). */
export interface ReportedFailure {
  exceptions: Set<string>;
  reported?: { type: string; message: string };
  aboutHang: boolean;
  /** The issue reports something missing, undefined or None. */
  aboutMissing: boolean;
}

export function reportedFailure(issue: IssueInput): ReportedFailure {
  const text = `${issue.title}\n${issue.body}`;
  const tb = pythonTraceback(text) ?? jsError(text);
  return { exceptions: exceptionNames(text), reported: tb ? { type: tb.type, message: tb.message } : undefined, aboutHang: issueIsAboutHang(text), aboutMissing: MISSING_TEXT.test(text) };
}

/** The exception type a failure message starts with (`ValueError: …`, `E   KeyError: 'x'`). */
export function leadingException(message: string): string | undefined {
  const m = /^\s*(?:E\s+)?(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration))\b/.exec(message);
  return m?.[1];
}

function normalise(s: string): string {
  return s.replace(/0x[0-9a-f]+/gi, '0x?').replace(/["'`]/g, "'").replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Does a failure message carry the reported exception, with its message where one was given? */
export function carriesReportedException(message: string, reported: { type: string; message: string } | undefined): boolean {
  if (!reported) return false;
  if (!new RegExp(`\\b${reported.type}\\b`).test(message)) return false;
  if (!reported.message) return true;
  return normalise(message).includes(normalise(reported.message).slice(0, 200));
}

export function classifyFailure(t: Pick<TestResult, 'id' | 'failureKind' | 'message'>, facts: ReportedFailure): FailureEvidence {
  const message = (t.message ?? '').trim();
  const lead = leadingException(message);
  const base = { id: t.id, message: message.slice(0, 2000) };
  if (t.failureKind === 'timeout') return { ...base, kind: 'timeout' };
  if (t.failureKind === 'collection') {
    const name = lead ?? (OWN_ERROR_TEXT.test(message) ? 'ImportError' : undefined);
    if (name && facts.exceptions.has(name)) return { ...base, kind: 'issue-exception', exception: name };
    return { ...base, kind: 'collection', exception: name };
  }
  if (lead && OWN_ERRORS.has(lead) && !facts.exceptions.has(lead)) return { ...base, kind: 'own-error', exception: lead };
  if (!lead && OWN_ERROR_TEXT.test(message) && !ASSERTION_TEXT.test(message)) return { ...base, kind: 'own-error' };
  // An exception whose text says the test called what does not exist (Ruby's NoMethodError on a real object).
  if (lead && !facts.exceptions.has(lead) && OWN_ERROR_TEXT.test(message) && !ASSERTION_TEXT.test(message)) return { ...base, kind: 'own-error', exception: lead };
  if (lead === 'AssertionError' || (!lead && (t.failureKind === 'assertion' || ASSERTION_TEXT.test(message)))) {
    const wrapped = [...facts.exceptions].find((e) => e !== 'AssertionError' && new RegExp(`\\b${e}\\b`).test(message));
    // Nothing to compare, where the issue shows a value (not something missing): the test never reached it.
    if (!wrapped && !facts.aboutMissing && NOTHING_ACTUAL.test(message)) return { ...base, kind: 'nothing-checked' };
    return { ...base, kind: 'assertion', exception: wrapped };
  }
  if (lead && facts.exceptions.has(lead)) return { ...base, kind: 'issue-exception', exception: lead };
  if (facts.aboutMissing && NOTHING_ACCESS.test(message)) return { ...base, kind: 'issue-symptom', exception: lead ?? NOTHING_ACCESS.exec(message)?.[1] };
  if (!lead && ASSERTION_TEXT.test(message)) return { ...base, kind: 'assertion' };
  return { ...base, kind: 'other-exception', exception: lead };
}

function fileOf(t: TestResult): string | undefined {
  if (t.file) return t.file;
  const i = t.id.indexOf('::');
  if (i > 0) return t.id.slice(0, i);
  const j = t.id.indexOf(' > ');
  if (j > 0) return t.id.slice(0, j);
  return undefined;
}

function leafName(id: string): string {
  const parts = id.split(/::| > /);
  return (parts[parts.length - 1] ?? id).replace(/\[.*\]$/, '').trim();
}

function samePath(a: string, b: string): boolean {
  const x = a.replace(/^\.\//, '');
  const y = b.replace(/^\.\//, '');
  return x === y || x.endsWith('/' + y) || y.endsWith('/' + x);
}

/**
 * Tests the patch adds or changes: every test of a new file; in an existing file, those whose name
 * the patch adds, and, given a run of the files without the patch, those that were absent or passed there.
 */
export function isPatchedTest(t: TestResult, files: readonly DiffFile[], baseline?: RunResult): boolean {
  const file = fileOf(t);
  const pf = file ? files.find((f) => samePath(f.path, file)) : undefined;
  if (!pf) return !file; // no file information: count it
  if (pf.isNew) return true;
  const leaf = leafName(t.id);
  if (leaf.length > 0 && pf.added.some((l) => l.includes(leaf))) return true;
  if (!baseline) return false;
  const before = baseline.tests.find((b) => b.id === t.id);
  return !before || before.outcome === 'passed';
}

function evidenceOf(run: RunResult, files: readonly DiffFile[], facts: ReportedFailure, baseline?: RunResult): RunEvidence & { considered: TestResult[]; fileErrs: FailureEvidence[] } {
  const considered = run.tests.filter((t) => isPatchedTest(t, files, baseline));
  const failures = considered.filter((t) => t.outcome === 'failed' && t.failureKind !== 'missing').map((t) => classifyFailure(t, facts));
  const fileErrs = run.fileErrors
    .filter((fe: FileError) => files.some((f) => samePath(f.path, fe.file)) || files.length === 0)
    .map((fe) => classifyFailure({ id: fe.file, failureKind: fe.kind, message: fe.message }, facts));
  return {
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    failures: [...fileErrs, ...failures],
    passed: considered.filter((t) => t.outcome === 'passed').length,
    considered,
    fileErrs,
  };
}

function excerpt(f: FailureEvidence | undefined, run: RunResult): string {
  const text = f?.message?.trim() ? `${f.id}\n${f.message}` : run.output.split('\n').slice(-30).join('\n');
  const lines = text.split('\n');
  return (lines.length > 25 ? [...lines.slice(0, 25), `… (${lines.length - 25} more lines)`] : lines).join('\n').slice(0, 3000);
}

const ACCEPTED = (facts: ReportedFailure) => (f: FailureEvidence) =>
  f.kind === 'assertion' || f.kind === 'issue-exception' || f.kind === 'issue-symptom' || (f.kind === 'timeout' && facts.aboutHang);

/** How a reproducing failure reads in the verdict. */
function failureWords(f: FailureEvidence): string {
  if (f.kind === 'assertion') return `an assertion${f.exception ? ` about the issue's ${f.exception}` : ''}`;
  if (f.kind === 'timeout') return 'a timeout (the issue reports a hang)';
  if (f.kind === 'issue-symptom') return `a ${f.exception} on a missing value, the symptom the issue reports`;
  return `the issue's ${f.exception}`;
}

/** Why the test's failure on base is not the issue's, or undefined when it fails for the issue's reason. */
function rejection(first: ReturnType<typeof evidenceOf>, run0: RunResult, facts: ReportedFailure): { reason: string; extra?: Partial<Judgement> } | undefined {
  const own = first.failures.find((f) => f.kind === 'own-error' || f.kind === 'collection');
  if (own) {
    const detail = `${own.exception ?? own.kind}${own.message ? `: ${own.message.split('\n')[0].slice(0, 200)}` : ''}`;
    return { reason: `the test fails because of its own error, not the issue: ${detail}`, extra: { failureExcerpt: excerpt(own, run0), ownError: true } };
  }
  if (run0.timedOut && !facts.aboutHang) return { reason: 'the test run timed out on base (and the issue is not about a hang)', extra: { failureExcerpt: excerpt(undefined, run0) } };
  if (!first.considered.length && !first.failures.length) {
    return { reason: run0.tests.length ? 'none of the tests that ran is one the patch adds' : 'no test ran (nothing collected)', extra: { failureExcerpt: excerpt(undefined, run0) } };
  }
  if (!first.failures.length) return { reason: `all ${first.passed} new test(s) pass on base: they do not show the issue` };
  const f = first.failures[0];
  if (!first.failures.some(ACCEPTED(facts))) {
    if (f.kind === 'nothing-checked') return { reason: "the test fails on base, but not for the issue's reason: the value it checks is nothing (undefined, null or None), where the issue shows one: set up what the issue does, then check the value it reports", extra: { failureExcerpt: excerpt(f, run0) } };
    return { reason: `the test fails on base, but not for the issue's reason: ${f.kind}${f.exception ? ` (${f.exception})` : ''}`, extra: { failureExcerpt: excerpt(f, run0) } };
  }
  return undefined;
}

/**
 * Judges the runs of a test patch on base. With `requireRerun` (the default) a reproduction needs
 * two runs that agree; with one run the result is at best provisional ('reproduced' is withheld).
 */
export function judgeRuns(issue: IssueInput, files: readonly DiffFile[], runs: readonly RunResult[], opts: { requireRerun?: boolean; baseline?: RunResult } = {}): Judgement {
  const requireRerun = opts.requireRerun ?? true;
  const facts = reportedFailure(issue);
  const ev = runs.map((r) => evidenceOf(r, files, facts, opts.baseline));
  const plain = ev.map(({ considered: _c, fileErrs: _f, ...rest }) => rest);
  const no = (reason: string, extra: Partial<Judgement> = {}): Judgement => ({
    status: 'not-reproduced',
    reason,
    reproducingTests: [],
    runs: plain,
    matchesIssueException: false,
    ownError: false,
    ...extra,
  });
  if (!files.some((f) => !f.isDeleted && isTestPath(f.path))) return no('the patch adds no test file');
  if (!runs.length) return no('the tests were not run');
  const rejected = rejection(ev[0], runs[0], facts);
  if (rejected) return no(rejected.reason, rejected.extra);
  const accepted = ACCEPTED(facts);
  const reproducing = ev[0].failures.filter(accepted);
  const ids = reproducing.map((f) => f.id);
  const matches = reproducing.some((f) => carriesReportedException(f.message ?? '', facts.reported) || (f.kind === 'issue-exception' && !facts.reported));
  const failureExcerpt = excerpt(reproducing[0], runs[0]);
  // The excerpt holds a failure's first lines; the run's whole output has its trace.
  const site = failureSite(failureExcerpt) ?? failureSite(runs[0]!.output);
  const yes = (reason: string): Judgement => ({ status: 'reproduced', reason, failureExcerpt, reproducingTests: ids, runs: plain, matchesIssueException: matches, ownError: false, ...(site ? { failureSite: site } : {}) });
  if (runs.length < 2) {
    if (requireRerun) return no('not re-run: flakiness not ruled out', { reproducingTests: ids, failureExcerpt, matchesIssueException: matches });
    return yes(`fails on base with ${failureWords(reproducing[0])} (single run)`);
  }
  const second = ev[1].failures.filter(accepted).map((f) => f.id);
  const flips = ids.filter((id) => !second.includes(id)).concat(second.filter((id) => !ids.includes(id)));
  if (flips.length) return no(`flaky: ${flips.join(', ')} changed outcome between two runs on base`, { failureExcerpt });
  const carries = matches && facts.reported ? `; the failure carries the reported ${facts.reported.type}` : '';
  return yes(`fails on base with ${failureWords(reproducing[0])}, twice${carries}`);
}
