/**
 * Compare test runs on the base (before the fix) and the head (after it), SWT-bench style.
 * Pure.
 *
 * Rules (SWT-bench `get_eval_report`: only PASSED counts as a pass, so a test that is absent,
 * errored or skipped counts as a failure on that side):
 * - the tests compared are the union of ids seen in any run on either side;
 * - a test missing from a run failed there: kind 'collection' when its file had a FileError
 *   in that run, else 'missing';
 * - a file that errored and has no test id on either side becomes one test whose id is the
 *   file path, so the failure shows;
 * - a test whose result differs between reruns on one side is flaky: a flaky base counts as
 *   'pass' and a flaky head as 'fail', so a flaky test is never F2P;
 * - S (success): at least one F2P and no test failing after the fix;
 *   likely correct: every test F2P or P2P, at least one F2P, none flaky;
 * - a test whose unit (a Go package) did not build at base, when the caller says which tests the
 *   patch adds or changes and it is not one of them, is not judged: it failed with the build, not
 *   for the issue;
 * - relative to a baseline (the same files run without the test patch, SWT-bench's
 *   get_resolution_success), tests whose transition the baseline already shows are pre-existing
 *   and do not count; a baseline F2P the patched run loses fails S.
 */
import { SwtError } from '../util/errors.js';
import type { FailureKind, RunResult, TestResult, TestTransition, Transition, Verdict } from './types.js';

type PF = 'pass' | 'fail';

interface SideResult {
  value: PF;
  flaky: boolean;
  failure?: { kind: FailureKind; message?: string };
}

interface Subject {
  id: string;
  file?: string;
}

export interface CompareOptions {
  /**
   * Which tests the test patch adds or changes (see Ecosystem.changedTests). Given, a test whose
   * unit did not build at base and that the patch did not add or change is not judged.
   */
  changedTest?: (t: { id: string; file?: string }) => boolean;
}

export function compareRuns(base: RunResult[], head: RunResult[], opts: CompareOptions = {}): Verdict {
  if (base.length === 0 || head.length === 0) {
    throw new SwtError('BAD_INPUT', `compareRuns needs at least one run on each side (got ${base.length} base, ${head.length} head)`);
  }
  const subjects = collectSubjects([...base, ...head]);
  const baseIdx = base.map(index);
  const headIdx = head.map(index);
  const tests: TestTransition[] = subjects.map((s) => {
    const b = judgeSide(s, baseIdx, 'base');
    const h = judgeSide(s, headIdx, 'head');
    const t: TestTransition = {
      id: s.id,
      base: b.value,
      head: h.value,
      transition: transitionOf(b.value, h.value),
      flaky: b.flaky || h.flaky,
    };
    if (b.flaky) t.baseFlaky = true;
    if (h.flaky) t.headFlaky = true;
    if (b.failure) t.baseFailure = b.failure;
    if (h.failure) t.headFailure = h.failure;
    const unbuilt = opts.changedTest && b.value === 'fail' ? buildFailureOf(s, base) : undefined;
    if (unbuilt && !opts.changedTest!(s)) {
      t.notJudged = `${unbuilt} did not build at base (another test the patch adds or changes does not compile there): only the tests the patch adds or changes are judged`;
    }
    return t;
  });
  return verdictOf(tests);
}

/** Build a Verdict (counts, S, likely correct) from transitions. */
export function verdictOf(tests: TestTransition[]): Verdict {
  const counts: Record<Transition, number> = { F2P: 0, F2F: 0, P2P: 0, P2F: 0 };
  for (const t of tests) counts[t.transition]++;
  const v: Verdict = { tests, counts, success: false, likelyCorrect: false };
  v.success = success(v);
  v.likelyCorrect = likelyCorrect(v);
  return v;
}

/** A test that reproduces the issue: F2P, and not flaky. */
export function reproduces(t: Pick<TestTransition, 'transition' | 'flaky'>): boolean {
  return t.transition === 'F2P' && !t.flaky;
}

/** The tests that decide: all but the pre-existing ones and those not judged. */
export function judgedTests<T extends Pick<TestTransition, 'preexisting' | 'notJudged'>>(v: { tests: readonly T[] }): T[] {
  return v.tests.filter((t) => !t.preexisting && !t.notJudged);
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** The unit (as the ecosystem names it) whose build failure took this test down in some base run, if any. */
function buildFailureOf(s: Subject, runs: RunResult[]): string | undefined {
  const file = s.file ?? fileOfId(s.id);
  for (const r of runs) {
    if (r.tests.some((t) => t.id === s.id)) continue;
    const hit = r.buildFailures?.find((b) => b.dir === dirOf(file));
    if (hit) return hit.unit;
  }
  return undefined;
}

/** SWT-bench S: at least one (non-flaky) F2P and no test failing after the fix. */
export function success(v: Pick<Verdict, 'tests'>): boolean {
  const tests = judgedTests(v);
  return tests.some(reproduces) && tests.every((t) => t.head === 'pass');
}

/** Fix filter: every test F2P or P2P, at least one F2P, none flaky. */
export function likelyCorrect(v: Pick<Verdict, 'tests'>): boolean {
  const tests = judgedTests(v);
  return tests.length > 0 && tests.some(reproduces) && tests.every((t) => !t.flaky && (t.transition === 'F2P' || t.transition === 'P2P'));
}

/** Judges `withTests` relative to `baseline`, the same files run without the test patch on both sides. */
export function relativeTo(withTests: Verdict, baseline: Verdict): Verdict {
  const before = new Map(baseline.tests.filter((t) => !t.flaky).map((t) => [t.id, t.transition]));
  const tests = withTests.tests.map((t) => (!t.flaky && !t.notJudged && before.get(t.id) === t.transition ? { ...t, preexisting: true } : t));
  const v = verdictOf(tests);
  const kept = new Set(tests.filter(reproduces).map((t) => t.id));
  if (baseline.tests.some((t) => reproduces(t) && !kept.has(t.id))) v.success = v.likelyCorrect = false;
  return v;
}

export function transitionOf(base: PF, head: PF): Transition {
  return base === 'fail' ? (head === 'pass' ? 'F2P' : 'F2F') : head === 'pass' ? 'P2P' : 'P2F';
}

/** The file a test id belongs to, from the id itself (`file::…` or `file > …`). */
export function fileOfId(id: string): string {
  const py = id.indexOf('::');
  const js = id.indexOf(' > ');
  const cut = [py, js].filter((i) => i >= 0);
  return cut.length ? id.slice(0, Math.min(...cut)) : id;
}

function collectSubjects(runs: RunResult[]): Subject[] {
  const byId = new Map<string, Subject>();
  for (const r of runs) {
    for (const t of r.tests) {
      const prev = byId.get(t.id);
      if (!prev) byId.set(t.id, { id: t.id, file: t.file });
      else if (!prev.file && t.file) prev.file = t.file;
    }
  }
  const filesWithTests = new Set<string>();
  for (const s of byId.values()) filesWithTests.add(s.file ?? fileOfId(s.id));
  for (const r of runs) {
    for (const e of r.fileErrors) {
      if (!filesWithTests.has(e.file) && !byId.has(e.file)) byId.set(e.file, { id: e.file, file: e.file });
    }
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

type Indexed = { run: RunResult; byId: Map<string, TestResult> };

function index(run: RunResult): Indexed {
  const byId = new Map<string, TestResult>();
  // Duplicated ids in one run: a failure wins.
  for (const t of run.tests) if (!byId.has(t.id) || t.outcome === 'failed') byId.set(t.id, t);
  return { run, byId };
}

function outcomeIn(s: Subject, { run, byId }: Indexed): SideResult {
  const t = byId.get(s.id);
  if (t) {
    if (t.outcome === 'passed') return { value: 'pass', flaky: false };
    // Skipped (also xfail, todo) counts as failing, as in SWT-bench grading where only PASSED passes.
    if (t.outcome === 'skipped') return { value: 'fail', flaky: false, failure: withMessage('skipped', t.message) };
    return { value: 'fail', flaky: false, failure: withMessage(t.failureKind ?? 'error', t.message) };
  }
  const file = s.file ?? fileOfId(s.id);
  const fe = run.fileErrors.find((e) => e.file === file);
  if (fe) return { value: 'fail', flaky: false, failure: withMessage(fe.kind, fe.message) };
  if (run.diskLimit) return { value: 'fail', flaky: false, failure: { kind: 'disk', message: 'killed: disk limit, before reporting this test' } };
  if (run.timedOut) return { value: 'fail', flaky: false, failure: { kind: 'timeout', message: 'the run timed out before reporting this test' } };
  return { value: 'fail', flaky: false, failure: { kind: 'missing', message: 'not reported in this run' } };
}

function withMessage(kind: FailureKind, message?: string): { kind: FailureKind; message?: string } {
  return message ? { kind, message } : { kind };
}

function judgeSide(s: Subject, runs: Indexed[], side: 'base' | 'head'): SideResult {
  const results = runs.map((r) => outcomeIn(s, r));
  const firstFailure = results.find((r) => r.failure)?.failure;
  const values = new Set(results.map((r) => r.value));
  if (values.size > 1) {
    return { value: side === 'base' ? 'pass' : 'fail', flaky: true, ...(firstFailure ? { failure: firstFailure } : {}) };
  }
  const value = results[0].value;
  return value === 'fail' ? { value, flaky: false, failure: firstFailure } : { value, flaky: false };
}
