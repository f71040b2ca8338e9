import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';
import { AUTOMAKE_ABOVE, AUTOMAKE_BASE, CATCH2_ABOVE, CATCH2_BASE, FIXED_C, FIXED_CPP, GTEST_ABOVE, GTEST_BASE, MESON_ABOVE, MESON_BASE } from '../helpers/cppClampx.js';

// Small real C and C++ projects with no configuration at all: detection from CMakeLists.txt,
// meson.build or Makefile.am, the swt-cc image (built offline from Debian's packages), a
// FetchContent of GoogleTest or Catch2 (GitHub is not reachable: served by the image's packages),
// the build kept warm in the environment, each runner with the frameworks' per-test results, in
// real containers.

afterAll(cleanUpEcosystemRuns);

type Case = [string, Record<string, string>, string, Record<string, string>, string, [string, string][]];

const CASES: Case[] = [
  ['CMake + GoogleTest', GTEST_BASE, GTEST_ABOVE, { 'src/clampx.cpp': FIXED_CPP }, 'ctest', [['tests/clampx_test.cpp > Clamp.Above', 'F2P'], ['tests/clampx_test.cpp > Clamp.Inside', 'P2P']]],
  // One CTest test running the GoogleTest binary whole: `-R` finds no test of the moved one's name, so its reruns run that test with GTEST_FILTER.
  ['CMake + GoogleTest, the binary one CTest test', { ...GTEST_BASE, 'CMakeLists.txt': GTEST_BASE['CMakeLists.txt'].replace('gtest_discover_tests(clampx_test)', 'add_test(NAME clampx COMMAND clampx_test)') }, GTEST_ABOVE, { 'src/clampx.cpp': FIXED_CPP }, 'ctest', [['tests/clampx_test.cpp > Clamp.Above', 'F2P'], ['tests/clampx_test.cpp > Clamp.Inside', 'P2P']]],
  ['CMake + Catch2', CATCH2_BASE, CATCH2_ABOVE, { 'src/clampx.cpp': FIXED_CPP }, 'ctest', [['tests/test_clampx.cpp > clamp keeps a value inside', 'P2P'], ['tests/test_clampx.cpp > clamp limits from above', 'F2P']]],
  // One CTest test running the Catch2 binary whole: the binary runs again with Catch2's JUnit reporter (its test cases judged one by one), in the run and in each round.
  ['CMake + Catch2, the binary one CTest test', { ...CATCH2_BASE, 'CMakeLists.txt': CATCH2_BASE['CMakeLists.txt'].replace('catch_discover_tests(clampx_tests)', 'add_test(NAME clampx COMMAND clampx_tests)') }, CATCH2_ABOVE, { 'src/clampx.cpp': FIXED_CPP }, 'ctest', [['tests/test_clampx.cpp > clamp keeps a value inside', 'P2P'], ['tests/test_clampx.cpp > clamp limits from above', 'F2P']]],
  ['Meson + GoogleTest', MESON_BASE, MESON_ABOVE, { 'src/clampx.cpp': FIXED_CPP }, 'meson-test', [['tests/clampx_test.cpp > Clamp.Above', 'F2P'], ['tests/clampx_test.cpp > Clamp.Inside', 'P2P']]],
  ['autotools C (make check)', AUTOMAKE_BASE, AUTOMAKE_ABOVE, { 'src/clampc.c': FIXED_C }, 'make-check', [['tests/test_above.c > tests/test_above', 'F2P'], ['tests/test_inside', 'P2P']]],
];

describe('C and C++, no configuration (real containers)', () => {
  it.each(CASES)('%s: swt validate reports exactly the new test as F→P and S', async (_name, files, patch, fix, runner, expected) => {
    const repo = createGitRepo({ ...files, 'README.md': '# clampx\n' });
    const base = repo.sha;
    const head = repo.commit(fix, 'clampx limits from above');
    const out = await validateJson(repo.path, base, head, patch);
    expect(transitions(out)).toEqual(expected);
    expect(out.success).toBe(true);
    expect(out.runner).toBe(runner);
    expect(out.warnings).toEqual([]);
    // Confirmation ran the test that moved again (CTest: alone, by its framework's name).
    const moved = expected.find(([, t]) => t === 'F2P')![0];
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: [moved] });
    expect(out.confirmation!.runs.head.map((r) => r.tests.filter((t) => t.id === moved).map((t) => t.outcome))).toEqual([['passed'], ['passed']]);
    if (runner === 'ctest') expect(out.confirmation!.runs.head.map((r) => r.tests.map((t) => t.id))).toEqual([[moved], [moved]]);
    // CTest and Meson confirm it in rounds after the first run's tests, with no build and no rerun (CTest: -R for a discovered test, GTEST_FILTER in a whole binary; Meson: GTEST_FILTER); make reruns it.
    expect(out.confirmation!.inProcess ?? []).toEqual(runner === 'make-check' ? [] : [moved]);
  }, 1_800_000);
});
