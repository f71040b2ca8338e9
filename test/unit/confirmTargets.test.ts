import { rerunTargets } from '../../src/pipeline/validate.js';
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
