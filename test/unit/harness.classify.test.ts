import { compareRuns, failingOnlyWithFile, fileOfId, likelyCorrect, movingTests, relativeTo, success, transitionOf, verdictOf, type TargetedRuns } from '../../src/harness/classify.js';
import type { RunResult, TestTransition, Verdict } from '../../src/results/types.js';
import { isSwtError } from '../../src/util/errors.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { loadCapture, runResultOf } from './fixtures/reports/load.js';
import { renderMarkdown, renderText, verdictReasons } from '../../src/harness/render.js';
import { verdictRow } from '../../src/eval/report.js';

/** A real run reduced to some of its tests and file errors (as if fewer files had been run). */
function only(run: RunResult, keep: (id: string) => boolean): RunResult {
  return { ...run, tests: run.tests.filter((t) => keep(t.id)), fileErrors: run.fileErrors.filter((e) => keep(e.file)) };
}

function row(v: Verdict, id: string): TestTransition {
  const t = v.tests.find((x) => x.id === id);
  if (!t) throw new Error(`no ${id} in ${v.tests.map((x) => x.id).join(', ')}`);
  return t;
}

const pyBase = runResultOf('pytest-base');
const pyHead = runResultOf('pytest-head');

describe('compareRuns on real pytest reports', () => {
  const v = compareRuns([pyBase], [pyHead]);

  it('classifies every transition', () => {
    expect(row(v, 'tests/sub/test_math.py::test_add')).toEqual({
      id: 'tests/sub/test_math.py::test_add',
      base: 'fail',
      head: 'pass',
      transition: 'F2P',
      flaky: false,
      baseFailure: { kind: 'assertion', message: 'assert -1 == 5\n +  where -1 = add(2, 3)' },
    });
    expect(row(v, 'tests/sub/test_math.py::test_zero')).toMatchObject({ transition: 'P2P', flaky: false });
    expect(row(v, 'tests/sub/test_math.py::test_error')).toMatchObject({ transition: 'F2F', headFailure: { kind: 'error' } });
    expect(row(v, 'tests/sub/test_math.py::test_param[x-y-xy]')).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'error' } });
    expect(row(v, 'tests/sub/test_math.py::TestGroup::TestInner::test_nested').transition).toBe('F2P');
    expect(v.counts).toEqual({ F2P: 6, F2F: 6, P2P: 2, P2F: 0 });
  });

  it('counts skipped as failing on that side (SWT-bench: only PASSED passes)', () => {
    expect(row(v, 'tests/sub/test_math.py::test_skipped')).toMatchObject({
      transition: 'F2F',
      baseFailure: { kind: 'skipped', message: 'not today' },
      headFailure: { kind: 'skipped' },
    });
    expect(row(v, 'tests/sub/test_math.py::test_xfail').transition).toBe('F2F');
  });

  it('shows files that never load as one test each', () => {
    expect(row(v, 'tests/test_broken.py')).toMatchObject({ transition: 'F2F', baseFailure: { kind: 'collection' }, headFailure: { kind: 'collection' } });
    expect(row(v, 'tests/test_badimport.py').headFailure?.message).toBe("ModuleNotFoundError: No module named 'pkg.nonexistent'");
  });

  it('is not a success: tests still fail after the fix', () => {
    expect(v.success).toBe(false);
    expect(v.likelyCorrect).toBe(false);
  });

  it('is a success on the tests the fix is about', () => {
    const about = (id: string) => id.startsWith('tests/sub/test_math.py::test_param') || id === 'tests/sub/test_math.py::test_add' || id === 'tests/sub/test_math.py::test_zero';
    const w = compareRuns([only(pyBase, about)], [only(pyHead, about)]);
    expect(w.counts).toEqual({ F2P: 4, F2F: 0, P2P: 1, P2F: 0 });
    expect(w.success).toBe(true);
    expect(w.likelyCorrect).toBe(true);
  });
});

describe('compareRuns on real JS reports', () => {
  it.each([
    ['jest', 'test/math.test.js > math > adds', 'test/broken.test.js'],
    ['vitest', 'test/math.test.ts > math > adds', 'test/broken.test.ts'],
    ['mocha', 'test/math.spec.js > math > adds', undefined],
    ['node', 'test/math.test.js > math > adds', 'test/broken.test.js'],
    ['tap', 'test/math.test.js > math adds', 'test/broken.test.js'],
    ['tape', 'test/math.test.js > math adds', 'test/broken.test.js'],
  ])('%s: the fixed test is F2P, the broken file F2F, no S', (runner, fixed, broken) => {
    const v = compareRuns([runResultOf(`${runner}-base`)], [runResultOf(`${runner}-head`)]);
    expect(row(v, fixed)).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'assertion' }, flaky: false });
    if (broken) expect(row(v, broken)).toMatchObject({ transition: 'F2F', headFailure: { kind: 'collection' } });
    expect(v.counts.P2F).toBe(0);
    expect(v.success).toBe(false);
    expect(v.likelyCorrect).toBe(false);
  });

  it('a test that crashes the process and the tests after it', () => {
    const base = runResultOf('tape-base');
    const head = runResultOf('tape-head');
    const v = compareRuns([base], [head]);
    expect(row(v, 'test/crash.test.js > crashes the process')).toMatchObject({ transition: 'F2F', headFailure: { kind: 'error' } });
    // never reached on either side: not reported at all
    expect(v.tests.some((t) => t.id === 'test/crash.test.js > never reached')).toBe(false);
  });
});

describe('missing tests', () => {
  it('a test whose file failed to collect on the base counts as a collection failure there', () => {
    const head: RunResult = { ...pyHead, tests: [...pyHead.tests, { id: 'tests/test_badimport.py::test_never', file: 'tests/test_badimport.py', outcome: 'passed' }], fileErrors: pyHead.fileErrors.filter((e) => e.file !== 'tests/test_badimport.py') };
    const v = compareRuns([pyBase], [head]);
    expect(row(v, 'tests/test_badimport.py::test_never')).toMatchObject({
      base: 'fail',
      head: 'pass',
      transition: 'F2P',
      baseFailure: { kind: 'collection', message: "ModuleNotFoundError: No module named 'pkg.nonexistent'" },
    });
    // the file now has a test id, so no synthetic file row
    expect(v.tests.some((t) => t.id === 'tests/test_badimport.py')).toBe(false);
  });

  it('a test absent on one side without a file error is "missing" there', () => {
    const head = only(pyHead, (id) => id !== 'tests/sub/test_math.py::test_zero');
    const v = compareRuns([pyBase], [head]);
    expect(row(v, 'tests/sub/test_math.py::test_zero')).toMatchObject({ transition: 'P2F', headFailure: { kind: 'missing' } });
  });

  it('a test absent from a timed-out run is a timeout there', () => {
    const timedOut = runResultOf('pytest-timeout');
    const v = compareRuns([runResultOf('pytest-head')], [timedOut]);
    expect(row(v, 'tests/test_only_pass.py::test_ok')).toMatchObject({ transition: 'P2F', headFailure: { kind: 'timeout' } });
    expect(row(v, 'tests/test_only_pass.py::test_ok').headFailure?.message).toMatch(/^timed out before reporting/);
  });

  it('a file erroring on one side only becomes a synthetic test with "missing" on the other', () => {
    const base: RunResult = { ...pyBase, tests: [], fileErrors: [{ file: 'tests/test_new.py', kind: 'collection', message: 'ImportError: cannot import name x' }] };
    const head: RunResult = { ...pyHead, tests: [], fileErrors: [] };
    const v = compareRuns([base], [head]);
    expect(v.tests).toEqual([
      {
        id: 'tests/test_new.py',
        base: 'fail',
        head: 'fail',
        transition: 'F2F',
        flaky: false,
        baseFailure: { kind: 'collection', message: 'ImportError: cannot import name x' },
        headFailure: { kind: 'missing', message: 'not reported in this run' },
      },
    ]);
  });
});

describe('flaky reruns', () => {
  const about = (id: string) => id === 'tests/sub/test_math.py::test_add' || id === 'tests/sub/test_math.py::test_zero';

  it('a base that sometimes passes never counts as F2P', () => {
    const v = compareRuns([only(pyBase, about), only(pyHead, about)], [only(pyHead, about), only(pyHead, about)]);
    expect(row(v, 'tests/sub/test_math.py::test_add')).toMatchObject({ base: 'pass', head: 'pass', transition: 'P2P', flaky: true, baseFlaky: true, baseFailure: { kind: 'assertion' } });
    expect(row(v, 'tests/sub/test_math.py::test_zero')).toMatchObject({ transition: 'P2P', flaky: false });
    expect(v.counts.F2P).toBe(0);
    expect(v.success).toBe(false);
    expect(v.likelyCorrect).toBe(false);
  });

  it('a head that sometimes fails counts as failing after the fix', () => {
    const v = compareRuns([only(pyBase, about)], [only(pyHead, about), only(pyBase, about)]);
    expect(row(v, 'tests/sub/test_math.py::test_add')).toMatchObject({ base: 'fail', head: 'fail', transition: 'F2F', flaky: true, headFlaky: true });
    expect(v.success).toBe(false);
  });

  it('a flaky bystander decides neither S nor "likely correct"', () => {
    const bystander = (id: string) => about(id) || id === 'tests/sub/test_math.py::test_param[1-2-3]';
    // test_param[1-2-3] flips on the base between reruns, then passes on the head; test_add is a clean F2P
    const baseA = only(pyBase, bystander);
    const baseB: RunResult = { ...baseA, tests: baseA.tests.map((t) => (t.id.endsWith('[1-2-3]') ? { id: t.id, file: t.file, outcome: 'passed' as const } : t)) };
    const v = compareRuns([baseA, baseB], [only(pyHead, bystander)]);
    expect(row(v, 'tests/sub/test_math.py::test_param[1-2-3]')).toMatchObject({ transition: 'P2P', flaky: true });
    expect(row(v, 'tests/sub/test_math.py::test_add').transition).toBe('F2P');
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
    expect(row(v, 'tests/sub/test_math.py::test_param[1-2-3]').runs).toEqual({ base: { runs: 2, failed: 1 }, head: { runs: 1, failed: 0 } });
  });

  it('stable reruns are not flaky', () => {
    const v = compareRuns([pyBase, pyBase, pyBase], [pyHead, pyHead]);
    expect(v.tests.every((t) => !t.flaky)).toBe(true);
    expect(v.counts).toEqual(compareRuns([pyBase], [pyHead]).counts);
  });
});

describe('S and likely correct', () => {
  const t = (transition: TestTransition['transition'], flaky = false): TestTransition => ({
    id: `${transition}${flaky ? '-flaky' : ''}-${Math.random()}`,
    base: transition[0] === 'F' ? 'fail' : 'pass',
    head: transition[2] === 'P' ? 'pass' : 'fail',
    transition,
    flaky,
  });

  it.each([
    [['F2P'], true, true],
    [['F2P', 'P2P'], true, true],
    [['F2P', 'F2F'], false, false],
    [['F2P', 'P2F'], false, false],
    [['P2P'], false, false],
    [['F2F'], false, false],
    [['P2F'], false, false],
    [[], false, false],
  ] as const)('%j → S=%s, likely correct=%s', (transitions, s, lc) => {
    const v = verdictOf(transitions.map((x) => t(x)));
    expect([v.success, v.likelyCorrect]).toEqual([s, lc]);
    expect(success(v)).toBe(s);
    expect(likelyCorrect(v)).toBe(lc);
  });

  it('a flaky test decides neither S nor "likely correct", and a flaky F2P does not count', () => {
    expect(verdictOf([t('F2P'), t('P2P', true)])).toMatchObject({ success: true, likelyCorrect: true });
    expect(verdictOf([t('F2P'), t('P2F', true)])).toMatchObject({ success: true, likelyCorrect: true });
    expect(verdictOf([t('F2P'), t('P2F')])).toMatchObject({ success: false, likelyCorrect: false });
    expect(verdictOf([t('F2P', true)])).toMatchObject({ success: false, likelyCorrect: false });
  });

  it('likely correct implies S on every combination of up to three tests', () => {
    const kinds = ['F2P', 'F2F', 'P2P', 'P2F'] as const;
    let checked = 0;
    for (const a of kinds) for (const b of kinds) for (const c of kinds) for (const fl of [false, true]) {
      const v = verdictOf([t(a), t(b), t(c, fl)]);
      if (v.likelyCorrect) expect(v.success).toBe(true);
      expect(v.counts[a]).toBeGreaterThan(0);
      checked++;
    }
    expect(checked).toBe(128);
  });
});

describe('helpers', () => {
  it('transitionOf', () => {
    expect([transitionOf('fail', 'pass'), transitionOf('fail', 'fail'), transitionOf('pass', 'pass'), transitionOf('pass', 'fail')]).toEqual(['F2P', 'F2F', 'P2P', 'P2F']);
  });
  it('fileOfId', () => {
    expect(fileOfId('a/test_x.py::C::t[1]')).toBe('a/test_x.py');
    expect(fileOfId('a/x.spec.ts > d > t')).toBe('a/x.spec.ts');
    expect(fileOfId('a/x.spec.ts')).toBe('a/x.spec.ts');
  });
  it('needs a run on each side', () => {
    let code: string | undefined;
    try {
      compareRuns([], [pyHead]);
    } catch (e) {
      code = isSwtError(e) ? e.code : undefined;
    }
    expect(code).toBe('BAD_INPUT');
  });
});

describe('relative to a baseline run without the test patch (SWT-bench get_resolution_success)', () => {
  const run = (tests: Array<[string, 'passed' | 'failed' | 'skipped']>) => ({
    tests: tests.map(([id, outcome]) => ({ id, outcome })),
    fileErrors: [],
    timedOut: false,
    exitCode: 0,
    output: '',
    durationMs: 1,
  });

  it('a skipped or already-failing test of the repository does not block S', () => {
    const withTests = compareRuns([run([['t.py::test_new', 'failed'], ['t.py::test_skip', 'skipped'], ['t.py::test_old_bug', 'failed']])], [run([['t.py::test_new', 'passed'], ['t.py::test_skip', 'skipped'], ['t.py::test_old_bug', 'failed']])]);
    expect(withTests.success).toBe(false);
    const baseline = compareRuns([run([['t.py::test_skip', 'skipped'], ['t.py::test_old_bug', 'failed']])], [run([['t.py::test_skip', 'skipped'], ['t.py::test_old_bug', 'failed']])]);
    const v = relativeTo(withTests, baseline);
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
    expect(v.tests.filter((t) => t.preexisting).map((t) => t.id)).toEqual(['t.py::test_old_bug', 't.py::test_skip']);
  });

  it("the fix PR's own new tests are not counted as the generated tests' F2P", () => {
    // Our test passes on both sides; the PR adds test_pr to the same file at head.
    const withTests = compareRuns([run([['t.py::test_ours', 'passed']])], [run([['t.py::test_ours', 'passed'], ['t.py::test_pr', 'passed']])]);
    expect(withTests.success).toBe(true);
    const baseline = compareRuns([run([])], [run([['t.py::test_pr', 'passed']])]);
    const v = relativeTo(withTests, baseline);
    expect(v.success).toBe(false);
    expect(v.likelyCorrect).toBe(false);
    expect(v.tests.find((t) => t.id === 't.py::test_pr')?.preexisting).toBe(true);
  });

  it('a new failure after the fix still fails S, and a baseline F2P the patched run loses fails S', () => {
    const withTests = compareRuns([run([['a', 'failed'], ['b', 'passed']])], [run([['a', 'passed'], ['b', 'failed']])]);
    const baseline = compareRuns([run([['b', 'passed']])], [run([['b', 'passed']])]);
    expect(relativeTo(withTests, baseline).success).toBe(false);
    const lost = relativeTo(compareRuns([run([['a', 'failed'], ['c', 'failed']])], [run([['a', 'passed'], ['c', 'failed']])]), compareRuns([run([['c', 'failed']])], [run([['c', 'passed']])]));
    expect(lost.success).toBe(false);
  });

  // Issue 39: `swt eval` reported an instance not S while its row held one F→P and every other test
  // P→P, flaky one included; `swt validate` said S. The baseline (one run per side) saw the flaky
  // test fail at base; the patched runs, with reruns, saw it flaky: not a reproduction the test
  // patch took away. One rule: a flaky or not-judged test decides nothing, in the rows or the baseline.
  it('a baseline F→P the patched runs show flaky decides nothing (S, as its rows say); a lost one is named, and the reasons say it', () => {
    const withTests = compareRuns([run([['new', 'failed'], ['c', 'failed']]), run([['new', 'failed'], ['c', 'passed']])], [run([['new', 'passed'], ['c', 'passed']]), run([['new', 'passed'], ['c', 'passed']])]);
    expect(withTests.tests.find((t) => t.id === 'c')).toMatchObject({ transition: 'P2P', flaky: true });
    const baseline = compareRuns([run([['c', 'failed']])], [run([['c', 'passed']])]);
    const v = relativeTo(withTests, baseline);
    expect(v.success).toBe(true);
    expect(v.lostReproductions).toBeUndefined();
    expect(verdictReasons(v).success).toBe('1 test goes from failing to passing and no test fails after the fix');
    // The test patch changed c so that it no longer reproduces: not S, and the verdict says which and why.
    const changed = relativeTo(compareRuns([run([['new', 'failed'], ['c', 'passed']])], [run([['new', 'passed'], ['c', 'passed']])]), baseline);
    expect(changed.success).toBe(false);
    expect(changed.lostReproductions).toEqual(['c']);
    expect(verdictReasons(changed).success).toBe('the test patch takes away what went from failing to passing without it (c)');
    // The eval row keeps what decides: the flaky flag and runs, the lost reproduction, the reasons.
    const row = verdictRow(v);
    expect(row.success).toBe(true);
    expect(row.tests.find((t) => t.id === 'c')).toMatchObject({ transition: 'P2P', flaky: true, runs: { base: { runs: 2, failed: 1 }, head: { runs: 2, failed: 0 } } });
    expect(row.why?.success).toBe(verdictReasons(v).success);
    expect(verdictRow(changed)).toMatchObject({ success: false, lostReproductions: ['c'], why: { success: expect.stringContaining('takes away') } });
  });
});

describe('a file-level entry made from the exit code alone (issue 7: every runner)', () => {
  // Real runs of mocha 1.21.5 over four files; `test/empty.js` is also requested and holds no test.
  const withEmpty = (name: string): RunResult => {
    const c = loadCapture(name);
    const p = parseRunReports(c.spec, { ...c.input, files: [...c.meta.files, 'test/empty.js'] });
    return { tests: p.tests, fileErrors: p.fileErrors, timedOut: false, exitCode: c.meta.exitCode, output: c.input.output, durationMs: 0 };
  };

  it('base fails (exit ≠ 0) because of other files, head passes (exit 0): no `F→F` row for the file, no `missing` failure', () => {
    const base = withEmpty('mocha1-base');
    const head = withEmpty('mocha1-head');
    expect(base.exitCode).not.toBe(0);
    expect(head.exitCode).toBe(0);
    const v = compareRuns([base], [head]);
    expect(v.tests.some((t) => t.id === 'test/empty.js')).toBe(false);
    expect(v.tests.filter((t) => t.baseFailure?.kind === 'missing' || t.headFailure?.kind === 'missing')).toEqual([]);
    // every test still has its verdict
    expect(row(v, 'test/math.js > math > adds two numbers').transition).toBe('F2P');
    expect(row(v, 'test/twice.js > twice > doubles')).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'collection' } });
  });
});

describe('confirmation of the tests that move', () => {
  const run = (tests: Array<[string, 'passed' | 'failed', string?]>, fileErrors: RunResult['fileErrors'] = []): RunResult => ({
    tests: tests.map(([id, outcome, message]) => ({ id, file: fileOfId(id), outcome, ...(outcome === 'failed' ? { failureKind: 'assertion' as const, message: message ?? 'boom' } : {}) })),
    fileErrors,
    timedOut: false,
    exitCode: 0,
    output: '',
    durationMs: 1,
  });
  const confirmed = (base: RunResult[], head: RunResult[], confirm?: TargetedRuns) => compareRuns(base, head, confirm ? { confirm } : {});
  const A = 'test/a.test.js > a';
  const B = 'test/a.test.js > b';
  const NEW = 'test/a.test.js > new';

  it('moving tests: all but P2P and an F2F failing the same way', () => {
    const v = confirmed(
      [run([[A, 'passed'], [B, 'failed', 'x'], ['t/b.py::same', 'failed', 'same'], ['t/b.py::differs', 'failed', 'one'], [NEW, 'failed']])],
      [run([[A, 'passed'], [B, 'passed'], ['t/b.py::same', 'failed', 'same'], ['t/b.py::differs', 'failed', 'two'], ['t/b.py::head_only', 'passed']])],
    );
    expect(movingTests(v).map((t) => t.id).sort()).toEqual([B, NEW, 't/b.py::differs', 't/b.py::head_only'].sort());
  });

  it('F2P counts when it held in every run on both sides; a P2F that passes on a rerun is flaky and out of S', () => {
    const first = { base: run([[NEW, 'failed'], [A, 'passed']]), head: run([[NEW, 'passed'], [A, 'failed']]) };
    const again = { base: [run([[NEW, 'failed'], [A, 'passed']]), run([[NEW, 'failed'], [A, 'passed']])], head: [run([[NEW, 'passed'], [A, 'passed']]), run([[NEW, 'passed'], [A, 'failed']])] };
    expect(confirmed([first.base], [first.head]).success).toBe(false);
    const v = confirmed([first.base], [first.head], { ...again, ids: [NEW, A], alone: false });
    expect(row(v, NEW)).toMatchObject({ transition: 'F2P', flaky: false, runs: { base: { runs: 3, failed: 3 }, head: { runs: 3, failed: 0 } } });
    expect(row(v, A)).toMatchObject({ transition: 'P2F', flaky: true, headFlaky: true, runs: { head: { runs: 3, failed: 2 } } });
    expect(row(v, A).orderDependent).toBeUndefined();
    expect(v).toMatchObject({ success: true, likelyCorrect: true });
  });

  it('an F2P that fails on a head rerun does not count', () => {
    const v = confirmed([run([[NEW, 'failed']])], [run([[NEW, 'passed']])], { base: [run([[NEW, 'failed']])], head: [run([[NEW, 'failed']])], ids: [NEW], alone: true });
    expect(row(v, NEW)).toMatchObject({ flaky: true, transition: 'F2F' });
    expect(v.success).toBe(false);
  });

  it('a real P2F holds on every rerun and still fails S', () => {
    const v = confirmed([run([[NEW, 'failed'], [A, 'passed']])], [run([[NEW, 'passed'], [A, 'failed']])], {
      base: [run([[A, 'passed']]), run([[A, 'passed']])],
      head: [run([[A, 'failed']]), run([[A, 'failed']])],
      ids: [A],
      alone: true,
    });
    expect(row(v, A)).toMatchObject({ transition: 'P2F', flaky: false, runs: { head: { runs: 3, failed: 3 } } });
    expect(v.success).toBe(false);
  });

  it('a failure with its file that every rerun alone passes fails only after the test before it', () => {
    const head = run([[NEW, 'passed'], [B, 'failed']]);
    const v = confirmed([run([[NEW, 'failed'], [B, 'passed']])], [head], { base: [run([[B, 'passed']])], head: [run([[B, 'passed']]), run([[B, 'passed']])], ids: [NEW, B], alone: true });
    expect(row(v, B)).toMatchObject({ flaky: true, orderDependent: `fails only after ${NEW}` });
    const first = confirmed([run([[B, 'passed']])], [run([[B, 'failed']])], { base: [], head: [run([[B, 'passed']])], ids: [B], alone: true });
    expect(row(first, B).orderDependent).toBe('fails only with its file');
    // Reruns of whole files cannot tell order from timing.
    const whole = confirmed([run([[NEW, 'failed'], [B, 'passed']])], [head], { base: [], head: [run([[NEW, 'passed'], [B, 'passed']])], ids: [B], alone: false });
    expect(row(whole, B)).toMatchObject({ flaky: true });
    expect(row(whole, B).orderDependent).toBeUndefined();
  });

  // sphinx-8721: viewcode's epub test fails at base after the html test (its env kept), passes alone.
  it('at base, a failure of its file in order every time that passes alone is a failure there, said; once in order, or once alone, it is flaky', () => {
    const first = { base: run([[A, 'passed'], [NEW, 'failed']]), head: run([[A, 'passed'], [NEW, 'passed']]) };
    const alone = { base: [run([[NEW, 'passed']]), run([[NEW, 'passed']])], head: [run([[NEW, 'passed']]), run([[NEW, 'passed']])] };
    const inOrder = { ids: [NEW], base: [run([[A, 'passed'], [NEW, 'failed']]), run([[A, 'passed'], [NEW, 'failed']])] };
    const v = confirmed([first.base], [first.head], { ...alone, ids: [NEW], alone: true, baseInOrder: inOrder });
    expect(row(v, NEW)).toMatchObject({ transition: 'F2P', flaky: false, orderDependent: `at base, fails only after ${A}`, runs: { base: { runs: 5, failed: 3 }, head: { runs: 3, failed: 0 } } });
    expect(v).toMatchObject({ success: true, likelyCorrect: true });
    expect(renderText(v)).toContain(`at base, fails only after ${A}, in its file's order every run (alone it passes)`);
    expect(renderMarkdown(v)).toContain(`; at base, fails only after ${A}, in its file's order every run (alone it passes) |`);
    // Without the runs in order: flaky, as before. A run in order that passes: flaky.
    expect(row(confirmed([first.base], [first.head], { ...alone, ids: [NEW], alone: true }), NEW)).toMatchObject({ flaky: true, transition: 'P2P' });
    const once = { ids: [NEW], base: [run([[A, 'passed'], [NEW, 'failed']]), run([[A, 'passed'], [NEW, 'passed']])] };
    expect(row(confirmed([first.base], [first.head], { ...alone, ids: [NEW], alone: true, baseInOrder: once }), NEW)).toMatchObject({ flaky: true, transition: 'P2P' });
    // The runs in order count only for the tests they were for.
    expect(row(confirmed([first.base], [first.head], { ...alone, ids: [NEW], alone: true, baseInOrder: { ...inOrder, ids: [] } }), NEW)).toMatchObject({ flaky: true });
  });

  it('which moving tests failed only with their file: every first run failed, every confirmation run that reported them passed', () => {
    const first = [run([[A, 'passed'], [NEW, 'failed'], [B, 'failed']])];
    expect(failingOnlyWithFile([NEW, B], first, [run([[NEW, 'passed'], [B, 'failed']]), run([[NEW, 'passed']])])).toEqual([NEW]);
    // Not reported alone at all: nothing to tell.
    expect(failingOnlyWithFile([NEW], first, [run([])])).toEqual([]);
    expect(failingOnlyWithFile([A], first, [run([[A, 'passed']])])).toEqual([]);
  });

  it('a rerun that did not report a test says nothing about it; reruns count only for the tests they targeted', () => {
    const v = confirmed([run([[NEW, 'failed'], [A, 'passed']])], [run([[NEW, 'passed'], [A, 'passed']])], {
      base: [run([])],
      head: [run([[A, 'failed']])],
      ids: [NEW],
      alone: true,
    });
    expect(row(v, NEW)).toMatchObject({ transition: 'F2P', flaky: false });
    expect(row(v, A)).toMatchObject({ transition: 'P2P', flaky: false });
    expect(row(v, A).runs).toBeUndefined();
  });
});
