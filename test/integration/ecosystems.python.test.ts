import { join } from 'node:path';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';

// A Python project laid out the usual way (src/<pkg>, pyproject.toml) that must be installed
// before its tests can import it, with no configuration at all: detection, `pip install -e .[test]`
// with a real PyPI dependency through the egress proxy, pytest, in real containers. Then the same
// kind of project with the proxy refusing PyPI (an allowlist without it): the install falls back to
// what the image holds and says so, and the verdict is the same.

const pyproject = (deps: string[]) => `[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "statx"
version = "0.1.0"
requires-python = ">=3.9"
dependencies = [${deps.map((d) => JSON.stringify(d)).join(', ')}]

[project.optional-dependencies]
test = ["pytest"]
`;

const WITH_DEP = (fixed: boolean) => `from more_itertools import ilen


def mean(xs):
    n = ilen(iter(xs))
${fixed ? '    if n == 0:\n        return 0.0\n' : ''}    return sum(xs) / n
`;
const PLAIN = (fixed: boolean) => `def mean(xs):
    xs = list(xs)
${fixed ? '    if not xs:\n        return 0.0\n' : ''}    return sum(xs) / len(xs)
`;
const OLD_TEST = 'from statx import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n';
const TEST_PATCH = [
  'diff --git a/tests/test_statx.py b/tests/test_statx.py',
  '--- a/tests/test_statx.py',
  '+++ b/tests/test_statx.py',
  '@@ -3,3 +3,7 @@ from statx import mean',
  ' ',
  ' def test_mean():',
  '     assert mean([1, 2, 3]) == 2',
  '+',
  '+',
  '+def test_mean_of_nothing():',
  '+    assert mean([]) == 0.0',
  '',
].join('\n');

function project(code: (fixed: boolean) => string, deps: string[]) {
  const repo = createGitRepo({ 'pyproject.toml': pyproject(deps), 'src/statx/__init__.py': code(false), 'tests/test_statx.py': OLD_TEST, 'README.md': '# statx\n' });
  const base = repo.sha;
  const head = repo.commit({ 'src/statx/__init__.py': code(true) }, 'mean of nothing is 0');
  return { repo, base, head };
}

afterAll(cleanUpEcosystemRuns);

describe('Python src-layout projects, no configuration (real containers)', () => {
  it('swt validate installs the project with its test extra and a PyPI dependency, and reports exactly the new test as F→P and S', async () => {
    const { repo, base, head } = project(WITH_DEP, ['more-itertools>=8']);
    const out = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(transitions(out)).toEqual([
      ['tests/test_statx.py::test_mean', 'P2P'],
      ['tests/test_statx.py::test_mean_of_nothing', 'F2P'],
    ]);
    expect(out.success).toBe(true);
    expect(out.warnings).toEqual([]);
    // The new test's confirmation rounds ran inside each side's first pytest process (forked after
    // collection): 3 runs on each side, and no rerun process was needed.
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['tests/test_statx.py::test_mean_of_nothing'], inProcess: ['tests/test_statx.py::test_mean_of_nothing'] });
    expect(out.tests.find((t: { id: string }) => t.id.endsWith('test_mean_of_nothing'))).toMatchObject({ flaky: false, runs: { base: { runs: 3, failed: 3 }, head: { runs: 3, failed: 0 } } });
  }, 900_000);

  it('air-gapped (the proxy refuses PyPI): installs from what the image holds, says so, and judges the same', async () => {
    const { repo, base, head } = project(PLAIN, []);
    const sandbox = createDockerSandbox({ egress: { hosts: ['deb.debian.org'] } });
    const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: TEST_PATCH });
    expect(transitions(v)).toEqual([
      ['tests/test_statx.py::test_mean', 'P2P'],
      ['tests/test_statx.py::test_mean_of_nothing', 'F2P'],
    ]);
    expect(v.success).toBe(true);
    expect(v.warnings).toEqual([expect.stringMatching(/^swt: the install through the package index failed \(no index answered\?\): installing the project from what the image holds/)]);
  }, 900_000);
});

describe('a pytest before 3.0, as an old commit pins it (real container, PyPI)', () => {
  it('takes the options every run passes instead of refusing the run, and reports each test', async () => {
    // pytest 2.8.1 and its py, pinned as a 2015 project pinned them, on the Python 3.9 an offline
    // build has for old code (where 2.8 alone cannot start: its check that assert works fails).
    const repo = createGitRepo({ 'requirements.txt': 'pytest==2.8.1\npy==1.4.30\n', 'statx.py': PLAIN(false), 'tests/test_statx.py': OLD_TEST, 'README.md': '# statx\n' });
    const base = repo.sha;
    const head = repo.commit({ 'statx.py': PLAIN(true) }, 'mean of nothing is 0');
    // `python3 -m` puts the checkout on sys.path: the test imports statx.py from there.
    const out = await validateJson(repo.path, base, head, TEST_PATCH, '--image', 'python:3.9', '--test-cmd', 'python3 -m pytest -p no:cacheprovider {files}');
    expect(transitions(out)).toEqual([
      ['tests/test_statx.py::test_mean', 'P2P'],
      ['tests/test_statx.py::test_mean_of_nothing', 'F2P'],
    ]);
    expect(out.success).toBe(true);
    // The failure on base is the test's own, as that pytest reported it.
    expect(JSON.stringify(out.tests[1])).toMatch(/ZeroDivisionError/);
  }, 900_000);
});
