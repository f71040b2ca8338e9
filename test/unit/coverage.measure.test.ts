/**
 * changeCoverage with a sandbox that only answers line counts: each distinct run (tree and test
 * files) is counted once, however many sides ask for it, and ΔC follows from the counts.
 */
import { changeCoverage, codePatchBetween, runsWithPatch, type SideRuns } from '../../src/coverage/measure.js';
import type { LineCounts } from '../../src/coverage/types.js';
import type { RunnerSpec } from '../../src/results/types.js';
import type { Environment, RunOutcome, RunRequest, Sandbox } from '../../src/sandbox/types.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

const CALC = (ret: number) => `def f(x):\n    if x > 0:\n        return ${ret}\n    return 0\n`;
const NEW_TEST = ['diff --git a/tests/test_new.py b/tests/test_new.py', 'new file mode 100644', '--- /dev/null', '+++ b/tests/test_new.py', '@@ -0,0 +1,2 @@', '+def test_positive():', '+    assert f(1) == 2', ''].join('\n');

describe('change coverage from counted runs', () => {
  let repo: TempRepo;
  let base: string;
  let fixed: string;
  beforeAll(() => {
    repo = createGitRepo({ 'pkg/calc.py': CALC(1), 'tests/test_calc.py': 'def test_zero():\n    assert f(0) == 0\n' });
    base = repo.sha;
    fixed = repo.commit({ 'pkg/calc.py': CALC(2) }, 'fix');
  });
  afterAll(() => repo.cleanup());

  it('runs each distinct state and file list once and counts the fix lines the new tests reach', async () => {
    const requests: RunRequest[] = [];
    // The original tests never take the `x > 0` branch; with the new test applied, they do.
    const counts = (req: RunRequest): LineCounts => ({ 'pkg/calc.py': req.state.patches.length ? { 1: 1, 2: 2, 3: 1, 4: 1 } : { 1: 1, 2: 1, 4: 1 } });
    const sandbox = {
      run: async (req: RunRequest) => {
        requests.push(req);
        return { exitCode: 0, timedOut: false, output: '', files: { 'swt-coverage/pycov-1.json': JSON.stringify(counts(req)) } } as unknown as RunOutcome;
      },
    } as unknown as Sandbox;
    const baseState = { rev: base, patches: [] };
    const fixedState = { rev: fixed, patches: [] };
    const original: SideRuns = { base: { state: baseState, files: ['tests/test_calc.py'] }, head: { state: fixedState, files: ['tests/test_calc.py'] } };
    const withTests = runsWithPatch(NEW_TEST, ['tests/test_calc.py', 'tests/test_new.py'], baseState, fixedState);
    const c = await changeCoverage(sandbox, {
      repo: repo.path,
      env: { key: 'env-key', image: 'python:3.12' } as Environment,
      runner: { kind: 'pytest', template: 'pytest {files}' } as RunnerSpec,
      fixPatch: await codePatchBetween(repo.path, base, fixed),
      base: baseState,
      fixed: fixedState,
      original,
      withTests,
      // The golden tests here are the new ones: the same runs, asked for a third time.
      reference: withTests,
      cache: false,
    });
    expect(requests).toHaveLength(4);
    expect({ ...c, durationMs: 0 }).toEqual({
      counter: 'python-trace',
      dC: 1,
      referenceDC: 1,
      lines: 2,
      covered: 2,
      executableBy: 'reference',
      executable: { removed: { 'pkg/calc.py': [3] }, added: { 'pkg/calc.py': [3] } },
      coveredLines: { removed: { 'pkg/calc.py': [3] }, added: { 'pkg/calc.py': [3] } },
      runs: 4,
      reused: 0,
      durationMs: 0,
      warnings: [],
    });
  });
});
