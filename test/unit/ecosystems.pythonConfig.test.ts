/**
 * Test files named by the project's pytest configuration (issue 39): pylint names its tests
 * `unittest_*.py` through `python_files = *test_*.py` in setup.cfg's `[tool:pytest]`, and swt-bot
 * said "the test patch adds or changes no test file". pytest reads the first of pytest.ini,
 * pyproject.toml (`[tool.pytest.ini_options]`, pytest 9's `[tool.pytest]`), tox.ini (`[pytest]`),
 * setup.cfg (`[tool:pytest]`) that has its section; `python_files` is fnmatch on the file's name
 * (on the end of its path when the pattern has a `/`).
 */
import { configRules, isTestFile, testConfigFiles } from '../../src/harness/testFiles.js';
import { parseIfLoaded } from '../../src/patch/structure.js';
import { pytestTestFileRules } from '../../src/ecosystems/python/pytestConfig.js';
import { testTargetsOfPatch } from '../../src/pipeline/testTargets.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

afterAll(cleanupGitRepos);

const rules = (texts: Record<string, string>) => configRules(texts, parseIfLoaded);

it('reads the root pytest config files', () => {
  expect(testConfigFiles(['setup.cfg', 'tox.ini', 'pytest.ini', 'pyproject.toml', 'pkg/setup.cfg', 'src/a.py'])).toEqual(expect.arrayContaining(['pytest.ini', 'pyproject.toml', 'tox.ini', 'setup.cfg']));
  expect(testConfigFiles(['pkg/setup.cfg', 'src/a.py'])).toEqual([]);
});

it('pylint: setup.cfg [tool:pytest] python_files = *test_*.py names unittest_*.py', () => {
  const config = rules({ 'setup.cfg': '[metadata]\nname = pylint\n\n[tool:pytest]\ntestpaths = tests\npython_files = *test_*.py\naddopts = --strict-markers\n' });
  expect(config.python).toEqual({ globs: ['*test_*.py'], excludes: [], regexes: [], sources: ['setup.cfg python_files', 'setup.cfg testpaths'] });
  expect(isTestFile('tests/checkers/unittest_base.py')).toBe(false);
  expect(isTestFile('tests/checkers/unittest_base.py', config)).toBe(true);
  expect(isTestFile('tests/test_self.py', config)).toBe(true);
  expect(isTestFile('pylint/checkers/base.py', config)).toBe(false);
  // Fixture data stays out, config or not.
  expect(isTestFile('tests/data/unittest_x.py', config)).toBe(false);
});

it('pyproject.toml: [tool.pytest.ini_options] as a list or a string, pytest 9 [tool.pytest]; multi-line INI values', () => {
  const list = rules({ 'pyproject.toml': '[tool.pytest.ini_options]\npython_files = ["check_*.py", "*_checks.py"]\npython_classes = ["Check"]\npython_functions = ["check_*"]\n' });
  expect(list.python).toMatchObject({ globs: ['check_*.py', '*_checks.py'], sources: ['pyproject.toml python_files', 'pyproject.toml python_classes', 'pyproject.toml python_functions'] });
  expect(isTestFile('src/check_io.py', list)).toBe(true);
  expect(isTestFile('io_checks.py', list)).toBe(true);
  const str = rules({ 'pyproject.toml': '[tool.pytest.ini_options]\npython_files = "spec_*.py"\n' });
  expect(isTestFile('t/spec_a.py', str)).toBe(true);
  const native = rules({ 'pyproject.toml': '[tool.pytest]\npython_files = ["it_*.py"]\n' });
  expect(isTestFile('it_a.py', native)).toBe(true);
  const multi = rules({ 'tox.ini': '[tox]\nenvlist = py3\n\n[pytest]\npython_files =\n    test_*.py\n    *_spec.py\n    bench/[ab]*.py\n' });
  expect(multi.python!.globs).toEqual(['test_*.py', '*_spec.py', 'bench/[ab]*.py']);
  expect(isTestFile('x/y_spec.py', multi)).toBe(true);
  // A pattern with a `/` matches the end of the path.
  expect(isTestFile('pkg/bench/a_speed.py', multi)).toBe(true);
  expect(isTestFile('pkg/bench/c_speed.py', multi)).toBe(false);
});

it('precedence: pytest.ini wins (even without python_files); then pyproject, tox.ini, setup.cfg by whichever has a section', () => {
  expect(rules({ 'pytest.ini': '[pytest]\naddopts = -q\n', 'setup.cfg': '[tool:pytest]\npython_files = unit_*.py\n' }).python).toBeUndefined();
  const toxFirst = rules({ 'tox.ini': '[pytest]\npython_files = t_*.py\n', 'setup.cfg': '[tool:pytest]\npython_files = ignored_*.py\n' });
  expect(toxFirst.python!.globs).toEqual(['t_*.py']);
  // A pyproject.toml without a pytest table does not stop the search.
  const cfg = rules({ 'pyproject.toml': '[project]\nname = "x"\n', 'setup.cfg': '[tool:pytest]\npython_files = unit_*.py\n' });
  expect(cfg.python!.globs).toEqual(['unit_*.py']);
  expect(pytestTestFileRules({ 'pyproject.toml': 'not = [toml' })).toBeUndefined();
});

it('the pipeline: a test patch adding tests/unittest_x.py to a pylint-like project is a test patch', async () => {
  const repo = createGitRepo({ 'setup.cfg': '[tool:pytest]\npython_files = *test_*.py\n', 'pkg/__init__.py': '', 'tests/unittest_old.py': 'def test_old():\n    pass\n' });
  const patch = ['diff --git a/tests/unittest_new.py b/tests/unittest_new.py', 'new file mode 100644', '--- /dev/null', '+++ b/tests/unittest_new.py', '@@ -0,0 +1,2 @@', '+def test_new():', '+    assert True', ''].join('\n');
  const targets = await testTargetsOfPatch(repo.path, repo.sha, patch);
  expect(targets).toEqual({ files: ['tests/unittest_new.py'], ownedBy: {}, unowned: [] });
});
