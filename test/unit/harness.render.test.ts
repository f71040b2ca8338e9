import { compareRuns, verdictOf } from '../../src/harness/classify.js';
import { orderedTests, renderMarkdown, renderText, verdictReasons } from '../../src/harness/render.js';
import type { RunResult, TestTransition } from '../../src/results/types.js';
import { runResultOf } from './fixtures/reports/load.js';

const pyBase = runResultOf('pytest-base');
const pyHead = runResultOf('pytest-head');
const only = (run: RunResult, keep: (id: string) => boolean): RunResult => ({ ...run, tests: run.tests.filter((t) => keep(t.id)), fileErrors: run.fileErrors.filter((e) => keep(e.file)) });

describe('renderMarkdown', () => {
  it('renders a small verdict exactly', () => {
    const keep = (id: string) => id === 'tests/sub/test_math.py::test_add' || id === 'tests/sub/test_math.py::test_zero';
    const v = compareRuns([only(pyBase, keep)], [only(pyHead, keep)]);
    expect(renderMarkdown(v, { title: 'Test results' })).toBe(
      [
        '### Test results',
        '',
        '| Test | Before fix | After fix | Result | Details |',
        '| --- | --- | --- | --- | --- |',
        '| `tests/sub/test_math.py::test_add` | ❌ fail | ✅ pass | **F→P** | before: assertion `assert -1 == 5 ⏎ + where -1 = add(2, 3)` |',
        '| `tests/sub/test_math.py::test_zero` | ✅ pass | ✅ pass | P→P |  |',
        '',
        'F→P 1 · P→F 0 · F→F 0 · P→P 1',
        '',
        '- ✅ **S (the tests reproduce the issue): yes**: 1 test goes from failing to passing and no test fails after the fix.',
        '- ✅ **Fix likely correct: yes**: every test passes after the fix and at least one failed before it.',
        '',
      ].join('\n'),
    );
  });

  it('puts F→P first and explains why S and "likely correct" fail', () => {
    const md = renderMarkdown(compareRuns([pyBase], [pyHead]));
    const rows = md.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toHaveLength(14);
    expect(rows.slice(0, 6).every((r) => r.includes('**F→P**'))).toBe(true);
    expect(rows.at(-1)).toContain('P→P');
    expect(md).toContain('| `tests/test_broken.py` | ❌ fail (collection) | ❌ fail (collection) | F→F | after: collection `File');
    expect(md).toContain('⏭️ skipped');
    expect(md).toContain('- ❌ **S (the tests reproduce the issue): no**: 6 tests fail after the fix.');
    expect(md).toContain('- ❌ **Fix likely correct: no**: 6 tests still fail (F→F).');
  });

  it('marks flaky sides', () => {
    const keep = (id: string) => id === 'tests/sub/test_math.py::test_add';
    const md = renderMarkdown(compareRuns([only(pyBase, keep), only(pyHead, keep)], [only(pyHead, keep)]));
    expect(md).toContain('| `tests/sub/test_math.py::test_add` | ⚠️ flaky | ✅ pass | P→P (flaky) | before: assertion');
    expect(md).toContain('**Flaky tests** (outcome changed between runs on the same code; not counted for S or the fix filter):');
    expect(md).toContain('- ⚠️ `tests/sub/test_math.py::test_add`: failed 1 of 2 runs before the fix');
  });

  it('escapes pipes and backticks and flattens newlines', () => {
    const t: TestTransition = {
      id: 'a.test.js > uses | and `ticks`',
      base: 'fail',
      head: 'fail',
      transition: 'F2F',
      flaky: false,
      headFailure: { kind: 'error', message: 'Error: a | b\n  second line' },
    };
    const md = renderMarkdown(verdictOf([t]));
    expect(md).toContain('| `` a.test.js > uses \\| and `ticks` `` |');
    expect(md).toContain('after: error `Error: a \\| b ⏎ second line`');
    expect(md.split('\n').filter((l) => l.startsWith('| ``'))).toHaveLength(1);
  });

  it('caps the rows and says what was left out', () => {
    const many: TestTransition[] = Array.from({ length: 7 }, (_, i) => ({ id: `t${i}`, base: 'pass', head: 'pass', transition: 'P2P', flaky: false }));
    const md = renderMarkdown(verdictOf(many), { maxRows: 5 });
    expect(md.split('\n').filter((l) => l.startsWith('| `t'))).toHaveLength(5);
    expect(md).toContain('_…and 2 more tests (2 P→P)._');
  });

  it('says when there is nothing', () => {
    const md = renderMarkdown(verdictOf([]));
    expect(md).toContain('_No test results._');
    expect(md).toContain('**S (the tests reproduce the issue): no**: no test ran.');
  });
});

describe('renderText', () => {
  it('aligns columns and shows failure excerpts', () => {
    const txt = renderText(compareRuns([pyBase], [pyHead]));
    const lines = txt.split('\n');
    const header = lines[0];
    expect(header).toMatch(/^TEST\s+BEFORE FIX\s+AFTER FIX\s+RESULT$/);
    const resultCol = header.indexOf('RESULT');
    const tableRows = lines.filter((l) => /(F→P|F→F|P→P|P→F)$/.test(l));
    expect(tableRows).toHaveLength(14);
    for (const r of tableRows) expect(r.slice(resultCol)).toMatch(/^[FP]→[FP]$/);
    expect(txt).toContain('    before fix: assert -1 == 5 ⏎ + where -1 = add(2, 3)');
    expect(txt).toContain('fail (collection)');
    expect(txt).toContain('S (reproduces the issue): no: 6 tests fail after the fix');
    expect(txt).toContain('Fix likely correct:       no: 6 tests still fail (F→F)');
  });

  it('clips long ids from the left', () => {
    const id = `${'very/'.repeat(30)}test_x.py::test_y`;
    const txt = renderText(verdictOf([{ id, base: 'fail', head: 'pass', transition: 'F2P', flaky: false }]), { width: 40 });
    const row = txt.split('\n')[1];
    expect(row.startsWith('…')).toBe(true);
    expect(row).toContain('test_x.py::test_y');
  });
});

describe('helpers', () => {
  it('orderedTests sorts by transition, then id', () => {
    const mk = (id: string, transition: TestTransition['transition']): TestTransition => ({ id, transition, base: 'pass', head: 'pass', flaky: false });
    expect(orderedTests(verdictOf([mk('b', 'P2P'), mk('a', 'P2P'), mk('z', 'F2P'), mk('c', 'P2F'), mk('d', 'F2F')])).map((t) => t.id)).toEqual(['z', 'c', 'd', 'a', 'b']);
  });
  it('verdictReasons lists every reason "likely correct" fails', () => {
    const mk = (transition: TestTransition['transition'], flaky = false): TestTransition => ({ id: `${transition}${flaky}`, transition, base: 'fail', head: transition.endsWith('P') ? 'pass' : 'fail', flaky });
    expect(verdictReasons(verdictOf([mk('P2F'), mk('F2F'), mk('P2P', true)])).likelyCorrect).toBe(
      'no test goes from failing to passing; 1 test breaks (P→F); 1 test still fails (F→F)',
    );
  });
});
