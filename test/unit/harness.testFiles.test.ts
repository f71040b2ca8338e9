import { isTestFile, isTestPath } from '../../src/harness/testFiles.js';
import { filesTouchedByPatch } from '../../src/harness/runTests.js';

/**
 * One definition of a test file, shared by the harness (what runs), the agent's tools (what it may
 * write and run) and the pipeline. Columns: path, runs as a test, belongs to the tests.
 */
const TABLE: Array<[string, boolean, boolean]> = [
  // pytest's default names, wherever pytest recurses (a helpers directory too)
  ['tests/test_x.py', true, true],
  ['pkg/x_test.py', true, true],
  ['tests/helpers/test_util.py', true, true],
  ['test_top.py', true, true],
  // not pytest's names: never collected by default
  ['src/foo_tests.py', false, false],
  ['tests/helpers.py', false, true],
  ['tests/conftest.py', false, true],
  ['conftest.py', false, true],
  ['tests/__init__.py', false, true],
  ['testing_utils.py', false, false],
  ['setup.py', false, false],
  ['tests/fixtures/test_data.py', false, true],
  ['venv/lib/test_x.py', false, false],
  // JavaScript / TypeScript by name
  ['src/a.spec.ts', true, true],
  ['lib/b.test.mjs', true, true],
  ['src/c.test.tsx', true, true],
  ['__tests__/a.js', true, true],
  ['src/__tests__/deep/b.ts', true, true],
  // anything in a test directory that is not support code (mocha, tape, node --test projects)
  ['test/index.js', true, true],
  ['test/send.js', true, true],
  ['spec/parser.js', true, true],
  ['test/jest-plugin.test.js', true, true],
  // fixtures, snapshots, mocks, helpers, setup and config: read by tests, never run by themselves
  ['test/fixtures/a.test.js', false, true],
  ['test/fixtures/name.txt', false, true],
  ['src/__snapshots__/a.test.ts.snap', false, true],
  ['tap-snapshots/test/basic.js.test.cjs', false, true],
  ['test/__mocks__/fs.js', false, true],
  ['test/helpers.js', false, true],
  ['test/support/env.js', false, true],
  ['test/common.js', false, true],
  ['test/setup.js', false, true],
  ['test/test-utils.ts', false, true],
  ['test/types.d.ts', false, true],
  ['jest.config.js', false, false],
  ['test/mocha.opts', false, true],
  ['test/.mocharc.js', false, true],
  // code under test and dependencies
  ['src/index.ts', false, false],
  ['lib/testing.js', false, false],
  ['node_modules/x/test/a.js', false, false],
  ['README.md', false, false],
];

describe('one definition of a test file', () => {
  it.each(TABLE)('%s: runs as a test %p, belongs to the tests %p', (path, runs, belongs) => {
    expect(isTestFile(path)).toBe(runs);
    expect(isTestPath(path)).toBe(belongs);
  });

  it('every test file belongs to the tests', () => {
    for (const [path] of TABLE) if (isTestFile(path)) expect(isTestPath(path)).toBe(true);
  });

  it('the files a patch touches are chosen by the same rule', () => {
    const patch = ['tests/helpers/test_util.py', 'test/fixtures/a.test.js', 'src/foo_tests.py']
      .map((p) => `diff --git a/${p} b/${p}\nnew file mode 100644\n--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+x\n`)
      .join('');
    expect(filesTouchedByPatch(patch)).toEqual(['tests/helpers/test_util.py']);
  });
});
