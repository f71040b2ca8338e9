import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { django, djangoLabel, djangoRunner, djangoTestLabel, parseDjangoOutput } from '../../src/ecosystems/python/django.js';
import { buildRerunCommand, buildTestCommand, detectRunner, runnerFromCommand } from '../../src/harness/runners.js';
import { configRules, isTestFile, testConfigFiles } from '../../src/harness/testFiles.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';

const FIX = fileURLToPath(new URL('./fixtures/python/', import.meta.url));
const RUNTESTS_OUT = readFileSync(`${FIX}django-4.2.16-runtests.txt`, 'utf8');
const DJANGO_REPO = ['setup.py', 'package.json', 'django/__init__.py', 'tests/runtests.py', 'tests/test_sqlite.py', 'tests/basic/tests.py', 'tests/migrations/test_optimizer.py'];
const MANAGE = "#!/usr/bin/env python\nimport os, sys\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')\nfrom django.core.management import execute_from_command_line\nexecute_from_command_line(sys.argv)\n";

describe("Django's runner: which repositories, which command", () => {
  it("Django's repository runs tests/runtests.py as SWE-bench does, with labels relative to tests/", () => {
    const spec = detectRunner({ files: DJANGO_REPO }, ['tests/migrations/test_optimizer.py']);
    expect(spec).toEqual({ kind: 'django', template: 'python3 tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {files}' });
    const cmd = buildTestCommand(spec, ['tests/migrations/test_optimizer.py', 'tests/basic/tests.py'], '/swt-out');
    expect(cmd).toContain("python3 tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 migrations.test_optimizer basic.tests 2>&1");
    expect(cmd).toContain("| tee /swt-out/django-output.txt; exit");
  });

  it('a Django project with manage.py runs `manage.py test`; one set up for pytest-django keeps pytest', () => {
    const files = ['manage.py', 'mysite/settings.py', 'polls/tests.py', 'requirements.txt'];
    expect(djangoRunner({ files, manifests: { 'manage.py': MANAGE } })).toEqual({ kind: 'django', template: 'python3 manage.py test --verbosity 2 {files}' });
    expect(djangoLabel('python3 manage.py test {files}', 'polls/tests.py')).toBe('polls.tests');
    expect(djangoRunner({ files: [...files, 'pytest.ini'], manifests: { 'manage.py': MANAGE, 'pytest.ini': '[pytest]\nDJANGO_SETTINGS_MODULE = mysite.settings\n' } })).toBeUndefined();
    // A manage.py that is not Django's, and a tests/runtests.py without Django's settings module, are not Django.
    expect(djangoRunner({ files, manifests: { 'manage.py': 'print("hi")\n' } })).toBeUndefined();
    expect(djangoRunner({ files: ['setup.py', 'tests/runtests.py', 'tests/test_a.py'] })).toBeUndefined();
    expect(runnerFromCommand('python manage.py test {files}').kind).toBe('django');
    expect(runnerFromCommand('./tests/runtests.py --settings=test_sqlite').kind).toBe('django');
  });

  it("Django's test*.py are test files where Django runs them (tests.py, which pytest does not collect)", () => {
    const files = ['manage.py', 'polls/tests.py', 'polls/models.py'];
    expect(testConfigFiles(files)).toContain('manage.py');
    const rules = configRules({ 'manage.py': MANAGE }, () => undefined);
    expect(isTestFile('polls/tests.py', rules)).toBe(true);
    expect(isTestFile('polls/models.py', rules)).toBe(false);
    expect(isTestFile('polls/tests.py')).toBe(false);
  });
});

describe("Django's verbosity-2 output (real: Django 4.2.16's runtests.py on Python 3.11)", () => {
  const files = ['tests/basic/test_swt.py', 'tests/nosuch/test_mod.py'];

  it('every unittest outcome, ids as Django prints them, failures with their traceback, the label that did not import as a file error', () => {
    const r = parseDjangoOutput(RUNTESTS_OUT, { files, output: '' });
    const byId = Object.fromEntries(r.tests.map((t) => [t.id, t]));
    expect(Object.keys(byId).sort()).toEqual([
      'test_doc_fails (basic.test_swt.SwtCases.test_doc_fails)',
      'test_errors (basic.test_swt.SwtCases.test_errors)',
      'test_expected (basic.test_swt.SwtCases.test_expected)',
      'test_fails (basic.test_swt.SwtCases.test_fails)',
      'test_ok (basic.test_swt.SwtCases.test_ok)',
      'test_prints (basic.test_swt.SwtCases.test_prints)',
      'test_skipped (basic.test_swt.SwtCases.test_skipped)',
      'test_sub (basic.test_swt.SwtCases.test_sub)',
    ]);
    expect(r.tests.every((t) => t.file === 'tests/basic/test_swt.py')).toBe(true);
    const outcome = (n: string) => byId[`${n} (basic.test_swt.SwtCases.${n})`]!;
    expect(outcome('test_ok').outcome).toBe('passed');
    expect(outcome('test_prints').outcome).toBe('passed');
    expect(outcome('test_fails')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('AssertionError: 1 != 2') });
    expect(outcome('test_doc_fails')).toMatchObject({ outcome: 'failed', message: expect.stringContaining("'a' not found in 'b'") });
    expect(outcome('test_errors')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringContaining('ValueError: boom') });
    expect(outcome('test_sub')).toMatchObject({ outcome: 'failed', message: expect.stringContaining('2 not less than 2') });
    expect(outcome('test_skipped')).toMatchObject({ outcome: 'skipped', message: 'not today' });
    expect(outcome('test_expected')).toMatchObject({ outcome: 'skipped', message: 'expected failure' });
    expect(r.fileErrors).toEqual([{ file: 'tests/nosuch/test_mod.py', kind: 'collection', message: expect.stringContaining("No module named 'nosuch'") }]);
    expect(r.complete).toBe(true);
  });

  it('through the harness: the report file is the output the command kept', () => {
    const spec = { kind: 'django', template: 'python3 tests/runtests.py --settings=test_sqlite --parallel 1 {files}' };
    const parsed = parseRunReports(spec, { files, reports: { 'django-output.txt': RUNTESTS_OUT }, output: 'tail only', exitCode: 1, timedOut: false });
    expect(parsed.reportFound).toBe(true);
    expect(parsed.tests).toHaveLength(8);
    expect(parsed.fileErrors.map((e) => e.file)).toEqual(['tests/nosuch/test_mod.py']);
  });

  it('ids before Python 3.11 (`name (module.Class)`), a status after printed output, and a run cut short', () => {
    const out = [
      'test_a (app.tests.T) ... ok',
      'test_b (app.tests.T) ... printed by the test',
      'FAIL',
      'test_c (app.tests.T)',
      'Docstring. ... skipped "no db"',
      'test_d (app.tests.T) ... ',
    ].join('\n');
    const r = parseDjangoOutput(out, { files: ['app/tests.py'], output: '' });
    expect(r.tests.map((t) => [t.id, t.outcome, t.file])).toEqual([
      ['test_a (app.tests.T)', 'passed', 'app/tests.py'],
      ['test_b (app.tests.T)', 'failed', 'app/tests.py'],
      ['test_c (app.tests.T)', 'skipped', 'app/tests.py'],
    ]);
    expect(r.complete).toBe(false);
  });

  it('reruns one test by its label: module.Class.method from either id form', () => {
    expect(djangoTestLabel('test_x (migrations.test_optimizer.OptimizerTests.test_x)')).toBe('migrations.test_optimizer.OptimizerTests.test_x');
    expect(djangoTestLabel('test_x (migrations.test_optimizer.OptimizerTests)')).toBe('migrations.test_optimizer.OptimizerTests.test_x');
    expect(djangoTestLabel('setUpClass (basic.tests.T)')).toBe('basic.tests.T');
    const spec = { kind: 'django', template: 'python3 tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {files}' };
    const cmd = buildRerunCommand(spec, [{ file: 'tests/basic/test_swt.py', ids: ['test_ok (basic.test_swt.SwtCases.test_ok)'] }], 1, '/swt-out');
    expect(cmd).toContain('--parallel 1 basic.test_swt.SwtCases.test_ok 2>&1');
    expect(django.commandForTests).toBeDefined();
  });
});
