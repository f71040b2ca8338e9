import { sameF2P, sameTest } from '../../src/eval/benchmarkLists.js';

describe('F→P against a benchmark\'s FAIL_TO_PASS', () => {
  it('matches pytest node ids exactly, and sympy\'s bare test names by the node id\'s last part', () => {
    expect(sameTest('tests/test_a.py::TestX::test_one[1]', 'tests/test_a.py::TestX::test_one[1]')).toBe(true);
    expect(sameTest('sympy/core/tests/test_basic.py::test_immutable', 'test_immutable')).toBe(true);
    expect(sameTest('sympy/core/tests/test_basic.py::test_immutable_2', 'test_immutable')).toBe(false);
    expect(sameTest('tests/test_a.py::test_one', 'tests/test_b.py::test_one')).toBe(false);
  });
  it('is equal only when each benchmark test is seen and nothing more', () => {
    const wanted = ['t.py::test_a', 't.py::test_b'];
    expect(sameF2P(['t.py::test_b', 't.py::test_a'], wanted)).toBe(true);
    expect(sameF2P(['t.py::test_a'], wanted)).toBe(false);
    expect(sameF2P(['t.py::test_a', 't.py::test_b', 't.py::test_c'], wanted)).toBe(false);
    expect(sameF2P(['t.py::test_a', 't.py::test_c'], wanted)).toBe(false);
    expect(sameF2P([], [])).toBe(true);
  });
});
