import { runTestsKept } from '../../src/harness/runTests.js';
import { roundPlan } from '../../src/harness/rounds.js';
import { pytestRounds } from '../../src/ecosystems/python/rounds.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import type { RunResult, RunnerSpec } from '../../src/results/types.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

// pytest's confirmation rounds inside the first run (src/ecosystems/python/rounds.ts), on real
// pytest in real containers: a round sees a new process's module state, comes after the run (the
// run is what it was without rounds), runs only the tests the patch adds, prints nothing into the
// run's output; a command that keeps the hook from loading still gets its run; a round that hangs
// is killed and costs the run nothing; the run leaves without the interpreter's shutdown where
// nothing of a program's follows pytest.

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;

const OLD = 'import os\nimport random\nimport time\n\nimport counter\nimport numpy\n\nAT_IMPORT = numpy.random.random()\n\n\ndef test_existing():\n    assert counter.CALLS == []\n';
// Added by the "test patch": module state a second run in the same process would see, a file the
// run leaves behind, a test that hangs from the HANG_IN_ROUNDS-th round on (a file counts), and random
// draws that must differ from every earlier one: Python reseeds random in a fork; numpy's global
// generator, already drawn from at import, the plugin reseeds (else every round repeats its numbers).
const TEST_PATCH = [
  'diff --git a/test_state.py b/test_state.py',
  '--- a/test_state.py',
  '+++ b/test_state.py',
  '@@ -10,3 +10,28 @@ AT_IMPORT = numpy.random.random()',
  ' ',
  ' def test_existing():',
  '     assert counter.CALLS == []',
  '+',
  '+',
  '+def test_fresh_module_state():',
  '+    counter.CALLS.append(1)',
  '+    assert counter.CALLS == [1]',
  '+',
  '+',
  '+def test_after_the_run():',
  "+    first = not os.path.exists('/tmp/swt-round-marker')",
  "+    open('/tmp/swt-round-marker', 'a').close()",
  '+    assert first',
  '+',
  '+',
  '+def test_hangs_in_a_round():',
  "+    runs = open('/tmp/swt-hang-runs').read() if os.path.exists('/tmp/swt-hang-runs') else ''",
  "+    open('/tmp/swt-hang-runs', 'a').write('x')",
  "+    if len(runs) >= int(os.environ.get('HANG_IN_ROUNDS', '9')):",
  '+        time.sleep(3600)',
  '+',
  '+',
  '+def test_draws_afresh():',
  "+    seen = open('/tmp/swt-draws').read().split() if os.path.exists('/tmp/swt-draws') else []",
  "+    draws = ['r%r' % random.random(), 'n%r' % numpy.random.random()]",
  "+    open('/tmp/swt-draws', 'a').write(' '.join(draws) + ' ')",
  '+    assert not set(draws) & set(seen)',
  '',
].join('\n');

// A new test file whose import starts a thread: a fork would not have it.
const THREAD_PATCH = [
  'diff --git a/test_thread.py b/test_thread.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/test_thread.py',
  '@@ -0,0 +1,8 @@',
  '+import threading',
  '+import time',
  '+',
  '+threading.Thread(target=time.sleep, args=(30,), daemon=True).start()',
  '+',
  '+',
  '+def test_with_a_thread():',
  '+    assert threading.active_count() == 2',
  '',
].join('\n');

// A test file whose patch adds only lines without a name to go by (no letter in its literals): a
// parametrize row above a test, and the continuation line of another test's last statement.
// Those tests are chosen by their lines, decorators to the end of their last statement.
const SPANS_OLD = [
  'import pytest',
  '',
  '',
  "@pytest.mark.parametrize('n', [",
  '    1,',
  '])',
  'def test_row(n):',
  '    assert n > 0',
  '',
  '',
  'def test_sum():',
  '    assert sum([',
  '        1,',
  '    ]) > 0',
  '',
  '',
  'def test_untouched():',
  '    assert True',
  '',
].join('\n');
const SPANS_PATCH = [
  'diff --git a/test_spans.py b/test_spans.py',
  '--- a/test_spans.py',
  '+++ b/test_spans.py',
  '@@ -3,6 +3,7 @@ import pytest',
  ' ',
  " @pytest.mark.parametrize('n', [",
  '     1,',
  '+    2,',
  ' ])',
  ' def test_row(n):',
  '     assert n > 0',
  '@@ -11,6 +12,7 @@ def test_row(n):',
  ' def test_sum():',
  '     assert sum([',
  '         1,',
  '+        2,',
  '     ]) > 0',
  ' ',
  ' ',
  '',
].join('\n');

// Test shapes whose lines the plugin must tell apart: parametrize rows, a class's methods (one
// with a nested function, one decorated, a class attribute between them), a helper between tests,
// and a test inherited from another file (whose lines are that file's, never this one's).
const SHAPES = [
  'import pytest',
  'from shapes_base import Base',
  '',
  '',
  'def helper():',
  '    return 1',
  '',
  '',
  "@pytest.mark.parametrize('n', [",
  '    1,',
  '    2,',
  '])',
  'def test_rows(n):',
  '    assert n',
  '',
  '',
  'class TestThings:',
  '    def test_a(self):',
  '        def inner():',
  '            return [',
  '                1,',
  '            ]',
  '        assert inner()',
  '',
  "    @pytest.mark.filterwarnings('ignore')",
  '    def test_b(self):',
  '        assert (lambda: 1)()',
  '',
  '    x = 1',
  '',
  '    def test_c(self):',
  '        assert True',
  '',
  '',
  'class TestInherited(Base):',
  '    pass',
  '',
  '',
  'def test_last():',
  '    assert sum([',
  '        1,',
  '    ])',
  '',
].join('\n');
// Beside the run: for every line of test_shapes.py, the plugin's choice against measuring every
// test's lines (its first to its last, from its code, when its code is in its own file).
const CHECK_CHOSEN = [
  'import inspect, json, os',
  'import swt_rounds',
  '',
  '',
  'def pytest_collection_finish(session):',
  '    root = str(session.config.rootpath)',
  "    path = 'test_shapes.py'",
  '    count = len(open(os.path.join(root, path)).read().splitlines())',
  '    def measured(lines):',
  '        out = []',
  '        for item in session.items:',
  '            code = inspect.unwrap(item.function).__code__',
  '            if os.path.realpath(code.co_filename) != os.path.realpath(str(item.path)):',
  '                continue',
  '            if any(code.co_firstlineno <= n <= swt_rounds._last_line(code) for n in lines):',
  '                out.append(item.nodeid)',
  '        return out',
  '    def chosen(lines):',
  "        return [i.nodeid for i in swt_rounds._chosen(session, {'lines': {path: lines}, 'names': []})]",
  '    plans = [[n] for n in range(1, count + 1)] + [list(range(1, count + 1, k)) for k in (2, 3, 5)]',
  '    differing = [p for p in plans if chosen(p) != measured(p)]',
  "    by_line = {n: chosen([n]) for n in range(1, count + 1)}",
  "    with open('/tmp/swt-chosen.json', 'w') as f:",
  "        json.dump({'plans': len(plans), 'differing': differing, 'byLine': by_line}, f)",
  '',
].join('\n');

// The project's own unconfigure hook: every process that runs it says so. How a process left: its
// atexit work says so in every way out but os._exit's, a module object's finalizer only in the
// interpreter's shutdown. SWT_FAIL_TESTS fails every test; SWT_THREAD leaves a thread the shutdown waits for.
const CONFTEST = [
  'import atexit, os, threading, time',
  '',
  'import pytest',
  '',
  '',
  'def pytest_unconfigure(config):',
  "    open('/tmp/swt-unconfigured', 'a').write('%d\\n' % os.getpid())",
  '',
  '',
  "atexit.register(lambda: open('/tmp/swt-atexit', 'a').write('%d\\n' % os.getpid()))",
  '',
  '',
  'class _Finalized:',
  // Its names bound now: the shutdown empties the module's before its objects go.
  '    def __del__(self, open=open, getpid=os.getpid):',
  "        open('/tmp/swt-finalized', 'a').write('%d\\n' % getpid())",
  '',
  '',
  '_FINALIZED = _Finalized()',
  '',
  '',
  '@pytest.fixture(autouse=True)',
  'def _fail_if_asked():',
  '    yield',
  "    assert not os.environ.get('SWT_FAIL_TESTS')",
  '',
  '',
  "if os.environ.get('SWT_THREAD'):",
  '    threading.Thread(target=time.sleep, args=(8,)).start()',
  '',
].join('\n');

const PYTEST: RunnerSpec = { kind: 'pytest', template: 'python3 -m pytest -p no:cacheprovider {files}' };
const FILES = ['test_state.py'];

beforeAll(async () => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({
    'counter.py': 'CALLS = []\n',
    'test_state.py': OLD,
    'test_spans.py': SPANS_OLD,
    'test_shapes.py': SHAPES,
    'shapes_base.py': 'class Base:\n    def test_from_base(self):\n        assert True\n',
    'check_chosen.py': CHECK_CHOSEN,
    'conftest.py': CONFTEST,
  });
  // numpy from PyPI, through the egress proxy.
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: 'python3 -m pip install --no-input --progress-bar off numpy' });
}, 900_000);

afterAll(cleanUpEcosystemRuns);

const outcomes = (r: RunResult) => Object.fromEntries(r.tests.map((t) => [t.id.replace('test_state.py::', ''), t.outcome]));

async function run(runner: RunnerSpec, patch = TEST_PATCH, files = FILES) {
  const plan = roundPlan(patch, files, 2)!;
  const started = Date.now();
  const r = await runTestsKept(sandbox, { env, repo: repo.path, state: { rev: repo.sha, patches: [patch] }, runner, files, roundPlan: plan });
  await r.kept?.release();
  return { ...r, ms: Date.now() - started };
}

describe('pytest rounds inside the first run (real containers)', () => {
  it('each round runs the added tests from a fresh module state, after the run, and prints nothing into its output', async () => {
    const { result, rounds } = await run(PYTEST);
    // The run itself: every test passes, the marker test too (no round ran before it).
    expect(outcomes(result)).toEqual({ test_existing: 'passed', test_fresh_module_state: 'passed', test_after_the_run: 'passed', test_hangs_in_a_round: 'passed', test_draws_afresh: 'passed' });
    expect(rounds).toHaveLength(2);
    for (const round of rounds!) {
      // Only what the patch added; module state as a new process has it (a repeat in one process
      // would see CALLS == [1, 1]); the run's file is there, as for a rerun after it.
      expect(outcomes(round)).toEqual({ test_fresh_module_state: 'passed', test_after_the_run: 'failed', test_hangs_in_a_round: 'passed', test_draws_afresh: 'passed' });
    }
    expect(result.output.match(/\d+ passed/g)).toEqual(['5 passed']);
  }, 300_000);

  it("a round ends at the first unconfigure hook, its report written: the project's own hook (and the garbage collections of pytest ≥ 8.4) run in the run alone", async () => {
    const plan = roundPlan(TEST_PATCH, FILES, 2)!;
    const r = await runTestsKept(sandbox, { env, repo: repo.path, state: { rev: repo.sha, patches: [TEST_PATCH] }, runner: PYTEST, files: FILES, roundPlan: plan });
    try {
      expect(r.rounds).toHaveLength(2);
      for (const round of r.rounds!) expect(outcomes(round)).toEqual({ test_fresh_module_state: 'passed', test_after_the_run: 'failed', test_hangs_in_a_round: 'passed', test_draws_afresh: 'passed' });
      const seen = await r.kept!.rerun('cat /tmp/swt-unconfigured');
      expect(seen.output.trim().split('\n')).toHaveLength(1);
    } finally {
      await r.kept?.release();
    }
  }, 300_000);

  it("the run leaves once pytest is done, without the interpreter's shutdown, its exit code and atexit work as they were; a program that calls pytest itself, or a thread the shutdown waits for, gets the shutdown", async () => {
    const left = async (runner: RunnerSpec) => {
      const r = await runTestsKept(sandbox, { env, repo: repo.path, state: { rev: repo.sha, patches: [TEST_PATCH] }, runner, files: FILES, roundPlan: roundPlan(TEST_PATCH, FILES, 2)! });
      try {
        const seen = await r.kept!.rerun('for f in atexit finalized; do printf "%s=%s " $f $(cat /tmp/swt-$f 2>/dev/null | wc -l); done');
        return { exitCode: r.result.exitCode, rounds: r.rounds?.length ?? 0, seen: seen.output.trim() };
      } finally {
        await r.kept?.release();
      }
    };
    expect(await left(PYTEST)).toEqual({ exitCode: 0, rounds: 2, seen: 'atexit=1 finalized=0' });
    expect(await left({ ...PYTEST, env: { SWT_FAIL_TESTS: '1' } })).toEqual({ exitCode: 1, rounds: 2, seen: 'atexit=1 finalized=0' });
    expect(await left({ kind: 'pytest', template: 'pytest-3 -p no:cacheprovider {files}' })).toEqual({ exitCode: 0, rounds: 2, seen: 'atexit=1 finalized=0' });
    // pytest's main called by a program, at its top level or from a function, the program going on after it.
    expect(await left({ kind: 'pytest', template: "python3 -c 'import sys, pytest; code = pytest.main(); sys.exit(code)' -p no:cacheprovider {files}" })).toEqual({ exitCode: 0, rounds: 2, seen: 'atexit=1 finalized=1' });
    expect(await left({ kind: 'pytest', template: "python3 -c 'import sys, pytest; run = lambda: pytest.main(); code = run(); sys.exit(code)' -p no:cacheprovider {files}" })).toEqual({ exitCode: 0, rounds: 2, seen: 'atexit=1 finalized=1' });
    expect(await left({ ...PYTEST, env: { SWT_THREAD: '1' } })).toEqual({ exitCode: 0, rounds: 0, seen: 'atexit=1 finalized=1' });
  }, 300_000);

  it('a test whose lines hold an added one is chosen, from its decorators to the end of its last statement', async () => {
    const { result, rounds } = await run(PYTEST, SPANS_PATCH, ['test_spans.py']);
    expect(outcomes(result)).toEqual({ 'test_spans.py::test_row[1]': 'passed', 'test_spans.py::test_row[2]': 'passed', 'test_spans.py::test_sum': 'passed', 'test_spans.py::test_untouched': 'passed' });
    expect(rounds).toHaveLength(2);
    for (const round of rounds!) expect(outcomes(round)).toEqual({ 'test_spans.py::test_row[1]': 'passed', 'test_spans.py::test_row[2]': 'passed', 'test_spans.py::test_sum': 'passed' });
  }, 300_000);

  it('an added line chooses the test whose lines hold it, as measuring every test would, on every line of a file of every shape', async () => {
    const command = `${pytestRounds.prepare('/tmp/swt-out', { rounds: 2, lines: {} })} python3 -m pytest -p no:cacheprovider -p check_chosen --collect-only -q test_shapes.py && printf 'SWT-CHOSEN ' && cat /tmp/swt-chosen.json`;
    const outcome = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [] }, command });
    const line = (outcome.output ?? '').split('\n').find((l) => l.startsWith('SWT-CHOSEN '));
    expect(line).toBeDefined();
    const found = JSON.parse(line!.slice('SWT-CHOSEN '.length)) as { plans: number; differing: number[][]; byLine: Record<string, string[]> };
    expect(found.plans).toBe(SHAPES.split('\n').length - 1 + 3);
    expect(found.differing).toEqual([]);
    const at = (text: string) => found.byLine[String(SHAPES.split('\n').indexOf(text) + 1)];
    expect(at('    2,')).toEqual(['test_shapes.py::test_rows[1]', 'test_shapes.py::test_rows[2]']);
    expect(at('                1,')).toEqual(['test_shapes.py::TestThings::test_a']);
    expect(at("    @pytest.mark.filterwarnings('ignore')")).toEqual(['test_shapes.py::TestThings::test_b']);
    expect(at('        1,')).toEqual(['test_shapes.py::test_last']);
    for (const none of ['    return 1', '    x = 1', '    pass', 'class TestInherited(Base):']) expect(at(none)).toEqual([]);
    // The inherited test is collected here, and no line of this file chooses it.
    expect(Object.values(found.byLine).flat()).not.toContain('test_shapes.py::TestInherited::test_from_base');
    expect(outcome.output).toContain('test_shapes.py::TestInherited::test_from_base');
  }, 300_000);

  it('a command whose own PYTHONPATH keeps the hook from loading gets its run as it is, without rounds', async () => {
    const { result, rounds } = await run({ kind: 'pytest', template: 'PYTHONPATH=/nowhere python3 -m pytest -p no:cacheprovider {files}' });
    expect(outcomes(result)).toEqual({ test_existing: 'passed', test_fresh_module_state: 'passed', test_after_the_run: 'passed', test_hangs_in_a_round: 'passed', test_draws_afresh: 'passed' });
    expect(rounds).toBeUndefined();
    expect(result.output).not.toMatch(/swt_rounds/);
  }, 300_000);

  // The first round is a child of the waiting copy, which kills it; the last is the copy itself, which the run kills.
  it.each([
    ['the first', '1'],
    ['the last', '2'],
  ])('a round that hangs (%s) is killed after 10 s: the run keeps its result and there are no rounds', async (_which, from) => {
    const { result, rounds, ms } = await run({ ...PYTEST, env: { HANG_IN_ROUNDS: from } });
    expect(outcomes(result)).toEqual({ test_existing: 'passed', test_fresh_module_state: 'passed', test_after_the_run: 'passed', test_hangs_in_a_round: 'passed', test_draws_afresh: 'passed' });
    expect(result.timedOut).toBe(false);
    expect(rounds).toBeUndefined();
    // 10 s and the container's own time: not the 25 s the run allows all its rounds.
    expect(ms).toBeGreaterThan(10_000);
    expect(ms).toBeLessThan(22_000);
  }, 300_000);

  it('a run whose imports started a thread gets no rounds (the forks would lack it): its result stands', async () => {
    const { result, rounds } = await run(PYTEST, THREAD_PATCH, ['test_thread.py']);
    expect(outcomes(result)).toEqual({ 'test_thread.py::test_with_a_thread': 'passed' });
    expect(rounds).toBeUndefined();
  }, 300_000);
});
