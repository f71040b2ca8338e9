import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';
import { AUTOMAKE_ABOVE, AUTOMAKE_BASE, FIXED_C, FIXED_CPP, GTEST_ABOVE, GTEST_BASE } from '../helpers/cppClampx.js';

// ΔC for C and C++ from gcc's own counters, in real containers: the coverage runs rebuild the
// project with --coverage (CMake's cache flags; compilers on PATH for autotools), the tests write
// .gcda files, gcov reads them. The fix adds one line (`if (x > hi) return hi;`); the golden tests
// are the predicted ones, so both raise it.

afterAll(cleanUpEcosystemRuns);

type Case = [string, Record<string, string>, string, string, string, number];

const CASES: Case[] = [
  ['CMake + GoogleTest (C++)', GTEST_BASE, GTEST_ABOVE, 'src/clampx.cpp', FIXED_CPP, 5],
  ['autotools make check (C)', AUTOMAKE_BASE, AUTOMAKE_ABOVE, 'src/clampc.c', FIXED_C, 3],
];

describe('ΔC with gcov (real containers)', () => {
  it.each(CASES)('%s: the fix\'s new line is executable and covered more by the new test', async (_name, files, patch, source, fixed, line) => {
    const repo = createGitRepo({ ...files, 'README.md': '# clampx\n' });
    const base = repo.sha;
    const head = repo.commit({ [source]: fixed }, 'clampx limits from above');
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: patch, coverage: { referenceTestPatch: patch } });
    expect(v.success).toBe(true);
    expect(v.coverageError).toBeUndefined();
    const c = v.coverage!;
    expect(c).toMatchObject({ counter: 'gcov', executableBy: 'reference', lines: 1, covered: 1, dC: 1, referenceDC: 1 });
    expect(c.executable.added).toEqual({ [source]: [line] });
    expect(c.coveredLines.added).toEqual({ [source]: [line] });
    expect(c.warnings).toEqual([]);
  }, 1_800_000);
});
