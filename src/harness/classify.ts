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
 * - a test whose result differs between runs on one side is flaky: a flaky base counts as
 *   'pass' and a flaky head as 'fail', so a flaky test is never F2P; a flaky test decides
 *   neither S nor the fix filter (it is shown apart);
 * - confirmation runs (reruns of the tests that moved, see movingTests) count only for the tests
 *   they targeted; a test they did not report is not observed there (a selection that missed);
 *   a failure of the whole-file runs that every rerun alone passes is order dependent: flaky at
 *   head (a neighbour must not fail the fix), a failure at base when the file failed it in order
 *   more than once (its state is the issue's, as `make html epub` fails viewcode's epub test);
 * - S (success): at least one F2P and no test failing after the fix;
 *   likely correct: every test F2P or P2P, at least one F2P;
 * - a test whose unit (a Go package) did not build at base, when the caller says which tests the
 *   patch adds or changes and it is not one of them, is not judged: it failed with the build, not
 *   for the issue;
 * - relative to a baseline (the same files run without the test patch, SWT-bench's
 *   get_resolution_success), tests whose transition the baseline already shows are pre-existing
 *   and do not count; a baseline F2P the patched run loses (not flaky or not judged there) fails S,
 *   and the verdict names it (lostReproductions).
 */
import { SwtError } from '../util/errors.js';
import type { FailureKind, RunCount, RunResult, TestResult, TestTransition, Transition, Verdict } from '../results/types.js';

type PF = 'pass' | 'fail';

interface SideResult {
  value: PF;
  flaky: boolean;
  failure?: { kind: FailureKind; message?: string };
  count: RunCount;
  /** Failed in every whole-file run and passed in every rerun alone. */
  alonePasses?: boolean;
}

/** Reruns of chosen tests (confirmation): each run counts only for `ids`. */
export interface TargetedRuns {
  base: RunResult[];
  head: RunResult[];
  ids: readonly string[];
  /** The runner could select tests: the head's failures reran alone, the rest without the other tests of their files. */
  alone: boolean;
  /** Of `ids`, those both sides confirmed in rounds inside their first runs' processes (RoundPlan). */
  inProcess?: readonly string[];
  /** Base's files run again whole, in order, for `ids` that failed there with their file and passed alone. */
  baseInOrder?: { ids: readonly string[]; base: RunResult[] };
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
  /** Confirmation reruns of the tests that moved. */
  confirm?: TargetedRuns;
}

export function compareRuns(base: RunResult[], head: RunResult[], opts: CompareOptions = {}): Verdict {
  if (base.length === 0 || head.length === 0) {
    throw new SwtError('BAD_INPUT', `compareRuns needs at least one run on each side (got ${base.length} base, ${head.length} head)`);
  }
  const subjects = collectSubjects([...base, ...head]);
  const baseIdx = base.map(index);
  const headIdx = head.map(index);
  const { confirm } = opts;
  const targeted = new Set(confirm?.ids ?? []);
  const extra = { base: (confirm?.base ?? []).map(index), head: (confirm?.head ?? []).map(index) };
  const inOrder = new Set(confirm?.baseInOrder?.ids ?? []);
  const baseAgainIdx = [...baseIdx, ...(confirm?.baseInOrder?.base ?? []).map(index)];
  const fileLevelIds = new Set([...base, ...head].flatMap((r) => r.tests.filter((x) => x.fileLevel).map((x) => x.id)));
  const tests: TestTransition[] = subjects.map((s) => {
    const again = targeted.has(s.id);
    const b = judgeSide(s, inOrder.has(s.id) ? baseAgainIdx : baseIdx, 'base', again ? extra.base : []);
    const h = judgeSide(s, headIdx, 'head', again ? extra.head : []);
    const t: TestTransition = {
      id: s.id,
      base: b.value,
      head: h.value,
      transition: transitionOf(b.value, h.value),
      flaky: b.flaky || h.flaky,
    };
    if (fileLevelIds.has(s.id)) t.fileLevel = true;
    if (b.flaky) t.baseFlaky = true;
    if (h.flaky) t.headFlaky = true;
    if (b.failure) t.baseFailure = b.failure;
    if (h.failure) t.headFailure = h.failure;
    if (b.count.runs > 1 || h.count.runs > 1) t.runs = { base: b.count, head: h.count };
    // Head failures rerun alone (the base's rerun with the rest of the moving tests of their file).
    if (confirm?.alone && h.alonePasses) t.orderDependent = orderNote(s, head);
    else if (b.alonePasses && !b.flaky) t.orderDependent = `at base, ${orderNote(s, base)}`;
    const unbuilt = opts.changedTest && b.value === 'fail' ? buildFailureOf(s, base) : undefined;
    if (unbuilt && !opts.changedTest!(s)) {
      t.notJudged = `${unbuilt} did not build at base (another test the patch adds or changes does not compile there): only the tests the patch adds or changes are judged`;
    }
    return t;
  });
  return verdictOf(tests);
}

/**
 * The tests whose first comparison needs confirming: every one that is not P2P, except an F2F
 * failing the same way on both sides (a test on one side only fails as `missing` on the other).
 */
export function movingTests<T extends Pick<TestTransition, 'transition' | 'baseFailure' | 'headFailure'>>(v: { tests: readonly T[] }): T[] {
  return v.tests.filter((t) => t.transition !== 'P2P' && !(t.transition === 'F2F' && sameFailure(t.baseFailure, t.headFailure)));
}

/** Of `ids`, those that failed in every first run and passed in every confirmation run that reported them. */
export function failingOnlyWithFile(ids: readonly string[], first: readonly RunResult[], confirmed: readonly RunResult[]): string[] {
  const outcomes = (runs: readonly RunResult[], id: string) => runs.flatMap((r) => r.tests.filter((t) => t.id === id).map((t) => t.outcome));
  return ids.filter((id) => {
    const before = outcomes(first, id);
    const alone = outcomes(confirmed, id);
    return before.length === first.length && before.every((o) => o === 'failed') && alone.length > 0 && alone.every((o) => o === 'passed');
  });
}

function sameFailure(a?: { kind: FailureKind; message?: string }, b?: { kind: FailureKind; message?: string }): boolean {
  const first = (m?: string) => (m ?? '').trim().split('\n')[0];
  return !!a && !!b && a.kind === b.kind && first(a.message) === first(b.message);
}

/** "fails only after X": the test its (failing) whole-file run reported just before it in the same file. */
function orderNote(s: Subject, runs: RunResult[]): string {
  const file = s.file ?? fileOfId(s.id);
  for (const r of runs) {
    const inFile = r.tests.filter((t) => (t.file ?? fileOfId(t.id)) === file);
    const at = inFile.findIndex((t) => t.id === s.id);
    if (at > 0) return `fails only after ${inFile[at - 1].id}`;
  }
  return 'fails only with its file';
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

/** The tests that decide: all but the pre-existing ones, the flaky ones and those not judged. */
export function judgedTests<T extends Pick<TestTransition, 'preexisting' | 'flaky' | 'notJudged'>>(v: { tests: readonly T[] }): T[] {
  return v.tests.filter((t) => !t.preexisting && !t.flaky && !t.notJudged);
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

/** SWT-bench S: at least one F2P and no test failing after the fix (flaky ones aside). */
export function success(v: Pick<Verdict, 'tests'>): boolean {
  const tests = judgedTests(v);
  return tests.some(reproduces) && tests.every((t) => t.head === 'pass');
}

/** Fix filter: every test F2P or P2P, at least one F2P (flaky ones aside). */
export function likelyCorrect(v: Pick<Verdict, 'tests'>): boolean {
  const tests = judgedTests(v);
  return tests.length > 0 && tests.some(reproduces) && tests.every((t) => t.transition === 'F2P' || t.transition === 'P2P');
}

/** Judges `withTests` relative to `baseline`, the same files run without the test patch on both sides. */
export function relativeTo(withTests: Verdict, baseline: Verdict): Verdict {
  const before = new Map(baseline.tests.filter((t) => !t.flaky).map((t) => [t.id, t.transition]));
  const tests = withTests.tests.map((t) => (!t.flaky && !t.notJudged && before.get(t.id) === t.transition ? { ...t, preexisting: true } : t));
  const v = verdictOf(tests);
  // A reproduction of the baseline's (one run per side) that the patched runs, with their reruns,
  // show flaky or not judged is that, not a lost one: it decides nothing, as in the rows.
  const kept = new Set(tests.filter((t) => reproduces(t) || t.flaky || t.notJudged).map((t) => t.id));
  const lost = baseline.tests.filter((t) => reproduces(t) && !kept.has(t.id)).map((t) => t.id);
  if (lost.length) {
    v.success = v.likelyCorrect = false;
    v.lostReproductions = lost;
  }
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

const UNOBSERVED = new Set<FailureKind>(['missing', 'timeout', 'disk']);

type Observed = { value: PF; failure?: { kind: FailureKind; message?: string } };

function outcomeIn(s: Subject, { run, byId }: Indexed): Observed {
  const t = byId.get(s.id);
  if (t) {
    if (t.outcome === 'passed') return { value: 'pass' };
    // Skipped (also xfail, todo) counts as failing, as in SWT-bench grading where only PASSED passes.
    if (t.outcome === 'skipped') return { value: 'fail', failure: withMessage('skipped', t.message) };
    return { value: 'fail', failure: withMessage(t.failureKind ?? 'error', t.message) };
  }
  const file = s.file ?? fileOfId(s.id);
  const fe = run.fileErrors.find((e) => e.file === file);
  if (fe) return { value: 'fail', failure: withMessage(fe.kind, fe.message) };
  if (run.diskLimit) return { value: 'fail', failure: { kind: 'disk', message: 'killed: disk limit, before reporting this test' } };
  if (run.timedOut) return { value: 'fail', failure: { kind: 'timeout', message: 'the run timed out before reporting this test' } };
  return { value: 'fail', failure: { kind: 'missing', message: 'not reported in this run' } };
}

function withMessage(kind: FailureKind, message?: string): { kind: FailureKind; message?: string } {
  return message ? { kind, message } : { kind };
}

function judgeSide(s: Subject, runs: Indexed[], side: 'base' | 'head', reruns: Indexed[]): SideResult {
  const whole = runs.map((r) => outcomeIn(s, r));
  // A rerun that did not report the test (its selection missed it, the reruns ran out of time) says nothing.
  const again = reruns.map((r) => outcomeIn(s, r)).filter((o) => !UNOBSERVED.has(o.failure?.kind as FailureKind));
  const results = [...whole, ...again];
  const firstFailure = results.find((r) => r.failure)?.failure;
  const count = { runs: results.length, failed: results.filter((r) => r.value === 'fail').length };
  const values = new Set(results.map((r) => r.value));
  if (values.size > 1) {
    const alonePasses = again.length > 0 && whole.every((r) => r.value === 'fail') && again.every((r) => r.value === 'pass');
    // At base, a failure of every whole-file run, more than one, is the file's in its order: not chance.
    if (side === 'base' && alonePasses && whole.length > 1) return { value: 'fail', flaky: false, count, failure: firstFailure, alonePasses };
    return { value: side === 'base' ? 'pass' : 'fail', flaky: true, count, ...(firstFailure ? { failure: firstFailure } : {}), ...(alonePasses ? { alonePasses } : {}) };
  }
  const value = results[0].value;
  return value === 'fail' ? { value, flaky: false, failure: firstFailure, count } : { value, flaky: false, count };
}
