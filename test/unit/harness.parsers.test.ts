import { parseCapture, loadCapture, readReport } from './fixtures/reports/load.js';
import { parseJUnit } from '../../src/results/formats/junit.js';
import { parseJestJson } from '../../src/results/formats/jest.js';
import { parseTap } from '../../src/results/formats/tap.js';
import { mochaMarkerLines, parseMochaJsonl } from '../../src/results/formats/mocha.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { excerptForFile, failureKindOf, firstLines, mergeDuplicates, resolveFile } from '../../src/results/formats/common.js';
import type { TestResult } from '../../src/results/types.js';

function byId(tests: TestResult[]): Map<string, TestResult> {
  return new Map(tests.map((t) => [t.id, t]));
}

function ids(name: string): string[] {
  return parseCapture(name).tests.map((t) => t.id).sort();
}

describe('ids are stable between a failing (base) and a passing (head) run', () => {
  it.each([
    ['pytest-base', 'pytest-head'],
    ['jest-base', 'jest-head'],
    ['vitest-base', 'vitest-head'],
    ['mocha-base', 'mocha-head'],
    ['node-base', 'node-head'],
    ['tap-base', 'tap-head'],
    ['tape-base', 'tape-head'],
  ])('%s / %s', (base, head) => {
    const b = ids(base);
    expect(b.length).toBeGreaterThan(3);
    expect(ids(head)).toEqual(b);
    // and the fixed test really flipped
    const bt = parseCapture(base).tests;
    const ht = byId(parseCapture(head).tests);
    const flipped = bt.filter((t) => t.outcome === 'failed' && ht.get(t.id)?.outcome === 'passed');
    expect(flipped.length).toBeGreaterThan(0);
  });
});

describe('pytest junit (xunit1)', () => {
  const r = parseCapture('pytest-base');
  const t = byId(r.tests);

  it('builds node ids with classes and parameters', () => {
    expect(t.get('tests/sub/test_math.py::test_add')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', file: 'tests/sub/test_math.py' });
    expect(t.get('tests/sub/test_math.py::test_add')!.message).toBe('assert -1 == 5\n +  where -1 = add(2, 3)');
    expect(t.get('tests/sub/test_math.py::TestGroup::test_in_class')?.outcome).toBe('failed');
    expect(t.get('tests/sub/test_math.py::TestGroup::TestInner::test_nested')?.failureKind).toBe('assertion');
    expect(t.get('tests/sub/test_math.py::test_param[1-2-3]')?.failureKind).toBe('assertion');
    expect(t.get('tests/sub/test_math.py::test_zero')?.outcome).toBe('passed');
    expect(t.get('tests/test_only_pass.py::test_ok')?.outcome).toBe('passed');
  });

  it('tells errors from assertions, including setup errors', () => {
    expect(t.get('tests/sub/test_math.py::test_error')).toMatchObject({ failureKind: 'error', message: "KeyError: 'boom'" });
    expect(t.get('tests/sub/test_math.py::test_param[x-y-xy]')).toMatchObject({ failureKind: 'error' });
    expect(t.get('tests/sub/test_math.py::test_param[x-y-xy]')!.message).toMatch(/^TypeError: unsupported operand/);
    expect(t.get('tests/sub/test_math.py::test_fixture_error')).toMatchObject({ failureKind: 'error', message: 'RuntimeError: fixture broke' });
  });

  it('reports skip and xfail as skipped', () => {
    expect(t.get('tests/sub/test_math.py::test_skipped')).toMatchObject({ outcome: 'skipped', message: 'not today' });
    expect(t.get('tests/sub/test_math.py::test_xfail')).toMatchObject({ outcome: 'skipped' });
  });

  it('reports syntax and import errors as collection errors of their files', () => {
    const errs = new Map(r.fileErrors.map((e) => [e.file, e]));
    expect(errs.get('tests/test_broken.py')?.kind).toBe('collection');
    expect(errs.get('tests/test_broken.py')?.message).toMatch(/SyntaxError: invalid syntax/);
    expect(errs.get('tests/test_badimport.py')).toEqual({
      file: 'tests/test_badimport.py',
      kind: 'collection',
      message: "ModuleNotFoundError: No module named 'pkg.nonexistent'",
    });
    expect(r.tests.some((x) => x.file === 'tests/test_broken.py')).toBe(false);
  });

  it('keeps messages bounded', () => {
    for (const x of r.tests) if (x.message) expect(x.message.split('\n').length).toBeLessThanOrEqual(8);
  });
});

describe('pytest junit with colour forced on (addopts --color=yes)', () => {
  it('the escapes pytest writes as #x1B are taken out of the message', () => {
    const xml = '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="1" failures="1"><testcase classname="test_n" name="test_n" file="test_n.py" line="3"><failure message="AssertionError: assert \'Oct 16 2023\' == \'today\'&#10;  #x1B[0m#x1B[91m- today#x1B[39;49;00m">def test_n():\n&gt;       assert n() == "today"\nE       AssertionError: assert \'Oct 16 2023\' == \'today\'\nE         #x1B[0m#x1B[91m- today#x1B[39;49;00m#x1B[90m#x1B[39;49;00m\nE         #x1B[92m+ Oct 16 2023#x1B[39;49;00m\n\ntest_n.py:5: AssertionError</failure></testcase></testsuite></testsuites>';
    const r = parseJUnit(xml, { flavor: 'pytest', files: ['test_n.py'] });
    expect(r.tests[0]!.message).toBe("AssertionError: assert 'Oct 16 2023' == 'today'\n  - today\n  + Oct 16 2023");
  });
});

describe('pytest junit (xunit2, no file attribute)', () => {
  it('maps dotted classnames back to the requested files', () => {
    const r = parseCapture('pytest-xunit2');
    const t = byId(r.tests);
    expect(t.get('tests/sub/test_math.py::TestGroup::TestInner::test_nested')?.file).toBe('tests/sub/test_math.py');
    expect(t.get('tests/sub/test_math.py::test_param[0-5-5]')?.failureKind).toBe('assertion');
    expect(t.get('tests/test_only_pass.py::test_ok')?.outcome).toBe('passed');
    expect(r.fileErrors).toEqual([expect.objectContaining({ file: 'tests/test_broken.py', kind: 'collection' })]);
    // same ids as the xunit1 report of the same code
    const x1 = new Set(parseCapture('pytest-base').tests.map((x) => x.id));
    for (const x of r.tests) expect(x1.has(x.id)).toBe(true);
  });

  it('falls back to a CamelCase split when the file was not requested', () => {
    const xml = readReport('pytest-xunit2', 'junit.xml');
    const r = parseJUnit(xml, { flavor: 'pytest', files: [] });
    expect(r.tests.map((x) => x.id)).toContain('tests/sub/test_math.py::TestGroup::TestInner::test_nested');
  });

  it('matches files when pytest reports paths relative to another rootdir', () => {
    const xml = readReport('pytest-base', 'junit.xml');
    const r = parseJUnit(xml, { flavor: 'pytest', files: ['py/tests/sub/test_math.py'] });
    expect(r.tests.map((x) => x.id)).toContain('py/tests/sub/test_math.py::TestGroup::test_in_class');
  });
});

describe('jest json', () => {
  const r = parseCapture('jest-base');
  const t = byId(r.tests);
  it('builds file > describe > test ids', () => {
    expect(t.get('test/math.test.js > math > adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(t.get('test/math.test.js > math > adds')!.message).toContain('Expected: 5');
    expect(t.get('test/math.test.js > math > nested > group > adds 1 + 1')?.outcome).toBe('failed');
    expect(t.get('test/math.test.js > math > nested > group > handles "quotes" & <xml>')?.outcome).toBe('passed');
    expect(t.get('test/math.test.js > top level')?.failureKind).toBe('assertion');
    expect(t.get('test/typed.test.ts > typed > adds numbers')?.outcome).toBe('failed');
  });
  it('classifies errors, timeouts, skips and todos', () => {
    expect(t.get('test/math.test.js > math > throws on purpose')).toMatchObject({ failureKind: 'error' });
    expect(t.get('test/math.test.js > math > throws on purpose')!.message).toMatch(/^TypeError: Cannot read properties of undefined/);
    expect(t.get('test/math.test.js > math > is slow')?.failureKind).toBe('timeout');
    expect(t.get('test/math.test.js > math > is skipped')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.js > math > is a todo')).toMatchObject({ outcome: 'skipped', message: 'todo' });
  });
  it('reports "Test suite failed to run" as collection errors with the real cause', () => {
    const errs = new Map(r.fileErrors.map((e) => [e.file, e]));
    expect([...errs.keys()].sort()).toEqual(['test/badimport.test.js', 'test/broken.test.js', 'test/typeerror.test.ts']);
    expect(errs.get('test/broken.test.js')!.message).toMatch(/SyntaxError: missing \) after argument list/);
    expect(errs.get('test/broken.test.js')!.message).not.toMatch(/Test suite failed to run/);
    expect(errs.get('test/badimport.test.js')!.message).toMatch(/^Cannot find module '..\/lib\/nonexistent'/);
    expect(errs.get('test/typeerror.test.ts')!.message).toMatch(/TS2322/);
    expect(errs.get('test/typeerror.test.ts')!.message).not.toMatch(/\u001b\[/);
  });
  it('rejects a document that is not a jest report', () => {
    expect(() => parseJestJson('{"foo": 1}', { files: [] })).toThrow(/testResults/);
  });
});

describe('vitest junit', () => {
  const r = parseCapture('vitest-base');
  const t = byId(r.tests);
  it('builds ids from the file and the > path vitest reports', () => {
    expect(t.get('test/math.test.ts > math > adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(t.get('test/math.test.ts > math > nested > group > adds 2 + 2')?.failureKind).toBe('assertion');
    expect(t.get('test/math.test.ts > math > throws on purpose')?.failureKind).toBe('error');
    expect(t.get('test/math.test.ts > math > is slow')?.failureKind).toBe('timeout');
    expect(t.get('test/math.test.ts > math > is a todo')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.ts > math > adds zero')?.outcome).toBe('passed');
  });
  it('reports files that fail to load as collection errors, not tests', () => {
    expect(r.fileErrors.map((e) => e.file).sort()).toEqual(['test/badimport.test.ts', 'test/broken.test.ts', 'test/throwsatload.test.ts']);
    expect(r.fileErrors.every((e) => e.kind === 'collection')).toBe(true);
    expect(r.fileErrors.find((e) => e.file === 'test/throwsatload.test.ts')!.message).toMatch(/^Error: cannot load this file/);
    expect(r.tests.some((x) => x.id.startsWith('test/broken.test.ts'))).toBe(false);
  });
  it('drops tests of files that were not requested (vitest filters by substring)', () => {
    const c = loadCapture('vitest-base');
    const only = parseRunReports(c.spec, { ...c.input, files: ['test/math.test.ts'] });
    expect(only.tests.every((x) => x.file === 'test/math.test.ts')).toBe(true);
    expect(only.tests.length).toBe(r.tests.length);
    expect(only.fileErrors).toEqual([]);
  });
});

describe("mocha (swt-bot's reporter, mocha 12)", () => {
  it('builds ids from the file and the title path, with every test in its own file', () => {
    const r = parseCapture('mocha-base');
    const t = byId(r.tests);
    expect(t.get('test/math.spec.js > math > adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', file: 'test/math.spec.js' });
    expect(t.get('test/math.spec.js > top level')?.failureKind).toBe('assertion');
    expect(t.get('test/math.spec.js > math > throws on purpose')).toMatchObject({ failureKind: 'error', message: "TypeError: Cannot read properties of undefined (reading 'missing')" });
    expect(t.get('test/math.spec.js > math > is slow')?.failureKind).toBe('timeout');
    expect(t.get('test/math.spec.js > math > is skipped')?.outcome).toBe('skipped');
    expect(t.get('test/math.spec.js > math > is pending')?.outcome).toBe('skipped');
    expect(t.get('test/math.spec.js > math > nested > group > adds 1 + 1')?.outcome).toBe('failed');
    expect(t.get('test/math.spec.js > math > nested > group > handles "quotes" & <xml>')?.outcome).toBe('passed');
    expect(t.get('test/other.spec.js > other > passes')).toMatchObject({ outcome: 'passed', file: 'test/other.spec.js' });
    expect(r.tests.every((x) => x.file === 'test/math.spec.js' || x.file === 'test/other.spec.js')).toBe(true);
    expect(r.fileErrors).toEqual([]);
  });
  it('a file that fails to load gets a collection error with its syntax error; the other file still reports', () => {
    const r = parseCapture('mocha-broken');
    expect(r.reportFound).toBe(true);
    expect(r.tests.map((t) => [t.id, t.outcome])).toEqual([['test/other.spec.js > other > passes', 'passed']]);
    expect(r.fileErrors).toHaveLength(1);
    expect(r.fileErrors[0]).toMatchObject({ file: 'test/broken.spec.js', kind: 'collection' });
    expect(r.fileErrors[0].message).toMatch(/SyntaxError: missing \) after argument list/);
    expect(r.fileErrors[0].message).not.toMatch(/^\s+at /m);
  });
  it('a missing import is a collection error naming the module', () => {
    const r = parseCapture('mocha-badimport');
    const errs = new Map(r.fileErrors.map((e) => [e.file, e]));
    expect(errs.get('test/badimport.spec.js')?.message).toMatch(/Cannot find module '..\/lib\/nonexistent'/);
    expect(errs.has('test/other.spec.js')).toBe(false);
    expect(byId(r.tests).get('test/other.spec.js > other > passes')?.outcome).toBe('passed');
  });
});

describe('node --test junit (one file per invocation)', () => {
  const r = parseCapture('node-base');
  const t = byId(r.tests);
  it('attributes every test to its file and nests describe blocks', () => {
    expect(t.get('test/math.test.js > math > adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', file: 'test/math.test.js' });
    expect(t.get('test/math.test.js > math > adds')!.message).toBe('Expected values to be strictly equal:-1 !== 5');
    expect(t.get('test/math.test.js > math > nested > group > adds 1 + 1')?.failureKind).toBe('assertion');
    expect(t.get('test/math.test.js > top level')?.failureKind).toBe('assertion');
    expect(t.get('test/math.test.js > math > throws on purpose')?.failureKind).toBe('error');
    expect(t.get('test/math.test.js > math > is slow')?.failureKind).toBe('timeout');
    expect(t.get('test/math.test.js > math > is skipped')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.js > math > is a todo')?.outcome).toBe('skipped');
  });
  it('explains file-level failures from the output, since the report only says "test failed"', () => {
    const errs = new Map(r.fileErrors.map((e) => [e.file, e]));
    expect(errs.get('test/broken.test.js')).toMatchObject({ kind: 'collection' });
    expect(errs.get('test/broken.test.js')!.message).toMatch(/SyntaxError: missing \) after argument list/);
    expect(errs.get('test/badimport.test.js')!.message).toMatch(/Cannot find module '..\/lib\/nonexistent'/);
  });
  it('needs the per-file report names', () => {
    const c = loadCapture('node-base');
    expect(Object.keys(c.input.reports).sort()).toEqual(['junit-0.xml', 'junit-1.xml', 'junit-2.xml']);
    const { ['junit-2.xml']: _gone, ...rest } = c.input.reports;
    const partial = parseRunReports(c.spec, { ...c.input, reports: rest });
    expect(partial.fileErrors.find((e) => e.file === 'test/badimport.test.js')?.kind).toBe('collection');
    expect(partial.problems).toEqual(['no junit-2.xml']);
  });
});

describe('TAP', () => {
  it('node-tap: subtests are tests, files are the top-level subtests', () => {
    const r = parseCapture('tap-base');
    const t = byId(r.tests);
    expect(t.get('test/math.test.js > math adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', file: 'test/math.test.js' });
    expect(t.get('test/math.test.js > math adds')!.message).toBe('two plus three\n-5\n+-1');
    expect(t.get('test/math.test.js > throws on purpose')?.failureKind).toBe('error');
    expect(t.get('test/math.test.js > is slow')?.failureKind).toBe('timeout');
    expect(t.get('test/math.test.js > is skipped')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.js > is todo')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.js > nested > inner adds')?.outcome).toBe('failed');
    expect(t.get('test/math.test.js > nested > inner passes')?.outcome).toBe('passed');
    expect(t.has('test/math.test.js > nested')).toBe(false);
    expect(t.get('test/other.test.js > other passes')?.outcome).toBe('passed');
    expect(r.fileErrors).toEqual([expect.objectContaining({ file: 'test/broken.test.js', kind: 'collection' })]);
    expect(r.fileErrors[0].message).toMatch(/SyntaxError: missing \) after argument list/);
  });

  it('tape: `# name` groups assertions into tests; a crash fails the running test', () => {
    const r = parseCapture('tape-base');
    const t = byId(r.tests);
    expect(t.get('test/math.test.js > math adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: 'two plus three\nexpected: 5\nactual: -1' });
    expect(t.get('test/math.test.js > rejects on purpose')).toMatchObject({ failureKind: 'error', message: 'TypeError: async boom' });
    expect(t.get('test/math.test.js > is skipped')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.js > is todo')?.outcome).toBe('skipped');
    expect(t.get('test/math.test.js > always passes')?.outcome).toBe('passed');
    expect(t.get('test/crash.test.js > before the crash')?.outcome).toBe('passed');
    expect(t.get('test/crash.test.js > crashes the process')).toMatchObject({ outcome: 'failed', failureKind: 'error' });
    expect(t.get('test/crash.test.js > crashes the process')!.message).toMatch(/TypeError: Cannot read properties of undefined/);
    expect(t.has('test/crash.test.js > never reached')).toBe(false);
    expect(r.fileErrors).toEqual([expect.objectContaining({ file: 'test/broken.test.js', kind: 'collection' })]);
  });

  it('parses a bare stream without files', () => {
    const r = parseTap('TAP version 13\n# a\nok 1 one\n# b\nnot ok 2 two\n  ---\n  operator: equal\n  expected: 1\n  actual: 2\n  ...\n1..2\n# tests 2\n', { files: [] });
    expect(r.tests).toEqual([
      { id: 'a', outcome: 'passed' },
      { id: 'b', outcome: 'failed', failureKind: 'assertion', message: 'two\nexpected: 1\nactual: 2' },
    ]);
  });
});

describe('missing reports', () => {
  it('a timed-out run gives every file a timeout error with the output tail', () => {
    const r = parseCapture('pytest-timeout');
    expect(r.reportFound).toBe(false);
    expect(r.fileErrors.map((e) => [e.file, e.kind])).toEqual([
      ['tests/test_only_pass.py', 'timeout'],
      ['tests/test_slow.py', 'timeout'],
    ]);
    expect(r.fileErrors[0].message).toMatch(/^timed out before reporting/);
    expect(r.fileErrors[0].message).toContain('tests/test_slow.py');
  });
  it('a failed run without a report gives collection errors', () => {
    const r = parseCapture('pytest-missing');
    expect(r.fileErrors).toEqual([{ file: 'tests/test_x.py', kind: 'collection', message: '/usr/bin/python3: No module named pytest' }]);
  });
  it('an unreadable report counts as missing', () => {
    const c = loadCapture('vitest-base');
    const r = parseRunReports(c.spec, { ...c.input, reports: { 'junit.xml': '<testsuites><testsuite name="x"><testcase' } });
    expect(r.reportFound).toBe(false);
    expect(r.problems[0]).toMatch(/^unreadable junit.xml/);
    expect(r.fileErrors.map((e) => e.file).sort()).toEqual([...c.meta.files].sort());
  });
  it('a clean run that reports nothing for a file adds no error', () => {
    const c = loadCapture('pytest-head');
    const r = parseRunReports(c.spec, { ...c.input, files: [...c.meta.files, 'tests/test_empty.py'], exitCode: 0 });
    expect(r.fileErrors.some((e) => e.file === 'tests/test_empty.py')).toBe(false);
  });
  it('a failed run whose report explains the failure adds no error for a file it holds no test of', () => {
    // The exit code comes from the other files' failures: an entry made from it alone would be a
    // `missing` failure on a side that exits 0 (issue 7's rule for every runner).
    const c = loadCapture('pytest-head');
    expect(c.meta.exitCode).not.toBe(0);
    const r = parseRunReports(c.spec, { ...c.input, files: [...c.meta.files, 'tests/test_empty.py'] });
    expect(r.fileErrors.some((e) => e.file === 'tests/test_empty.py')).toBe(false);
  });
  it('a failed run that nothing in its report explains blames the file it holds no test of', () => {
    const c = loadCapture('pytest-head');
    const passing = '<testsuites><testsuite name="pytest"><testcase classname="tests.test_only_pass" name="test_ok" file="tests/test_only_pass.py"/></testsuite></testsuites>';
    const r = parseRunReports(c.spec, { ...c.input, reports: { 'junit.xml': passing }, files: ['tests/test_only_pass.py', 'tests/test_empty.py'], exitCode: 1 });
    expect(r.fileErrors.find((e) => e.file === 'tests/test_empty.py')?.kind).toBe('collection');
  });
  it('an OOM kill is said so', () => {
    const c = loadCapture('pytest-timeout');
    const r = parseRunReports(c.spec, { ...c.input, timedOut: false, oomKilled: true });
    expect(r.fileErrors[0]).toEqual({ file: 'tests/test_only_pass.py', kind: 'collection', message: 'killed: out of memory' });
  });
});

describe('parser helpers', () => {
  it('failureKindOf prefers the exception type, then the headline', () => {
    expect(failureKindOf('whatever', 'AssertionError')).toBe('assertion');
    expect(failureKindOf('AssertionError: x', 'TypeError')).toBe('error');
    expect(failureKindOf('Timeout of 2000ms exceeded.')).toBe('timeout');
    expect(failureKindOf('Failed: Timeout >1.0s')).toBe('timeout');
    expect(failureKindOf('boom\n  cause: AssertionError [ERR_ASSERTION]: 1 !== 2', 'testCodeFailure')).toBe('assertion');
    expect(failureKindOf('expected 1 to be 2\nthe socket timed out', 'AssertionError')).toBe('assertion');
    expect(failureKindOf('ReferenceError: x is not defined')).toBe('error');
  });
  it('firstLines bounds lines and characters and strips ANSI', () => {
    expect(firstLines('\n\n  a\n  b\n\n\n  c\n')).toBe('a\nb\n\nc');
    expect(firstLines('1\n2\n3\n4', 2)).toBe('1\n2');
    expect(firstLines('x'.repeat(50), 8, 10)).toBe(`${'x'.repeat(9)}…`);
    expect(firstLines('\u001b[31mred\u001b[39m')).toBe('red');
    expect(firstLines('  \n ')).toBeUndefined();
  });
  it('resolveFile makes paths repository-relative and prefers requested files', () => {
    expect(resolveFile('/testbed/tests/a.py', { files: [] })).toBe('tests/a.py');
    expect(resolveFile('./tests/a.py', { files: [] })).toBe('tests/a.py');
    expect(resolveFile('/elsewhere/pkg/tests/a.py', { files: ['pkg/tests/a.py'] })).toBe('pkg/tests/a.py');
    expect(resolveFile('tests/a.py', { files: ['pkg/tests/a.py'] })).toBe('pkg/tests/a.py');
    expect(resolveFile('file:///testbed/x.test.js', { files: [] })).toBe('x.test.js');
  });
  it('mergeDuplicates keeps the worst outcome for a repeated id', () => {
    const merged = mergeDuplicates([
      { id: 'a', outcome: 'passed' },
      { id: 'a', outcome: 'failed', failureKind: 'error' },
      { id: 'b', outcome: 'skipped' },
      { id: 'b', outcome: 'passed' },
    ]);
    expect(merged).toEqual([
      { id: 'a', outcome: 'failed', failureKind: 'error' },
      { id: 'b', outcome: 'passed' },
    ]);
  });
  it('excerptForFile falls back to the last lines when the file is not mentioned', () => {
    expect(excerptForFile('one\ntwo\nthree', 'x.py', 2)).toBe('two\nthree');
  });
});

describe('mocha 1.x, 2.x, 5.x, 8.x and 10.x give the same per-test results (captured in real containers)', () => {
  const VERSIONS = ['mocha1', 'mocha2', 'mocha5', 'mocha8', 'mocha10'];
  const outcomes = (name: string) => Object.fromEntries(parseCapture(name).tests.map((t) => [t.id, t.outcome]));
  const BASE = {
    'test/math.js > math > adds nothing to zero': 'passed',
    'test/math.js > math > adds two numbers': 'failed',
    'test/math.js > math > negative > adds negatives': 'failed',
    'test/math.js > math > multiplies (not yet)': 'skipped',
    'test/math.js > math > divides (pending)': 'skipped',
    'test/setup.spec.js > with setup > runs after setup': 'failed',
    'test/setup.spec.js > with setup > runs after setup too': 'failed',
    'test/str.js > str > counts letters': 'passed',
    'test/str.js > str > shouts': 'failed',
    'test/str.js > str > trims (not yet)': 'skipped',
    'test/str.js > str later > pads': 'skipped',
  };

  it.each(VERSIONS)('%s at base: every test with its file; the file that cannot load is a collection error', (v) => {
    const r = parseCapture(`${v}-base`);
    expect(outcomes(`${v}-base`)).toEqual(BASE);
    expect(r.fileErrors).toEqual([{ file: 'test/twice.js', kind: 'collection', message: expect.stringMatching(/^Cannot find module '..\/lib\/twice'/) }]);
    const t = byId(r.tests);
    expect(t.get('test/math.js > math > adds two numbers')?.failureKind).toBe('assertion');
    expect(t.get('test/str.js > str > shouts')?.message).toMatch(/global leak(s|\(s\))? detected: '?lastShout/);
    expect(t.get('test/setup.spec.js > with setup > runs after setup')).toMatchObject({ failureKind: 'error', message: expect.stringMatching(/^"before all" hook failed: AssertionError/) });
  });

  it.each(VERSIONS)('%s at head: the same ids, the fixed ones pass', (v) => {
    const head = outcomes(`${v}-head`);
    expect(Object.keys(head).sort()).toEqual([...Object.keys(BASE), 'test/twice.js > twice > doubles'].sort());
    for (const [id, o] of Object.entries(BASE)) expect([id, head[id]]).toEqual([id, o === 'skipped' ? 'skipped' : 'passed']);
    expect(parseCapture(`${v}-head`).fileErrors).toEqual([]);
  });

  it.each(['mocha1', 'mocha10'])('%s: a file that fails to load fails alone and the run exits non-zero', (v) => {
    const c = loadCapture(`${v}-loadfail`);
    const r = parseCapture(`${v}-loadfail`);
    expect(c.meta.exitCode).not.toBe(0);
    expect(r.tests.map((t) => [t.id, t.outcome])).toEqual([['test/twice.js > twice > doubles', 'passed']]);
    expect(r.fileErrors).toEqual([{ file: 'test/broken.js', kind: 'collection', message: expect.stringMatching(/Cannot find module '..\/lib\/never-written'/) }]);
  });

  it('reads the records from stdout when the report file could not be written', () => {
    const c = loadCapture('mocha5-stdout');
    expect(Object.keys(c.input.reports)).toEqual([]);
    expect(outcomes('mocha5-stdout')).toEqual(outcomes('mocha5-head'));
    expect(parseCapture('mocha5-stdout').reportFound).toBe(true);
  });
});

describe('parseMochaJsonl', () => {
  const ctx = { files: ['test/a.js', 'test/b.js'], root: '/testbed' };
  const line = (o: object) => JSON.stringify(o);
  it('a later failure of the same test wins (a leak found after it passed); a cut last line is skipped', () => {
    const text = [
      line({ event: 'start' }),
      line({ event: 'test', file: '/testbed/test/a.js', title: ['s', 't'], state: 'passed' }),
      line({ event: 'test', file: '/testbed/test/a.js', title: ['s', 't'], state: 'failed', err: { name: 'Error', message: "global leak(s) detected: 'x'" } }),
      '{"event":"test","file":"/testbed/test/b.js","tit',
    ].join('\n');
    const r = parseMochaJsonl(text, ctx);
    expect(r.tests).toEqual([{ id: 'test/a.js > s > t', file: 'test/a.js', outcome: 'failed', failureKind: 'error', message: "global leak(s) detected: 'x'" }]);
    expect(r.complete).toBe(false);
  });
  it('a hook failure that failed no test is an error of its file, unless the file has tests', () => {
    const text = [
      line({ event: 'hook', file: '/testbed/test/a.js', title: ['"after all" hook'], err: { message: 'teardown broke' } }),
      line({ event: 'hook', file: '/testbed/test/b.js', title: ['"after all" hook'], err: { message: 'x' } }),
      line({ event: 'test', file: '/testbed/test/b.js', title: ['t'], state: 'passed' }),
      line({ event: 'error', err: { message: 'Uncaught error outside test suite' } }),
      line({ event: 'end' }),
    ].join('\n');
    const r = parseMochaJsonl(text, ctx);
    expect(r.fileErrors).toEqual([{ file: 'test/a.js', kind: 'collection', message: '"after all" hook failed: teardown broke' }]);
    expect(r.errors).toEqual(['Uncaught error outside test suite']);
    expect(r.complete).toBe(true);
  });
  it('timeouts by flag or code; a test without a file belongs to the only requested file', () => {
    const text = [
      line({ event: 'test', title: ['slow'], state: 'failed', err: { message: 'Timeout of 2000ms exceeded.', code: 'ERR_MOCHA_TIMEOUT' } }),
      line({ event: 'test', title: ['slower'], state: 'failed', err: { message: 'timeout of 2000ms exceeded', timeout: true } }),
    ].join('\n');
    const r = parseMochaJsonl(text, { files: ['test/only.js'] });
    expect(r.tests.map((t) => [t.id, t.failureKind])).toEqual([
      ['test/only.js > slow', 'timeout'],
      ['test/only.js > slower', 'timeout'],
    ]);
  });
  it('throws on text with no record, and finds marker lines in an output', () => {
    expect(() => parseMochaJsonl('not json\n', ctx)).toThrow(/no records/);
    expect(mochaMarkerLines('a\n##swt-mocha## {"event":"start"}\nb\n  \u001b[0m##swt-mocha## {"event":"end"}\n')).toBe('{"event":"start"}\n{"event":"end"}');
    expect(mochaMarkerLines('nothing here')).toBeUndefined();
  });
  it('tests of files that were not asked for (a .mocharc `spec`) are left out', () => {
    const c = loadCapture('mocha-head');
    const r = parseRunReports(c.spec, { ...c.input, files: ['test/other.spec.js'] });
    expect(r.tests.map((t) => t.id)).toEqual(['test/other.spec.js > other > passes']);
  });
});
