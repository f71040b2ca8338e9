import { validate } from '../../src/pipeline/validate.js';
import { renderText } from '../../src/harness/render.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';

// Issue 39: a commit from 2023 whose one dependency, werkzeug, is unpinned. werkzeug 3.0.0
// (2023-09-30) removed `werkzeug.urls.url_quote`, which the project imports: installed with
// today's releases every test fails on import on both sides (F→F, nothing judged), as a 2023 Flask
// did. Installed as of the base commit's date (uv --exclude-newer, by default for a commit older
// than 30 days) it gets werkzeug 2.3.x and the new test is F→P. Real PyPI through the egress proxy.
// Also: a run that exits 0 with no test says why (the end of the runner's output), and npm's
// --before with its fallback to today's releases.

const PYPROJECT = `[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "webq"
version = "0.1.0"
requires-python = ">=3.8"
dependencies = ["werkzeug"]
`;
const CODE = (fixed: boolean) => `from werkzeug.urls import url_quote


def quote_segment(s):
    """One path segment, quoted: a slash inside it is data."""
    return url_quote(s${fixed ? ", safe=''" : ''})
`;
const OLD_TEST = `from importlib.metadata import version

from webq import quote_segment


def test_quote_segment():
    assert quote_segment('a b') == 'a%20b'


def test_werkzeug_of_its_time():
    assert version('werkzeug').startswith('2.3.')
`;
const TEST_PATCH = [
  'diff --git a/tests/test_webq.py b/tests/test_webq.py',
  '--- a/tests/test_webq.py',
  '+++ b/tests/test_webq.py',
  '@@ -9,3 +9,7 @@ def test_quote_segment():',
  ' ',
  ' def test_werkzeug_of_its_time():',
  "     assert version('werkzeug').startswith('2.3.')",
  '+',
  '+',
  '+def test_slash_is_quoted():',
  "+    assert quote_segment('a/b c') == 'a%2Fb%20c'",
  '',
].join('\n');

function project() {
  const date = '2023-06-01T12:00:00+00:00';
  const repo = createGitRepo({ 'pyproject.toml': PYPROJECT, 'src/webq/__init__.py': CODE(false), 'tests/test_webq.py': OLD_TEST }, { date });
  const base = repo.sha;
  const head = repo.commit({ 'src/webq/__init__.py': CODE(true) }, 'quote slashes inside a segment');
  return { repo, base, head };
}

afterAll(cleanUpEcosystemRuns);

describe('time-consistent installs (real containers, real PyPI)', () => {
  it('swt validate on a 2023 commit installs werkzeug 2.3.x as of its date (uv --exclude-newer), says so, and judges the new test F→P', async () => {
    const { repo, base, head } = project();
    const out = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(transitions(out)).toEqual([
      ['tests/test_webq.py::test_quote_segment', 'P2P'],
      ['tests/test_webq.py::test_slash_is_quoted', 'F2P'],
      ['tests/test_webq.py::test_werkzeug_of_its_time', 'P2P'],
    ]);
    expect(out.success).toBe(true);
    expect(out.environment).toMatchObject({ dependenciesAsOf: '2023-06-02T00:00:00Z' });
    expect(out.warnings).toEqual(["swt: dependencies resolved as of 2023-06-02 (the base commit date; uv --exclude-newer 2023-06-02T00:00:00Z)"]);
  }, 900_000);

  // A file without a test under plain pytest is a collection failure with pytest's output (exit 5);
  // a command that exits 0 all the same (as uvu does with nothing registered) used to say only "No test results".
  it('a run that exits 0 and reports no test: no result, and the verdict says why with the end of the runner\'s output', async () => {
    const { repo, base, head } = project();
    const empty = ['diff --git a/tests/test_helpers.py b/tests/test_helpers.py', 'new file mode 100644', '--- /dev/null', '+++ b/tests/test_helpers.py', '@@ -0,0 +1,2 @@', '+def helper():', '+    return 1', ''].join('\n');
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: empty, testCmd: 'python3 -m pytest -p no:cacheprovider {files} || true' });
    expect(v.tests).toEqual([]);
    expect(v.noTests).toMatch(/^base and head: the runner exited with code 0 and reported no test; the end of its output:\n[^]*no tests ran/);
    expect(renderText(v)).toContain(`No test results: ${v.noTests}`);
  }, 900_000);

  it('the same commit with today\'s releases (swt validate --dependencies-as-of today): werkzeug 3 has no url_quote, every test fails on import on both sides', async () => {
    const { repo, base, head } = project();
    const v = await validateJson(repo.path, base, head, TEST_PATCH, '--dependencies-as-of', 'today');
    expect(v.environment.dependenciesAsOf).toBeUndefined();
    expect(v.success).toBe(false);
    expect(v.tests.length).toBeGreaterThan(0);
    expect(v.tests.every((t: { transition: string }) => t.transition === 'F2F')).toBe(true);
    expect(JSON.stringify(v.runs.base)).toMatch(/cannot import name 'url_quote' from 'werkzeug\.urls'/);
  }, 900_000);

  // A 2016 commit on Python 3.9 (what an offline build serves it with): as of 2016, uv found no
  // setuptools for a setup.py with no [build-system] (it asks >=40.8.0, an editable install 64),
  // and coverage 4.1 of 2016 does not import on 3.9 (it reads the opcode BREAK_LOOP, gone in 3.8).
  // Dependencies now resolve as of when Python 3.9 had been out for 60 days, the build tools as of
  // September 2022; the note says so.
  it('a 2016 setup.py project on Python 3.9 resolves as of that Python\'s date (coverage 5, which imports there), and the new test is F→P', async () => {
    const setup = "from setuptools import setup\n\nsetup(name='halves', version='0.1', py_modules=['halves'], install_requires=['coverage'])\n";
    const code = (fixed: boolean) => `def half(n):\n    return n ${fixed ? '/' : '//'} 2\n`;
    const oldTest = "import coverage\n\nfrom halves import half\n\n\ndef test_coverage_runs_here():\n    import coverage.parser\n    assert coverage.version_info[0] == 5\n";
    const repo = createGitRepo({ 'setup.py': setup, 'halves.py': code(false), 'tests/test_halves.py': oldTest }, { date: '2016-06-01T12:00:00+00:00' });
    const base = repo.sha;
    const head = repo.commit({ 'halves.py': code(true) }, 'half of an odd number');
    const testPatch = ['diff --git a/tests/test_halves.py b/tests/test_halves.py', '--- a/tests/test_halves.py', '+++ b/tests/test_halves.py', '@@ -7,2 +7,6 @@ def test_coverage_runs_here():', '     import coverage.parser', '     assert coverage.version_info[0] == 5', '+', '+', '+def test_half_of_odd():', '+    assert half(3) == 1.5', ''].join('\n');
    const out = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch, image: 'python:3.9' });
    expect(transitions(out)).toEqual([
      ['tests/test_halves.py::test_coverage_runs_here', 'P2P'],
      ['tests/test_halves.py::test_half_of_odd', 'F2P'],
    ]);
    expect(out.tests[1]!.baseFailure).toMatchObject({ kind: 'assertion', message: expect.stringContaining('assert 1 == 1.5') });
    expect(out.warnings).toEqual([expect.stringMatching(/^swt: dependencies resolved as of 2020-12-04 \(uv --exclude-newer 2020-12-04T00:00:00Z\), not the base commit date 2016-06-02: Python 3\.9\.\d+ came out after it/)]);
  }, 900_000);

  // Two things a commit of mid-2022 meets, as pylint's and pytest's SWE-bench commits do: its
  // build-system pins setuptools 62.6 (no PEP 660 hook, so no editable build), and its dependency
  // atomicwrites had every release before the date taken off PyPI (all but 1.4.1, of 2022-07-08).
  // The install builds it again without its own isolation on setuptools ≥ 64, takes atomicwrites
  // as of today, and says both.
  it('a 2022 project pinning setuptools 62 and needing atomicwrites: rebuilt on setuptools ≥ 64, atomicwrites of today, both said, the new test F→P', async () => {
    const pyproject = '[build-system]\nrequires = ["setuptools~=62.6", "wheel"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "thirds"\nversion = "0.1.0"\ndependencies = ["atomicwrites"]\n';
    const code = (fixed: boolean) => `def third(n):\n    return n ${fixed ? '/' : '//'} 3\n`;
    const oldTest = "from atomicwrites import atomic_write\n\nfrom thirds import third\n\n\ndef test_atomicwrites_here():\n    assert callable(atomic_write)\n";
    const repo = createGitRepo({ 'pyproject.toml': pyproject, 'thirds.py': code(false), 'tests/test_thirds.py': oldTest }, { date: '2022-07-01T12:00:00+00:00' });
    const base = repo.sha;
    const head = repo.commit({ 'thirds.py': code(true) }, 'a third of one');
    const testPatch = ['diff --git a/tests/test_thirds.py b/tests/test_thirds.py', '--- a/tests/test_thirds.py', '+++ b/tests/test_thirds.py', '@@ -5,2 +5,6 @@ from thirds import third', ' def test_atomicwrites_here():', '     assert callable(atomic_write)', '+', '+', '+def test_third_of_one():', '+    assert third(1) == 1 / 3', ''].join('\n');
    const out = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch, image: 'python:3.9' });
    expect(transitions(out)).toEqual([
      ['tests/test_thirds.py::test_atomicwrites_here', 'P2P'],
      ['tests/test_thirds.py::test_third_of_one', 'F2P'],
    ]);
    expect(out.warnings).toEqual([
      'swt: atomicwrites has no release before 2022-07-02 left on PyPI (taken off since): it is today\'s',
      'swt: the build backend the project pins cannot build an editable install: it is built with setuptools 64 or later',
      'swt: dependencies resolved as of 2022-07-02 (the base commit date; uv --exclude-newer 2022-07-02T00:00:00Z)',
    ]);
  }, 900_000);

  // npm without a lockfile installs with --before. The npm registry reachable here serves rewritten
  // publish times (every version "published" in 2024 or later), so a real date cannot show the
  // pinning here; a date before any version of the dependency exists shows the flow everywhere:
  // --before finds no version, the install says so and takes today's releases, and the tests run.
  it('npm: a project dated before its dependency existed: --before finds nothing, today\'s install follows and says so, the new test is F→P', async () => {
    const pkg = JSON.stringify({ name: 'parity', version: '1.0.0', private: true, dependencies: { 'is-number': '*' } });
    const buggy = "const isNumber = require('is-number');\nexports.isEven = (n) => isNumber(n) && typeof n === 'number' && n % 2 === 0;\n";
    const fixed = "const isNumber = require('is-number');\nexports.isEven = (n) => isNumber(n) && Number(n) % 2 === 0;\n";
    const oldTest = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { isEven } = require('../index.js');\n\ntest('two is even', () => assert.strictEqual(isEven(2), true));\n";
    const repo = createGitRepo({ 'package.json': pkg, 'index.js': buggy, 'test/even.test.js': oldTest }, { date: '2005-03-01T12:00:00+00:00' });
    const base = repo.sha;
    const head = repo.commit({ 'index.js': fixed }, 'numeric strings');
    const testPatch = ['diff --git a/test/strings.test.js b/test/strings.test.js', 'new file mode 100644', '--- /dev/null', '+++ b/test/strings.test.js', '@@ -0,0 +1,4 @@', "+const test = require('node:test');", "+const assert = require('node:assert');", "+const { isEven } = require('../index.js');", "+test('a numeric string is even', () => assert.strictEqual(isEven('4'), true));", ''].join('\n');
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch });
    expect(v.environment.dependenciesAsOf).toBe('2005-03-02T00:00:00Z');
    expect(v.tests.filter((t) => t.transition === 'F2P').map((t) => t.id)).toEqual(['test/strings.test.js > a numeric string is even']);
    expect(v.warnings).toEqual(['swt: the install as of 2005-03-02 (npm --before) failed: installing current releases instead']);
  }, 900_000);
});
