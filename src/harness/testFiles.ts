/**
 * What a test file is: the one definition the harness (which files to run), the generation layer
 * (where a model may write, what its run_tests tool runs) and the pipeline share. Pure.
 *
 * - A test file is one a runner would be given directly: pytest's default names (`test_*.py`,
 *   `*_test.py`); `*.test.*` / `*.spec.*` scripts; any script under a `test/`, `tests/`, `spec/` or
 *   `__tests__/` directory that is not support code.
 * - Support code never runs by itself: fixtures, snapshots, mocks, helpers, setup and config files,
 *   type declarations, `conftest.py`, `__init__.py`.
 * - A test path is anything that belongs to the tests (test files and their support), e.g. where a
 *   model may write.
 */
import { posix } from 'node:path';

const SCRIPT = /\.(py|[cm]?[jt]sx?)$/;
const PY_TEST_NAME = /^(test_[^/]*|[^/]*_test)\.py$/;
const JS_TEST_NAME = /\.(test|spec)\.[cm]?[jt]sx?$/;
const TEST_DIR = /^(tests?|specs?|__tests__|testing)$/i;

/** Directories whose files tests read or import, but which no runner is given directly. */
const SUPPORT_DIRS = new Set([
  'fixture', 'fixtures', '__fixtures__', '__snapshots__', 'snapshots', 'tap-snapshots', '__mocks__', 'mocks', 'stubs',
  'helper', 'helpers', 'support', 'util', 'utils', 'data', 'testdata', 'test-data', 'resources', 'assets',
]);

/** Directories no runner descends into (pytest's norecursedirs, build output, dependencies). */
const NEVER_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.venv', 'venv', '.tox', '__pycache__']);

/** Files that configure or support the runner. */
const SUPPORT_FILE =
  /^(__init__\.py|conftest\.py|setup\.[cm]?[jt]s|\.mocharc\.[^/]*|[^/]*\.d\.[cm]?ts|[^/]*\.config\.[cm]?[jt]s|(helpers?|utils?|common|support|fixtures?|global[-_]?(setup|teardown)|bootstrap|setup[-_]tests?|test[-_]?(helpers?|utils?|setup|common))\.[cm]?[jt]sx?)$/i;

function segments(path: string): string[] {
  const p = posix.normalize(path.replace(/\\/g, '/')).replace(/^(\.\/)+/, '');
  return p.split('/').filter((s) => s && s !== '.');
}

/** Whether a runner would be given this file directly. */
export function isTestFile(path: string): boolean {
  const segs = segments(path);
  const base = segs.pop();
  if (!base || !SCRIPT.test(base)) return false;
  if (segs.some((d) => NEVER_DIRS.has(d))) return false;
  if (base.endsWith('.py')) {
    // pytest collects by name wherever it recurses, helpers directories included; fixture data is not collected.
    return PY_TEST_NAME.test(base) && !segs.some((d) => d === 'fixtures' || d === 'fixture' || d === 'data' || d === 'testdata');
  }
  if (SUPPORT_FILE.test(base) || segs.some((d) => SUPPORT_DIRS.has(d))) return false;
  return JS_TEST_NAME.test(base) || segs.some((d) => TEST_DIR.test(d));
}

/** Whether a path belongs to the tests: a test file, or support code and data under a test directory. */
export function isTestPath(path: string): boolean {
  const segs = segments(path);
  const base = segs[segs.length - 1] ?? '';
  if (segs.slice(0, -1).some((d) => d === 'node_modules' || d === '.git')) return false;
  if (isTestFile(path) || base === 'conftest.py') return true;
  return segs.slice(0, -1).some((d) => TEST_DIR.test(d) || d === '__snapshots__' || d === 'tap-snapshots');
}
