import { rerunTargets, runSides } from '../../src/pipeline/sides.js';
import { runnerFromCommand } from '../../src/harness/runners.js';
import { silentProgress } from '../../src/pipeline/progress.js';
import type { KeptContainer, RunOutcome, Sandbox } from '../../src/sandbox/types.js';
import type { RunResult } from '../../src/results/types.js';

const run = (tests: Array<[string, 'passed' | 'failed']>, fileErrors: RunResult['fileErrors'] = []): RunResult => ({
  tests: tests.map(([id, outcome]) => ({ id, outcome })),
  fileErrors,
  timedOut: false,
  exitCode: 1,
  output: '',
  durationMs: 1,
});

describe('rerunTargets: what a side reruns to confirm the tests that moved', () => {
  const files = ['t/test_a.py', 't/test_b.py', 't/c.test.js'];

  it('at head, a test that failed there runs alone; the others run together, one invocation per file; at base all together', () => {
    const side = run([['t/test_a.py::x', 'failed'], ['t/test_a.py::y', 'passed'], ['t/test_a.py::z', 'passed'], ['t/test_a.py::w', 'failed'], ['t/c.test.js > s > q', 'passed']]);
    expect(rerunTargets(['t/test_a.py::x', 't/test_a.py::y', 't/test_a.py::z', 't/test_a.py::w', 't/c.test.js > s > q'], [side], files, true)).toEqual([
      { file: 't/test_a.py', ids: ['t/test_a.py::x'] },
      { file: 't/test_a.py', ids: ['t/test_a.py::w'] },
      { file: 't/test_a.py', ids: ['t/test_a.py::y', 't/test_a.py::z'] },
      { file: 't/c.test.js', ids: ['t/c.test.js > s > q'] },
    ]);
    expect(rerunTargets(['t/test_a.py::x', 't/test_a.py::y', 't/test_a.py::w'], [side], files, true, 'base')).toEqual([{ file: 't/test_a.py', ids: ['t/test_a.py::x', 't/test_a.py::y', 't/test_a.py::w'] }]);
  });

  it('a test this side never reported is not asked for; a file that did not load, or a runner that cannot select, reruns whole', () => {
    const side = run([['t/test_a.py::x', 'passed']], [{ file: 't/test_b.py', kind: 'collection', message: 'ImportError' }]);
    expect(rerunTargets(['t/test_a.py::only_on_the_other_side', 't/test_a.py::x', 't/test_b.py'], [side], files, true)).toEqual([
      { file: 't/test_a.py', ids: ['t/test_a.py::x'] },
      { file: 't/test_b.py' },
    ]);
    expect(rerunTargets(['t/test_a.py::x'], [side], files, false)).toEqual([{ file: 't/test_a.py' }]);
  });

  it('only the requested test files, and no id with control characters in a command', () => {
    const side = run([['t/test_a.py::x\nrm', 'failed'], ['other/test_z.py::y', 'failed']]);
    expect(rerunTargets(['t/test_a.py::x\nrm', 'other/test_z.py::y'], [side], files, true)).toEqual([{ file: 't/test_a.py' }]);
  });
});

describe('rerunTargets: ids that do not start with their file (Go, Rust unit tests, JVM)', () => {
  it('takes the file the runner reported for the test', () => {
    const side: RunResult = {
      tests: [
        { id: 'example.com/m/pkg.TestA', file: 'pkg/a_test.go', outcome: 'passed' },
        { id: 'com.example.CalcTest.adds', file: 'src/test/java/com/example/CalcTest.java', outcome: 'passed' },
        { id: 'example.com/m/other.TestB', file: 'other/b_test.go', outcome: 'passed' },
      ],
      fileErrors: [],
      timedOut: false,
      exitCode: 0,
      output: '',
      durationMs: 1,
    };
    const files = ['pkg/a_test.go', 'src/test/java/com/example/CalcTest.java'];
    expect(rerunTargets(['example.com/m/pkg.TestA', 'com.example.CalcTest.adds', 'example.com/m/other.TestB'], [side], files, true, 'base')).toEqual([
      { file: 'pkg/a_test.go', ids: ['example.com/m/pkg.TestA'] },
      { file: 'src/test/java/com/example/CalcTest.java', ids: ['com.example.CalcTest.adds'] },
    ]);
  });
});

describe('runSides: each side confirms in its own kept container, never the other side\'s', () => {
  const env = { image: 'swt-env:abc', key: 'abc', baseImage: 'python:3.11', snapshotRev: 'base', cached: true, buildMs: 0 };
  const ctx = { repo: '/repos/x', base: 'base', env, runner: runnerFromCommand('python3 -m pytest {files}'), config: {}, files: [], baseImage: 'python:3.11', install: '', installNotes: [] };
  const junit = (failed: boolean) =>
    `<testsuites><testsuite name="pytest" tests="1"><testcase classname="t.test_a" name="test_x" file="t/test_a.py">${failed ? '<failure message="boom">boom</failure>' : ''}</testcase></testsuite></testsuites>`;
  const outcome = (files: Record<string, string>): RunOutcome => ({ exitCode: 0, timedOut: false, oomKilled: false, output: '', files, durationMs: 1 });
  const states = { base: { rev: 'base', patches: ['tests'] }, head: { rev: 'head', patches: ['tests'] } };

  /** A sandbox whose first runs keep their container (unless `lost`), recording where every command went. */
  function fake(lost: 'head' | null) {
    const calls: string[] = [];
    const sandbox: Pick<Sandbox, 'run'> = {
      async run(req) {
        const side = req.state.rev as 'base' | 'head';
        const failed = side === 'base';
        calls.push(`run ${side}${req.keep ? ' keep' : ''}`);
        if (!req.keep) return outcome({ 'c0-0/junit.xml': junit(failed), 'c1-0/junit.xml': junit(failed) });
        const kept: KeptContainer = {
          async rerun() {
            calls.push(`rerun in ${side}'s container`);
            return outcome({ 'c0-0/junit.xml': junit(failed), 'c1-0/junit.xml': junit(failed) });
          },
          async release() {
            calls.push(`release ${side}`);
          },
        };
        return { ...outcome({ 'junit.xml': junit(failed) }), ...(side === lost ? {} : { kept }) };
      },
    };
    return { sandbox: sandbox as Sandbox, calls };
  }
  const sides = { ...states, files: ['t/test_a.py'], headBaseline: { rev: 'head', patches: [] }, headHoldsTests: false };

  it('the F→P test reruns twice on each side, each in the container of that side\'s first run, and both are released', async () => {
    const { sandbox, calls } = fake(null);
    const r = await runSides(sandbox, ctx, sides, { base: [], head: [] }, { confirm: 2 }, silentProgress);
    expect(r.confirm?.ids).toEqual(['t/test_a.py::test_x']);
    expect(r.confirm?.base.map((x) => x.tests.map((t) => t.outcome))).toEqual([['failed'], ['failed']]);
    expect(r.confirm?.head.map((x) => x.tests.map((t) => t.outcome))).toEqual([['passed'], ['passed']]);
    expect(calls.filter((c) => c.startsWith('run')).sort()).toEqual(['run base keep', 'run head keep']);
    expect(calls.filter((c) => c.startsWith('rerun')).sort()).toEqual(["rerun in base's container", "rerun in head's container"]);
    expect(calls.filter((c) => c.startsWith('release')).sort()).toEqual(['release base', 'release base', 'release head', 'release head']);
  });

  it('a side whose container was not kept reruns in a new one of its own: the head never borrows base\'s', async () => {
    const { sandbox, calls } = fake('head');
    const r = await runSides(sandbox, ctx, sides, { base: [], head: [] }, { confirm: 2 }, silentProgress);
    expect(r.confirm?.head).toHaveLength(2);
    expect(calls).not.toContain("rerun in head's container");
    expect(calls.filter((c) => c === "rerun in base's container")).toHaveLength(1);
    expect(calls).toContain('run head');
  });

  it('the confirmation does not wait for the base baseline: it reruns while that run goes on, and the head baseline waits for it', async () => {
    const { sandbox: inner, calls } = fake(null);
    let baselineDone!: () => void;
    const baselineGate = new Promise<void>((r) => (baselineDone = r));
    const sandbox = {
      async run(req) {
        if (req.state.patches.length > 0) {
          const out = await inner.run(req);
          // The baseline may end only once a side has started its reruns.
          return out.kept ? { ...out, kept: { ...out.kept, rerun: async (c: string, sig?: AbortSignal) => (baselineDone(), out.kept!.rerun(c, sig)) } } : out;
        }
        calls.push(`baseline ${req.state.rev} starts`);
        await baselineGate;
        calls.push(`baseline ${req.state.rev} ends`);
        // Fails at base without the tests: the head baseline has to run, after it.
        return outcome({ 'junit.xml': junit(req.state.rev === 'base') });
      },
    } as Sandbox;
    const r = await runSides(sandbox, ctx, sides, { base: ['t/test_a.py'], head: ['t/test_a.py'] }, { confirm: 2 }, silentProgress);
    expect(calls.indexOf('baseline base ends')).toBeGreaterThan(calls.findIndex((c) => c.startsWith('rerun')));
    expect(calls.indexOf('baseline head starts')).toBeGreaterThan(calls.indexOf('baseline base ends'));
    expect(r.confirm?.head).toHaveLength(2);
    expect(r.baseline?.base.tests.map((t) => t.outcome)).toEqual(['failed']);
    expect(r.baseline?.head.tests.map((t) => t.outcome)).toEqual(['passed']);
  });

  it('with confirmation off nothing is kept', async () => {
    const { sandbox, calls } = fake(null);
    await runSides(sandbox, ctx, sides, { base: [], head: [] }, { confirm: 0 }, silentProgress);
    expect(calls.sort()).toEqual(['run base', 'run head']);
  });
  /** First runs whose process also ran the rounds (pytest's plugin): `junit.xml.roundN` beside the report, when `rounds` says so. */
  function withRounds(fails: Record<'base' | 'head', boolean>, rounds: (side: 'base' | 'head') => boolean) {
    const { sandbox: inner, calls } = fake(null);
    const sandbox = {
      async run(req) {
        const out = await inner.run(req);
        const side = req.state.rev as 'base' | 'head';
        calls.push(`${side} asked for rounds: ${/swt_rounds/.test(req.command)}`);
        const failed = fails[side];
        const files: Record<string, string> = { 'junit.xml': junit(failed), ...(rounds(side) ? { 'junit.xml.round1': junit(failed), 'junit.xml.round2': junit(false) } : {}) };
        return { ...out, files };
      },
    } as Pick<Sandbox, 'run'> as Sandbox;
    return { sandbox, calls };
  }
  const planned = { ...sides, rounds: { base: { rounds: 2, lines: { 't/test_a.py': [3] } }, head: { rounds: 2, lines: { 't/test_a.py': [3] } } } };

  it('rounds inside the first runs confirm the F→P test on both sides: no rerun, both containers released, the rounds are the confirmation runs', async () => {
    const { sandbox, calls } = withRounds({ base: true, head: false }, () => true);
    const r = await runSides(sandbox, ctx, planned, { base: [], head: [] }, { confirm: 2 }, silentProgress);
    expect(calls).toContain('base asked for rounds: true');
    expect(calls).toContain('head asked for rounds: true');
    expect(calls.filter((c) => c.startsWith('rerun'))).toEqual([]);
    expect([...new Set(calls.filter((c) => c.startsWith('release')))].sort()).toEqual(['release base', 'release head']);
    expect(r.confirm).toMatchObject({ ids: ['t/test_a.py::test_x'], inProcess: ['t/test_a.py::test_x'] });
    // Base's second round passed: the verdict sees a flaky base side.
    expect(r.confirm?.base.map((x) => x.tests.map((t) => t.outcome))).toEqual([['failed'], ['passed']]);
  });

  it('a side without rounds (its reports missing), or a test that failed at head (it reruns alone), reruns in that side\'s container', async () => {
    const lost = withRounds({ base: true, head: false }, (side) => side === 'base');
    const r1 = await runSides(lost.sandbox, ctx, planned, { base: [], head: [] }, { confirm: 2 }, silentProgress);
    expect(lost.calls.filter((c) => c.startsWith('rerun'))).toEqual(["rerun in head's container"]);
    expect(r1.confirm?.inProcess).toBeUndefined();
    // P→F: base's rounds confirm it; at head it failed, so it reruns alone there.
    const failing = withRounds({ base: false, head: true }, () => true);
    const r2 = await runSides(failing.sandbox, ctx, planned, { base: [], head: [] }, { confirm: 2 }, silentProgress);
    expect(failing.calls.filter((c) => c.startsWith('rerun'))).toEqual(["rerun in head's container"]);
    expect(r2.confirm?.base).toHaveLength(2);
  });
});
