import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';
import { CATCH2_ABOVE, CATCH2_BASE, FIXED_CPP, GTEST_ABOVE, GTEST_BASE } from '../helpers/cppClampx.js';

// Small real C++ projects with no configuration at all: detection from CMakeLists.txt, the swt-cc
// image (built offline from Debian's packages), a FetchContent of GoogleTest or Catch2 (GitHub is
// not reachable: served by the image's packages), the build kept warm in the environment, CTest
// with each framework's per-test results, in real containers.

afterAll(cleanUpEcosystemRuns);

describe('C++ with CMake, no configuration (real containers)', () => {
  it.each([
    ['GoogleTest', GTEST_BASE, GTEST_ABOVE, [['tests/clampx_test.cpp > Clamp.Above', 'F2P'], ['tests/clampx_test.cpp > Clamp.Inside', 'P2P']]],
    ['Catch2', CATCH2_BASE, CATCH2_ABOVE, [['tests/test_clampx.cpp > clamp keeps a value inside', 'P2P'], ['tests/test_clampx.cpp > clamp limits from above', 'F2P']]],
  ])('%s: swt validate reports exactly the new test as F→P and S', async (_name, files, patch, expected) => {
    const repo: TempRepo = createGitRepo({ ...files, 'README.md': '# clampx\n' });
    const base = repo.sha;
    const head = repo.commit({ 'src/clampx.cpp': FIXED_CPP }, 'clampx limits from above');
    const out = await validateJson(repo.path, base, head, patch);
    expect(transitions(out)).toEqual(expected);
    expect(out.success).toBe(true);
    expect(out.runner).toBe('ctest');
    expect(out.warnings).toEqual([]);
    // Confirmation reran the one test that moved, alone, by its framework name.
    const moved = expected.find(([, t]) => t === 'F2P')![0];
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: [moved] });
    expect(out.confirmation!.runs.head.map((r) => r.tests.map((t) => [t.id, t.outcome]))).toEqual([[[moved, 'passed']], [[moved, 'passed']]]);
  }, 1_800_000);
});
