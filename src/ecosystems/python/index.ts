/** Python: pyproject.toml / setup.py / requirements, pytest. Pure. */
import { parseJUnit } from '../../results/formats/junit.js';
import { fillTemplate, quoteTestFile, reportPath } from '../command.js';
import { REGISTRIES } from '../registries.js';
import { pytestRounds } from './rounds.js';
import { oldPytestPrepare } from './oldPytest.js';
import { namedByPytestConfig, pytestConfigFiles, pytestTestFileRules } from './pytestConfig.js';
import { django, djangoReads, djangoRunner, djangoTestFileRules } from './django.js';
import { olderPythonsFor, PYTHON_MANIFESTS, pythonInstall, pythonProject, pythonVersionFor } from './install.js';
import type { Ecosystem, RepoFacts, RunnerDef, TestFileRules } from '../types.js';
import { pythonDependencyManifest, pythonMachinery } from './machinery.js';

const PY_TEST_NAME = /^(test_[^/]*|[^/]*_test)\.py$/;
const MARKERS = /^(setup\.py|setup\.cfg|pyproject\.toml|pytest\.ini|tox\.ini|requirements[^/]*\.txt)$/;
const DATA_DIRS = new Set(['fixtures', 'fixture', 'data', 'testdata']);

export const pytest: RunnerDef = {
  kind: 'pytest',
  recognise: /(^|[\s/;&|(])(py\.test|pytest)(\s|$|;|&|\|)|-m\s+pytest\b/,
  reportFile: 'junit.xml',
  notFound: [/No module named '?pytest'?/, /^.*\b(python3?|pytest): (can't open file|No such file or directory)/m],
  command(spec, files, out, report) {
    return fillTemplate(spec.template, [
      '-rA', '--continue-on-collection-errors', `--junitxml=${reportPath(out, report)}`, '-o', 'junit_family=xunit1',
      ...files.map(quoteTestFile),
    ]);
  },
  // The harness's ids are pytest node ids (`file::Class::name[param]`).
  commandForTests: (spec, _file, ids, out, report) => pytest.command(spec, [...ids], out, report),
  // A pytest before 3.0 (an old commit's pin) takes the options above instead of refusing the run.
  prepare: () => oldPytestPrepare(),
  parse: (content, ctx) => ({ ...parseJUnit(content, { ...ctx, flavor: 'pytest' }), complete: true, errors: [] }),
  // Forks after collection (a fresh process's state): the rounds cost the tests, not pytest's start.
  roundsInProcess: pytestRounds,
};

/** pytest's `python_files` and Django's `test*.py`, where the project has them. */
function testFileRules(texts: Readonly<Record<string, string>>): TestFileRules | undefined {
  const all = [pytestTestFileRules(texts), djangoTestFileRules(texts)].filter((r): r is TestFileRules => !!r);
  if (all.length < 2) return all[0];
  return { globs: all.flatMap((r) => r.globs), excludes: [], regexes: [], sources: all.flatMap((r) => r.sources) };
}

export const python: Ecosystem = {
  id: 'python',
  language: 'Python',
  manifests: PYTHON_MANIFESTS,
  dependencyManifest: pythonDependencyManifest,
  testMachinery: pythonMachinery,
  runnerNames: ['pytest', 'Django (manage.py test, runtests.py)'],
  // Django's runner reads manage.py (a Django project) and the pytest configs (pytest-django keeps pytest).
  readsFiles: djangoReads,
  ownsPath: (p) => p.base.endsWith('.py'),
  detect(facts: RepoFacts) {
    if (facts.files.some((f) => MARKERS.test(f))) return 10;
    // Python files without a marker: a weak clue, below any manifest of another ecosystem.
    return facts.files.some((f) => f.endsWith('.py')) ? 4 : 0;
  },
  // pytest collects by name wherever it recurses, helpers directories included; fixture data is not
  // collected. The project's `python_files` names more (pylint: `unittest_*.py`).
  isTestFile: (p, rules) => (PY_TEST_NAME.test(p.base) || (!!rules && namedByPytestConfig(p, rules))) && !p.dirs.some((d) => DATA_DIRS.has(d)),
  testFileRules: { reads: (files) => [...pytestConfigFiles(files), ...['manage.py', 'tests/runtests.py'].filter((f) => files.includes(f))], rules: testFileRules },
  isTestSupport: (p) => p.base === 'conftest.py',
  languageOf: () => 'python',
  environment(facts) {
    // pytest ships in the image; the project and its test dependencies are installed (see install.ts).
    const project = pythonProject(facts);
    const older = olderPythonsFor(project.requiresPython, facts.asOf).map((v) => `python:${v}`);
    return {
      image: `python:${pythonVersionFor(project.requiresPython, facts.asOf)}`,
      install: pythonInstall(project, { ...(facts.asOf ? { asOf: facts.asOf } : {}), ...(facts.tagVersion ? { tagVersion: facts.tagVersion } : {}) }),
      ...(older.length ? { fallbackImages: older } : {}),
    };
  },
  // Django's repository and Django projects run their tests through Django's runner (settings, test database).
  defaultRunner: (facts) => djangoRunner(facts) ?? { kind: 'pytest', template: 'python3 -m pytest -p no:cacheprovider {files}' },
  runners: [django, pytest],
  // pip runs as the sandbox user: what it installs goes to ~/.local (the images' site-packages belong to root), the rest under /testbed.
  savesInstall: true,
  // checked-hash: a run's overlaid file of the same size and mtime is still recompiled.
  warm: 'python3 -m compileall -q -j 0 --invalidation-mode checked-hash .',
  // a module or fixture the test uses does not exist
  ownErrorText: /fixture '[^']+' not found|No module named/,
  registries: REGISTRIES.python,
  coverage: { counter: 'python-trace' },
};
