import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSystem, c, nameOf } from '../../src/ecosystems/c/index.js';
import { changedDeclarations } from '../../src/ecosystems/c/changedTests.js';
import { declaredTests, fileOfTest } from '../../src/ecosystems/c/declarations.js';
import { parseBundle, ctestVerdicts } from '../../src/ecosystems/c/report.js';
import { CMAKE_CONFIGURE, CMAKE_PROJECT_OPTIONS } from '../../src/ecosystems/c/runners.js';
import { parseGcovJson } from '../../src/coverage/gcov.js';
import { countable, counterFor, coverageOf, withCoverage } from '../../src/coverage/instrument.js';
import { detectEcosystems, ownErrorText, recogniseRunner } from '../../src/ecosystems/index.js';
import { repoInfoOf } from '../../src/generation/repoFiles.js';
import { planSnippetTest } from '../../src/generation/snippet/index.js';
import { compareRuns, judgedTests } from '../../src/harness/classify.js';
import { parseJUnit, parseRunReports } from '../../src/harness/parsers/index.js';
import { buildRerunCommand, buildTestCommand, detectRunner, runnerFromCommand } from '../../src/harness/runners.js';
import { configRules, isTestFile, isTestPath, testConfigFiles } from '../../src/harness/testFiles.js';
import { cmakeTestSources } from '../../src/ecosystems/c/buildFiles.js';
import { environmentDefaults } from '../../src/pipeline/environmentDefaults.js';
import { parseBaseRef, TOOLCHAIN_RECIPES } from '../../src/sandbox/images/imageRecipes.js';
import type { RunResult, TestResult } from '../../src/results/types.js';

// Real reports, captured by running the runners' own commands (runners.ts) in the swt-cc:12 image
// (Debian bookworm: GoogleTest 1.12.1, Catch2 2.13.10, doctest 2.4.9, CMake 3.25, Meson 1.0.1,
// automake 1.16) on small projects with a real bug: failures, skips, a disabled test, a
// value-parameterized test, a segfault, a hanging test killed by CTest's --timeout, a test file
// that does not compile. See fixtures/c/README.md.
const FIX = fileURLToPath(new URL('./fixtures/c/', import.meta.url));
const read = (name: string) => readFileSync(join(FIX, name), 'utf8');
const parse = (name: string, files: string[]) => parseBundle(read(name), { files, root: '/testbed', output: '' });
const rows = (tests: TestResult[]) => tests.map((t) => [t.id, t.outcome, t.failureKind ?? '']);
const GT = ['tests/clampx_test.cpp', 'tests/whole_test.cpp'];

describe('CTest with GoogleTest 1.12 (gtest_discover_tests, and a binary CTest runs whole)', () => {
  const r = parse('gtest-ctest.txt', GT);
  const byId = new Map(r.tests.map((t) => [t.id, t]));

  it('gives each test `<file> > Suite.Name` as GoogleTest names it, the binary run whole included', () => {
    expect(rows(r.tests).sort()).toEqual(
      [
        ['tests/clampx_test.cpp > Clamp.Inside', 'passed', ''],
        ['tests/clampx_test.cpp > Clamp.Above', 'failed', 'assertion'],
        ['tests/clampx_test.cpp > Clamp.Skipped', 'skipped', ''],
        ['tests/clampx_test.cpp > Clamp.DISABLED_Later', 'skipped', ''],
        ['tests/clampx_test.cpp > Clamp.Crash', 'passed', ''],
        // CTest's discovery names this one `Values/Range.Within/3` (the value); GoogleTest's own name is kept.
        ['tests/clampx_test.cpp > Values/Range.Within/0', 'passed', ''],
        ['tests/clampx_test.cpp > Values/Range.Within/1', 'failed', 'assertion'],
        ['tests/whole_test.cpp > Whole.Low', 'passed', ''],
        ['tests/whole_test.cpp > Whole.High', 'failed', 'assertion'],
        ['tests/whole_test.cpp > Whole.Hang', 'passed', ''],
      ].sort(),
    );
    // The CTest test `whole` (the binary) is said by its own tests, not as one more test.
    expect(byId.has('whole')).toBe(false);
    expect(r.tests.every((t) => t.file === t.id.split(' > ')[0])).toBe(true);
    expect(r).toMatchObject({ fileErrors: [], errors: [], complete: true });
  });

  it("places a test of a file not requested in the file GoogleTest's XML names (uriparser's 17 test files in one binary)", () => {
    const one = parse('gtest-ctest.txt', ['tests/clampx_test.cpp']);
    expect(one.tests.find((t) => t.id.endsWith('Whole.High'))).toMatchObject({ id: 'tests/whole_test.cpp > Whole.High', file: 'tests/whole_test.cpp', outcome: 'failed' });
    expect(one.tests.every((t) => t.file === t.id.split(' > ')[0])).toBe(true);
  });

  it('keeps GoogleTest\'s messages, skips and disabled tests', () => {
    expect(byId.get('tests/clampx_test.cpp > Clamp.Above')!.message).toMatch(/Which is: 15\nclamp from above/);
    expect(byId.get('tests/clampx_test.cpp > Clamp.Skipped')!.message).toContain('not on this platform');
    expect(byId.get('tests/clampx_test.cpp > Clamp.DISABLED_Later')!.message).toBe('disabled');
  });

  it('reads the same through the registry (runner kind ctest, one report file)', () => {
    const run = parseRunReports({ kind: 'ctest', template: 'ctest' }, { files: GT, reports: { 'c-tests.txt': read('gtest-ctest.txt') }, output: '', exitCode: 8, timedOut: false, root: '/testbed' });
    expect(run.reportFound).toBe(true);
    expect(run.tests).toHaveLength(10);
  });
});

describe('a crash and a timeout under CTest', () => {
  const r = parse('gtest-crash-timeout.txt', GT);
  const byId = new Map(r.tests.map((t) => [t.id, t]));

  it('says a discovered test that segfaulted crashed (CTest\'s console, since its JUnit does not)', () => {
    expect(byId.get('tests/clampx_test.cpp > Clamp.Crash')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringMatching(/^crashed: SegFault/) });
    expect(byId.get('tests/clampx_test.cpp > Clamp.Inside')!.outcome).toBe('passed');
  });

  it('says a binary CTest killed at its --timeout timed out, with what it printed last', () => {
    expect(byId.get('whole')).toMatchObject({ outcome: 'failed', failureKind: 'timeout', message: expect.stringMatching(/^timed out \(CTest's --timeout\)\n[\s\S]*whole_test\.cpp:7: Failure/) });
    // Its XML was never written: its tests are not reported one by one.
    expect(byId.has('tests/whole_test.cpp > Whole.Low')).toBe(false);
  });

  it('reads CTest\'s console verdicts', () => {
    const v = ctestVerdicts('5/8 Test #5: Clamp.Crash ......................***Exception: SegFault  0.00 sec\n8/8 Test #8: whole ............................***Timeout   3.01 sec\n1/8 Test #1: Clamp.Inside .....................   Passed    0.00 sec');
    expect([...v]).toEqual([
      ['Clamp.Crash', 'Exception: SegFault'],
      ['whole', 'Timeout'],
      ['Clamp.Inside', 'Passed'],
    ]);
  });
});

describe('a test file that does not compile', () => {
  const r = parse('gtest-build-failure.txt', GT);

  it('is a file error with the compiler\'s message, its directory a build failure; the other binary still runs', () => {
    expect(r.fileErrors).toEqual([{ file: 'tests/clampx_test.cpp', kind: 'collection', message: expect.stringMatching(/^build failed: tests\/clampx_test\.cpp:19: error: .clampx_abs. was not declared in this scope/) }]);
    expect(r.buildFailures).toEqual([{ unit: 'tests/clampx_test.cpp', dir: 'tests', message: expect.stringContaining('clampx_abs') }]);
    expect(rows(r.tests)).toEqual([
      ['tests/whole_test.cpp > Whole.Low', 'passed', ''],
      ['tests/whole_test.cpp > Whole.High', 'failed', 'assertion'],
      ['tests/whole_test.cpp > Whole.Hang', 'passed', ''],
    ]);
    // CMake's `clampx_test_NOT_BUILT` stand-in is not a test.
    expect(r.tests.some((t) => t.id.includes('NOT_BUILT'))).toBe(false);
    expect(r.fileErrors[0]!.message).toMatch(ownErrorText());
  });

  it('judges only the tests the patch adds there (a new test calling what only the fix adds)', () => {
    const patch = [
      'diff --git a/tests/clampx_test.cpp b/tests/clampx_test.cpp',
      '--- a/tests/clampx_test.cpp',
      '+++ b/tests/clampx_test.cpp',
      '@@ -17,3 +17,5 @@ INSTANTIATE_TEST_SUITE_P(Values, Range, ::testing::Values(3, 30));',
      ' ',
      '+TEST(Clamp, Abs) { EXPECT_EQ(3, clampx_abs(-3)); }',
      '',
    ].join('\n');
    const base: RunResult = { tests: r.tests, fileErrors: r.fileErrors, buildFailures: r.buildFailures, timedOut: false, exitCode: 8, output: '', durationMs: 1 };
    const headTests: TestResult[] = [
      { id: 'tests/clampx_test.cpp > Clamp.Abs', file: 'tests/clampx_test.cpp', outcome: 'passed' },
      { id: 'tests/clampx_test.cpp > Clamp.Inside', file: 'tests/clampx_test.cpp', outcome: 'passed' },
    ];
    const head: RunResult = { tests: headTests, fileErrors: [], timedOut: false, exitCode: 0, output: '', durationMs: 1 };
    const v = compareRuns([base], [head], { changedTest: c.changedTests!(patch) });
    const byId = new Map(v.tests.map((t) => [t.id, t]));
    expect(byId.get('tests/clampx_test.cpp > Clamp.Abs')).toMatchObject({ transition: 'F2P' });
    expect(byId.get('tests/clampx_test.cpp > Clamp.Abs')!.notJudged).toBeUndefined();
    expect(byId.get('tests/clampx_test.cpp > Clamp.Inside')!.notJudged).toMatch(/did not build at base/);
    expect(judgedTests(v).map((t) => t.id)).not.toContain('tests/clampx_test.cpp > Clamp.Inside');
  });
});

describe('Catch2 2.13 and doctest 2.4', () => {
  it('under CTest (catch_discover_tests): one test per test case, a SCENARIO as Catch2 names it, a segfault and an exception', () => {
    const r = parse('catch2-ctest.txt', ['tests/test_clampx.cpp']);
    expect(rows(r.tests)).toEqual([
      ['tests/test_clampx.cpp > clamp inside', 'passed', ''],
      ['tests/test_clampx.cpp > clamp above', 'failed', 'assertion'],
      ['tests/test_clampx.cpp > clamp sections', 'failed', 'assertion'],
      ['tests/test_clampx.cpp > Scenario: clamping a value', 'passed', ''],
      ['tests/test_clampx.cpp > crashes', 'failed', 'error'],
      ['tests/test_clampx.cpp > throws', 'failed', 'error'],
    ]);
    const byId = new Map(r.tests.map((t) => [t.id, t]));
    expect(byId.get('tests/test_clampx.cpp > clamp above')!.message).toContain('15 == 10');
    expect(byId.get('tests/test_clampx.cpp > crashes')!.message).toMatch(/^crashed: SegFault/);
    expect(byId.get('tests/test_clampx.cpp > throws')!.message).toContain('boom');
  });

  it('under CTest (doctest_discover_tests): a test suite\'s case by its name, subcases in their case', () => {
    const r = parse('doctest-ctest.txt', ['tests/clampx_test.cpp']);
    expect(rows(r.tests)).toEqual([
      ['tests/clampx_test.cpp > clamp inside', 'passed', ''],
      ['tests/clampx_test.cpp > clamp above', 'failed', 'assertion'],
      ['tests/clampx_test.cpp > low end', 'passed', ''],
      ['tests/clampx_test.cpp > subcases', 'failed', 'assertion'],
      ['tests/clampx_test.cpp > crashes', 'failed', 'error'],
    ]);
    expect(r.tests[1]!.message).toContain('values: CHECK( 15 == 10 )');
  });

  it('a Catch2 or doctest binary CTest runs whole: its cases one by one from its own junit reporter, CTest\'s line for it dropped', () => {
    const r = parse('whole-binaries.txt', ['tests/test_clampx.cpp', 'dtests/doctest_clampx_test.cpp']);
    const byId = new Map(r.tests.map((t) => [t.id, t]));
    expect(byId.has('catch_whole') || byId.has('doctest_whole')).toBe(false);
    expect(byId.get('tests/test_clampx.cpp > clamp sections/high')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(byId.get('dtests/doctest_clampx_test.cpp > subcases/two')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(byId.get('dtests/doctest_clampx_test.cpp > crashes')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringContaining('SIGSEGV') });
    // A name both files declare ("clamp above") is placed by the report's own file when it has one (doctest), else stays unplaced.
    expect(byId.get('clamp above')).toMatchObject({ outcome: 'failed' });
    expect(byId.get('dtests/doctest_clampx_test.cpp > clamp above')).toMatchObject({ outcome: 'failed' });
  });

  it.each([
    ['catch2-2.13-junit.xml', 'catch2-2.13-junit-crash.xml'],
    ['doctest-2.4-junit.xml', 'doctest-2.4-junit-crash.xml'],
  ])('their own junit reporters (%s): sections and subcases as `case/section`, a caught segfault an error', (ok, crash) => {
    const files = ['tests/test_clampx.cpp', 'tests/clampx_test.cpp'];
    const plain = parseJUnit(read(ok), { files, root: '/w/dt', flavor: 'catch2' });
    const names = plain.tests.map((t) => t.id);
    expect(names).toEqual(expect.arrayContaining(['clamp inside', 'clamp above']));
    expect(names.some((n) => /^(clamp sections|subcases)\/(high|two)$/.test(n))).toBe(true);
    expect(plain.tests.find((t) => t.id === 'clamp above')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    const crashed = parseJUnit(read(crash), { files, root: '/w/dt', flavor: 'catch2' });
    expect(crashed.tests.find((t) => t.id === 'crashes')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringContaining('SIGSEGV') });
    // doctest names the source file: the test is placed in it.
    if (ok.startsWith('doctest')) expect(plain.tests[0]!.file).toBe('tests/clampx_test.cpp');
  });
});

// The same projects with Debian trixie's GoogleTest 1.16, Catch2 3.7.1, doctest 2.4.11, CMake 3.31
// (whose JUnit gives a failure's verdict, `Failed`/`SEGFAULT`, as its message) and Meson 1.7.
describe('the second versions: GoogleTest 1.16, Catch2 3.7, doctest 2.4.11 under CTest 3.31; Meson 1.7', () => {
  it('GoogleTest 1.16: the same ids and verdicts; a crash said by CTest 3.31\'s own verdict', () => {
    const r = parse('trixie-gtest-ctest.txt', GT);
    const byId = new Map(r.tests.map((t) => [t.id, t]));
    expect([...byId.keys()].sort()).toEqual(parse('gtest-ctest.txt', GT).tests.map((t) => t.id).sort());
    expect(byId.get('tests/clampx_test.cpp > Clamp.Crash')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringMatching(/^crashed: SegFault\nSEGFAULT/) });
    expect(byId.get('tests/clampx_test.cpp > Clamp.Above')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('Which is: 15') });
  });

  it('Catch2 3.7 (Catch2WithMain): discovered cases, and a binary run whole by its junit reporter, sections included', () => {
    const r = parse('trixie-catch2-3-ctest.txt', ['tests/test_clampx.cpp']);
    const byId = new Map(r.tests.map((t) => [t.id, t]));
    expect(byId.get('tests/test_clampx.cpp > clamp above')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('CHECK( clampx(15, 0, 10) == 10 )') });
    expect(byId.get('tests/test_clampx.cpp > clamp sections/high')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(byId.get('tests/test_clampx.cpp > clamp sections/low')!.outcome).toBe('passed');
    expect(byId.get('tests/test_clampx.cpp > crashes')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringContaining('SIGSEGV') });
    expect(byId.get('tests/test_clampx.cpp > throws')).toMatchObject({ outcome: 'failed', failureKind: 'error' });
    expect(byId.get('tests/test_clampx.cpp > throws')!.message).not.toMatch(/host application/);
    // The CTest test that ran the binary whole is said by the binary's own cases.
    expect(byId.has('catch_whole')).toBe(false);
  });

  it('doctest 2.4.11 and Meson 1.7 give what 2.4.9 and 1.0 gave', () => {
    const rowsOf = (name: string, files: string[]) => rows(parse(name, files).tests);
    expect(rowsOf('trixie-doctest-ctest.txt', ['tests/clampx_test.cpp'])).toEqual(rowsOf('doctest-ctest.txt', ['tests/clampx_test.cpp']));
    const m = ['tests/clampx_test.cpp', 'tests/plain_test.c'];
    expect(rowsOf('trixie-meson.txt', m)).toEqual(rowsOf('meson.txt', m));
  });

  it('a build that could not be configured (a FetchContent with nothing to serve it, offline): each requested file errs, the run says why', () => {
    const r = parse('configure-failure.txt', GT);
    expect(r.tests).toEqual([]);
    expect(r.fileErrors.map((e) => [e.file, e.kind])).toEqual([
      ['tests/clampx_test.cpp', 'collection'],
      ['tests/whole_test.cpp', 'collection'],
    ]);
    expect(r.errors[0]).toMatch(/^the build could not be configured:\n[\s\S]*Build step for googletest failed/);
  });
});

describe('Meson 1.0 and automake 1.16', () => {
  it('meson test: a GoogleTest test (protocol gtest) by its subtests, plain tests by name, with their stderr', () => {
    const r = parse('meson.txt', ['tests/clampx_test.cpp', 'tests/plain_test.c']);
    expect(rows(r.tests)).toEqual([
      ['tests/clampx_test.cpp > Clamp.Inside', 'passed', ''],
      ['tests/clampx_test.cpp > Clamp.Above', 'failed', 'assertion'],
      ['tests/clampx_test.cpp > Clamp.Skipped', 'skipped', ''],
      ['tests/clampx_test.cpp > Clamp.DISABLED_Later', 'skipped', ''],
      ['tests/clampx_test.cpp > Clamp.Crash', 'passed', ''],
      ['tests/clampx_test.cpp > Values/Range.Within/0', 'passed', ''],
      ['tests/clampx_test.cpp > Values/Range.Within/1', 'failed', 'assertion'],
      ['plain', 'passed', ''],
      ['plain fails', 'failed', 'assertion'],
    ]);
    expect(r.tests.find((t) => t.id === 'plain fails')!.message).toBe('plain failure');
  });

  it("meson test (inih's own suite at a real fix): a test placed in the requested source its program is built from, by Meson's introspection", () => {
    const r = parse('meson-inih.txt', ['tests/unittest.c']);
    const byId = new Map(r.tests.map((t) => [t.id, t]));
    expect(r.tests).toHaveLength(16);
    expect(byId.get('tests/unittest.c > test_allow_no_value')).toMatchObject({ file: 'tests/unittest.c', outcome: 'failed' });
    expect(byId.get('tests/unittest.c > test_multi')!.outcome).toBe('passed');
    // Built from another source (unittest_string.c, not requested), or from examples/: the name alone.
    expect(r.tests.filter((t) => !t.file).map((t) => t.id).sort()).toEqual(['test_INIReaderExample', 'test_alloc', 'test_heap_string', 'test_string']);
  });

  it('make check: each .trs, a crash by its signal, a skip (exit 77) as skipped; the program placed in its source', () => {
    const r = parse('automake.txt', ['tests/test_clamp.c', 'tests/test_crash.c']);
    expect(rows(r.tests)).toEqual([
      ['tests/skip.sh', 'skipped', ''],
      ['tests/test_clamp.c > tests/test_clamp', 'failed', 'assertion'],
      ['tests/test_crash.c > tests/test_crash', 'failed', 'error'],
    ]);
    expect(r.tests[1]!.message).toContain('clamp(15, 0, 10) = 15, want 10');
    expect(r.tests[2]!.message).toMatch(/^crashed: killed by signal 11/);
  });

  it('a Makefile\'s own check target with no report: each requested file by the exit status', () => {
    const r = parse('make-exit.txt', ['tests/t.c']);
    expect(r.tests).toEqual([{ id: 'tests/t.c', file: 'tests/t.c', outcome: 'failed', fileLevel: true, failureKind: 'error', message: expect.stringContaining('Error 1') }]);
  });

  it('Unity (C, cJSON\'s own suite at a real fix): each test by its line, the CTest test of the binary dropped; an IGNORE a skip', () => {
    const r = parse('unity-cjson.txt', ['tests/misc_tests.c']);
    const byId = new Map(r.tests.map((t) => [t.id, t]));
    expect(r.tests).toHaveLength(150);
    expect(byId.get('tests/misc_tests.c > cjson_detach_item_via_pointer_should_return_null_if_item_prev_is_null')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: 'Failed to detach in the middle.' });
    expect(byId.get('tests/misc_tests.c > cjson_detach_item_via_pointer_should_detach_items')!.outcome).toBe('passed');
    // Another binary's test, its file not requested: in the file its Unity line names.
    expect(byId.get('tests/print_number.c > print_number_should_print_non_number')!.outcome).toBe('skipped');
    expect(r.tests.filter((t) => !t.file).map((t) => t.id)).toEqual(['cJSON_test']);
    expect(byId.has('misc_tests') || byId.has('tests/misc_tests.c > misc_tests')).toBe(false);
  });

  it('a CTest test named after its program (a plain C test binary) is placed in the requested source of that name', () => {
    const junit = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="(empty)" tests="1" failures="1">\n\t<testcase name="sum_test" classname="sum_test" time="0.01" status="fail">\n\t\t<failure message=""/>\n\t\t<system-out>sum(2, 2) = 5</system-out>\n\t</testcase>\n</testsuite>\n';
    const r = parseBundle(`\n@@swt-c status 0\n\n@@swt-c ctest-junit \n${junit}\n@@swt-c exit 8\n`, { files: ['tests/sum_test.c'], root: '/testbed', output: '' });
    expect(r.tests).toEqual([{ id: 'tests/sum_test.c > sum_test', file: 'tests/sum_test.c', outcome: 'failed', failureKind: 'assertion', message: 'sum(2, 2) = 5' }]);
  });

  it('a report cut short (no exit section) is not complete; a failed configure is an error of the run', () => {
    const r = parseBundle('\n@@swt-c build \nCMake Error at CMakeLists.txt:3 (find_package):\n  Could not find Foo\n\n@@swt-c status configure-failed\n', { files: [], output: '' });
    expect(r.complete).toBe(false);
    expect(r.errors[0]).toMatch(/^the build could not be configured:\n[\s\S]*Could not find Foo/);
  });
});

describe('C/C++ detection, conventions and commands', () => {
  const facts = (files: Record<string, string>) => ({ files: [...Object.keys(files), 'src/a.c'], manifests: files });

  it('detects CMake, Meson, automake and a Makefile\'s check target, strongest with tests declared', () => {
    expect(buildSystem(facts({ 'CMakeLists.txt': 'enable_testing()\n' }))).toBe('cmake');
    expect(buildSystem(facts({ 'CMakeLists.txt': 'project(x)\n', 'meson.build': "test('a', exe)\n" }))).toBe('meson');
    expect(buildSystem(facts({ 'Makefile.am': 'TESTS = t1\n', 'configure.ac': '' }))).toBe('automake');
    expect(buildSystem(facts({ Makefile: 'all:\n\tcc a.c\ncheck: all\n\t./t\n' }))).toBe('make');
    expect(buildSystem(facts({ Makefile: 'all:\n' }))).toBeUndefined();
    expect(c.detect(facts({ 'CMakeLists.txt': 'include(GoogleTest)\ngtest_discover_tests(t)\n' }))).toBe(20);
    expect(c.detect(facts({ 'CMakeLists.txt': 'project(x)\n' }))).toBe(8);
    expect(detectRunner(facts({ 'meson.build': "test('a', exe)\n" }))).toEqual({ kind: 'meson-test', template: 'meson test' });
    expect(detectRunner(facts({ Makefile: 'test:\n\t./t\n' }))).toEqual({ kind: 'make-check', template: 'make test' });
    // A Python project's Makefile with a test target stays Python; the touched files break a tie.
    const py = { files: ['pyproject.toml', 'Makefile', 'ext/fast.c', 'tests/test_a.py'], manifests: { Makefile: 'test:\n\tpytest\n', 'pyproject.toml': '[project]\nname="a"\n' } };
    expect(detectEcosystems(py)[0]!.ecosystem.id).toBe('python');
    const mixed = { files: ['CMakeLists.txt', 'pyproject.toml', 'tests/a_test.cc'], manifests: { 'CMakeLists.txt': 'enable_testing()\n' } };
    expect(detectEcosystems(mixed, ['tests/a_test.cc'])[0]!.ecosystem.id).toBe('c');
  });

  it('knows C and C++ test files by their conventions; headers under tests/ are support', () => {
    for (const f of ['tests/clampx_test.cpp', 'test/test_clamp.c', 'src/foo_unittest.cc', 'lib/FooTest.cpp', 'tests/unit/a.cxx', 'x/y.test.cpp', 'gtest/a.cc'])
      expect([f, isTestFile(f)]).toEqual([f, true]);
    for (const f of ['src/clamp.c', 'include/test.h', 'tests/helpers.h', 'build/tests/a_test.cc', 'src/contest.c']) expect([f, isTestFile(f)]).toEqual([f, false]);
    expect(isTestPath('tests/helpers.h')).toBe(true);
    expect(c.languageOf(['tests/a_test.cc'], [])).toBe('cpp');
    expect(c.languageOf(['tests/test_a.c'], ['src/a.c', 'src/a.h'])).toBe('c');
    expect(c.languageOf([], ['src/a.c', 'include/a.h'])).toBe('c');
  });

  it("takes the sources of the programs the root CMakeLists.txt's tests run as test files (tinyxml2's xmltest.cpp)", () => {
    // tinyxml2 494735d's CMakeLists.txt, the part that matters.
    const lists = [
      'add_library(tinyxml2 tinyxml2.cpp tinyxml2.h)',
      'if (tinyxml2_BUILD_TESTING)',
      '    add_executable(xmltest xmltest.cpp)  # the test program',
      '    add_test(',
      '        NAME xmltest',
      '        COMMAND xmltest',
      '        WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"',
      '    )',
      'endif ()',
      'add_executable(tool tools/tool.cpp)',
      'add_executable(old_style old/main.cc "old/util.cc" ${EXTRA_SOURCES})',
      'add_test(old old_style --flag)',
    ].join('\n');
    expect(cmakeTestSources(lists)).toEqual(['xmltest.cpp', 'old/main.cc', 'old/util.cc']);
    expect(testConfigFiles(['CMakeLists.txt', 'xmltest.cpp'])).toContain('CMakeLists.txt');
    const rules = configRules({ 'CMakeLists.txt': lists }, () => undefined);
    expect(isTestFile('xmltest.cpp', rules)).toBe(true);
    expect(isTestFile('tinyxml2.cpp', rules)).toBe(false);
    expect(isTestFile('tools/tool.cpp', rules)).toBe(false);
    expect(isTestFile('xmltest.cpp')).toBe(false);
    expect(configRules({ 'CMakeLists.txt': 'add_library(a a.c)\n' }, () => undefined).c).toBeUndefined();
  });

  it('uses the swt-cc image, which an offline recipe builds from Debian\'s packages', () => {
    const env = environmentDefaults(facts({ 'CMakeLists.txt': 'enable_testing()\n' }));
    expect(env.image).toBe('swt-cc:12');
    expect(parseBaseRef(env.image).recipe).toEqual({ kind: 'toolchain', image: 'swt-cc', version: '12' });
    const steps = TOOLCHAIN_RECIPES['swt-cc']!.steps.join('\n');
    for (const pkg of ['g++', 'clang', 'cmake', 'ninja-build', 'meson', 'libgtest-dev', 'libgmock-dev', 'catch2', 'doctest-dev', 'ccache', 'automake']) expect(steps).toContain(` ${pkg} `);
    // The FetchContent of googletest finds Debian's GTest through the config the image adds.
    expect(steps).toContain('googletestConfig.cmake');
    expect(CMAKE_CONFIGURE).toContain('-DFETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS');
    // The objects keep their dates: a run rebuilds only the inputs whose content differs from the warm-up's.
    expect(c.warm).not.toContain('touch -c -d @0');
    // The build's inputs (build files, sources, headers) recorded by checksum, the record dated just past the build;
    // a run dates the changed ones so, and the build remakes them (once in a container that runs again).
    expect(c.warm).toMatch(/-name Makefile\.am .* -o -name '\*\.cpp' .* -o -name '\*\.hpp' .* -exec md5sum \{\} \+ > "\$HOME\/\.swt-build-inputs"; touch -d "@\$\(\( \$\(date \+%s\) \+ 2 \)\)" "\$HOME\/\.swt-build-inputs"$/);
    expect(buildTestCommand({ kind: 'ctest', template: 'ctest' }, ['tests/a_test.cc'])).toContain(`md5sum -c "$HOME/.swt-build-inputs" 2>/dev/null | sed -n 's/: FAILED$//p' | while IFS= read -r f; do touch -c -r "$HOME/.swt-build-inputs" "$f"; done`);
  });

  it("turns on the project's own test options and off its documentation (uriparser's, cJSON's CMakeLists.txt), never a SKIP_ option", () => {
    const dir = mkdtempSync(join(tmpdir(), 'swt-cmake-options-'));
    try {
      const lists = [
        'option(URIPARSER_BUILD_DOCS "Build API documentation (requires Doxygen, Graphviz, and (optional) Qt\'s qhelpgenerator)" ON)',
        'option(URIPARSER_BUILD_TESTS "Build test suite (requires GTest >=1.8.0)" ON)',
        'option(URIPARSER_BUILD_FUZZERS "Build fuzzers (requires Clang)" OFF)',
        '  OPTION(ENABLE_CJSON_TEST "Enable building cJSON test" ON)',
        'option(FOO_SKIP_TESTS "skip" OFF)',
        'option(NO_TESTING "none" OFF)',
      ];
      writeFileSync(join(dir, 'CMakeLists.txt'), `${lists.join('\n')}\n`);
      const words = execFileSync('sh', ['-c', `echo ${CMAKE_PROJECT_OPTIONS}`], { cwd: dir, encoding: 'utf8' }).trim().split(' ');
      expect(words).toEqual(['-DURIPARSER_BUILD_DOCS=OFF', '-DURIPARSER_BUILD_TESTS=ON', '-DENABLE_CJSON_TEST=ON']);
      rmSync(join(dir, 'CMakeLists.txt'));
      expect(execFileSync('sh', ['-c', `echo ${CMAKE_PROJECT_OPTIONS}`], { cwd: dir, encoding: 'utf8' }).trim()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(CMAKE_CONFIGURE.endsWith(CMAKE_PROJECT_OPTIONS)).toBe(true);
  });

  it('recognises ctest, meson test and make check; builds the command with the report bundle', () => {
    expect(recogniseRunner('ctest -L unit')).toBe('ctest');
    expect(recogniseRunner('meson test --suite fast')).toBe('meson-test');
    expect(recogniseRunner('make -j4 check')).toBe('make-check');
    expect(recogniseRunner('make test')).toBeUndefined();
    const spec = runnerFromCommand('ctest -L unit', facts({ 'CMakeLists.txt': 'enable_testing()\n' }));
    const cmd = buildTestCommand(spec, ['tests/a_test.cc']);
    expect(cmd).toContain('ctest -L unit --test-dir .swt-build --output-junit');
    // All of each test's output in the JUnit (CTest keeps 1 KB of a passing one's by default): Unity's lines.
    expect(cmd).toContain('--test-output-size-passed 4000000 --test-output-size-failed 4000000');
    expect(cmd).toContain('export GTEST_OUTPUT=xml:/swt-out/gtest/; rc=0; ctest');
    expect(cmd).toContain("grep -nE '^[[:space:]]*[A-Z_]*(TEST|SCENARIO)[A-Z_]*[[:space:]]*\\(' tests/a_test.cc");
    expect(() => buildTestCommand(spec, ['tests/a\nb.cc'])).toThrow(/control characters/);
  });

  it('reruns chosen tests by their framework names: CTest -R (regex-escaped) and GTEST_FILTER', () => {
    const cmd = buildRerunCommand({ kind: 'ctest', template: 'ctest' }, [{ file: 'tests/a_test.cc', ids: ['tests/a_test.cc > Values/Range.Within/1', 'tests/a_test.cc > clamp (above)'] }], 1);
    expect(cmd).toContain("export GTEST_FILTER='Values/Range.Within/1:clamp (above)'");
    expect(cmd).toContain("-R '^(Values\\/Range\\.Within\\/1|clamp \\(above\\))$'");
    expect(nameOf('tests/a_test.cc > A.B')).toBe('A.B');
  });

  it('places a test in the file that declares it', () => {
    const d = [
      ...declaredTests('tests/a.cc', '3:TEST(Clamp, Above) {\n9:TEST_P(Range, Within) {\n12:  TYPED_TEST(Typed, Works) {'),
      ...declaredTests('tests/b.cc', 'TEST_CASE("clamp \\"quoted\\"", "[x]") {\nSCENARIO("clamping") {\nTEST_CASE_METHOD(Fixture, "with fixture") {'),
    ];
    expect(d.map((x) => [x.file, x.name, x.line])).toEqual([
      ['tests/a.cc', 'Clamp.Above', 3],
      ['tests/a.cc', 'Range.Within', 9],
      ['tests/a.cc', 'Typed.Works', 12],
      ['tests/b.cc', 'clamp "quoted"', 1],
      ['tests/b.cc', 'Scenario: clamping', 2],
      ['tests/b.cc', 'with fixture', 3],
    ]);
    expect(fileOfTest('Values/Range.Within/3', d)).toBe('tests/a.cc');
    expect(fileOfTest('Typed/1.Works', d)).toBe('tests/a.cc');
    expect(fileOfTest('Scenario: clamping/Given: x', d)).toBe('tests/b.cc');
    expect(fileOfTest('Clamp.Below', d)).toBeUndefined();
  });

  it('tells the tests a patch adds or changes', () => {
    const patch = [
      'diff --git a/tests/a_test.cc b/tests/a_test.cc',
      '--- a/tests/a_test.cc',
      '+++ b/tests/a_test.cc',
      '@@ -4,3 +4,3 @@ TEST(Clamp, Inside) {',
      '-  EXPECT_EQ(5, clampx(5, 0, 10));',
      '+  EXPECT_EQ(6, clampx(6, 0, 10));',
      ' }',
      '@@ -20,0 +20,3 @@',
      '+TEST_CASE("new case") {',
      '+  CHECK(true);',
      '+}',
      '',
    ].join('\n');
    expect(changedDeclarations(patch).map((d) => d.name)).toEqual(['Clamp.Inside', 'new case']);
  });

  it('refuses the snippet strategy for C++ with the reason, and names compilers\' own errors', async () => {
    const info = Promise.resolve(repoInfoOf(["CMakeLists.txt", "src/a.cc", "tests/a_test.cc"], "ctest", undefined, async () => undefined));
    expect((await info).language).toBe('cpp');
    const plan = await planSnippetTest({ title: 'clamp(15, 0, 10) returns 15', body: '```cpp\nclamp(15, 0, 10) // 15\n```' }, await info);
    expect(plan).toEqual({ ok: false, reason: expect.stringContaining('no test writer for cpp') });
    const own = ownErrorText();
    for (const m of ["error: use of undeclared identifier 'clampx_abs'", "error: 'struct S' has no member named 'y'", 'undefined reference to `clampx_abs(int)\'', "error: implicit declaration of function 'f'"]) expect([m, own.test(m)]).toEqual([m, true]);
    expect(own.test('Expected equality of these values')).toBe(false);
  });

  it('counts lines for ΔC with gcc\'s gcov: the builds instrumented, the counts read from gcov\'s JSON', () => {
    expect(counterFor('ctest')).toBe('gcov');
    expect(counterFor('meson-test')).toBe('gcov');
    expect(counterFor('make-check')).toBe('gcov');
    // Real gcov output: paths relative to the build directory, resolved from the repository root.
    // Clamp.Inside and Clamp.Above each ran once (gtest_discover_tests: a process each).
    expect(parseGcovJson(read('gcov-gcc12-cmake.jsonl'), ['src/clampx.cpp'], '/testbed')).toEqual({ 'src/clampx.cpp': { 3: 2, 4: 2, 5: 2, 6: 1 } });
    // A line several functions share (a test's constructor, destructor and body) sums their counts.
    expect(parseGcovJson(read('gcov-gcc12-cmake.jsonl'), ['tests/clampx_test.cpp', 'src/other.cpp'], '/testbed')).toEqual({ 'tests/clampx_test.cpp': { 4: 4, 6: 4 } });
    // An absolute path outside the repository and a line that is not JSON count for nothing.
    const outside = JSON.stringify({ current_working_directory: '/testbed', files: [{ file: '/usr/include/x.h', lines: [{ line_number: 1, count: 3 }] }, { file: 'src/clampx.cpp', lines: [{ line_number: 3, count: 1 }, { line_number: 9, count: 0 }] }] });
    expect(parseGcovJson(`gcov: warning\n${outside}\n{broken`, ['src/clampx.cpp', 'x.h'], '/testbed')).toEqual({ 'src/clampx.cpp': { 3: 1 } });
    expect(countable('gcov', 'src/a.hpp')).toBe(true);
    expect(countable('gcov', 'CMakeLists.txt')).toBe(false);
    const setup = coverageOf('ctest').setup!;
    expect(setup).toContain('-DCMAKE_CXX_FLAGS=--coverage');
    expect(setup).toContain('-Db_coverage=true');
    // make rebuilds by date: its objects are dated 1970 so every one is rebuilt instrumented.
    expect(setup).toContain("-not -path './.git/*' -exec touch -c -d @0 {} +");
    const cmd = withCoverage('gcov', 'ctest --test-dir .swt-build', ['src/clampx.cpp'], setup);
    // Set-up first, then the tests (their exit status is the run's), then gcov over the .gcda files.
    expect(cmd.indexOf(setup)).toBeLessThan(cmd.indexOf('( ctest --test-dir .swt-build ); swt_rc=$?'));
    expect(cmd).toContain("xargs -0 -r gcov -r -s /testbed --json-format --stdout > /swt-out/swt-coverage/gcov.jsonl");
    expect(cmd.trim().endsWith('exit $swt_rc')).toBe(true);
  });
});
