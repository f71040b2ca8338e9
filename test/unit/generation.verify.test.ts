import type { RunResult, TestResult } from '../../src/results/types.js';
import { splitDiff } from '../../src/patch/diffFiles.js';
import { readFileSync } from 'node:fs';
import { carriesReportedException, classifyFailure, reportedFailure, judgeRuns, leadingException } from '../../src/generation/verify.js';

const ISSUE = {
  title: 'parse_duration crashes on combined units like "1h30m"',
  body: '```\n>>> parse_duration("1h30m")\nTraceback (most recent call last):\n  File "<stdin>", line 1, in <module>\nValueError: invalid literal for int() with base 10: \'1h30\'\n```\nExpected 5400.',
};

const NEW_FILE = splitDiff(`diff --git a/tests/test_repro.py b/tests/test_repro.py
new file mode 100644
--- /dev/null
+++ b/tests/test_repro.py
@@ -0,0 +1,2 @@
+def test_combined():
+    assert parse_duration("1h30m") == 5400
`);

const EXISTING_FILE = splitDiff(`diff --git a/tests/test_parse.py b/tests/test_parse.py
index 1..2 100644
--- a/tests/test_parse.py
+++ b/tests/test_parse.py
@@ -20,3 +20,6 @@ def test_empty():
     assert True
+
+def test_combined_units():
+    assert parse_duration("1h30m") == 5400
`);

function run(tests: TestResult[], extra: Partial<RunResult> = {}): RunResult {
  return { tests, fileErrors: [], timedOut: false, exitCode: tests.some((t) => t.outcome === 'failed') ? 1 : 0, output: 'output tail', durationMs: 10, ...extra };
}
const failed = (id: string, failureKind: TestResult['failureKind'], message: string): TestResult => ({ id, file: id.split('::')[0], outcome: 'failed', failureKind, message });
const passed = (id: string): TestResult => ({ id, file: id.split('::')[0], outcome: 'passed' });

describe('verification judgement', () => {
  const assertionFail = failed('tests/test_repro.py::test_combined', 'assertion', 'assert 5400 == 0');
  const valueError = failed('tests/test_repro.py::test_combined', 'error', "ValueError: invalid literal for int() with base 10: '1h30'");

  it('reproduced: an assertion failure on base, twice', () => {
    const j = judgeRuns(ISSUE, NEW_FILE, [run([assertionFail]), run([assertionFail])]);
    expect(j.status).toBe('reproduced');
    expect(j.reproducingTests).toEqual(['tests/test_repro.py::test_combined']);
    expect(j.reason).toMatch(/assertion, twice/);
    expect(j.failureExcerpt).toContain('assert 5400 == 0');
  });

  it("reproduced: the issue's exception, with its message", () => {
    const j = judgeRuns(ISSUE, NEW_FILE, [run([valueError]), run([valueError])]);
    expect(j.status).toBe('reproduced');
    expect(j.matchesIssueException).toBe(true);
    expect(j.reason).toMatch(/ValueError/);
  });

  it("rejected: the test's own ImportError is not a reproduction", () => {
    const own = failed('tests/test_repro.py::test_combined', 'error', "ImportError: cannot import name 'parse_durations' from 'durations'");
    const j = judgeRuns(ISSUE, NEW_FILE, [run([own]), run([own])]);
    expect(j.status).toBe('not-reproduced');
    expect(j.ownError).toBe(true);
    expect(j.reason).toMatch(/its own error.*ImportError/);
  });

  it('rejected: a collection error of the test file (syntax error)', () => {
    const r = run([], { fileErrors: [{ file: 'tests/test_repro.py', kind: 'collection', message: 'SyntaxError: invalid syntax' }], exitCode: 2 });
    const j = judgeRuns(ISSUE, NEW_FILE, [r, r]);
    expect(j.status).toBe('not-reproduced');
    expect(j.ownError).toBe(true);
  });

  it('accepted: an ImportError when the issue is exactly about it', () => {
    const issue = { title: 'import fails', body: 'Importing the package raises\n```\nImportError: cannot import name Mapping from collections\n```' };
    const t = failed('tests/test_repro.py::test_combined', 'error', 'ImportError: cannot import name Mapping from collections');
    const j = judgeRuns(issue, NEW_FILE, [run([t]), run([t])]);
    expect(j.status).toBe('reproduced');
  });

  it('not reproduced: the tests pass on base', () => {
    const j = judgeRuns(ISSUE, NEW_FILE, [run([passed('tests/test_repro.py::test_combined')])]);
    expect(j.status).toBe('not-reproduced');
    expect(j.reason).toMatch(/pass on base/);
  });

  it('not reproduced: an exception the issue does not mention', () => {
    const t = failed('tests/test_repro.py::test_combined', 'error', "TypeError: parse_duration() takes 1 positional argument but 2 were given");
    const j = judgeRuns(ISSUE, NEW_FILE, [run([t]), run([t])]);
    expect(j.status).toBe('not-reproduced');
    expect(j.reason).toMatch(/not for the issue's reason.*TypeError/);
  });

  it('not reproduced: flaky between the two runs', () => {
    const j = judgeRuns(ISSUE, NEW_FILE, [run([assertionFail]), run([passed('tests/test_repro.py::test_combined')])]);
    expect(j.status).toBe('not-reproduced');
    expect(j.reason).toMatch(/flaky/);
  });

  it('withholds "reproduced" after a single run unless asked', () => {
    expect(judgeRuns(ISSUE, NEW_FILE, [run([assertionFail])]).status).toBe('not-reproduced');
    expect(judgeRuns(ISSUE, NEW_FILE, [run([assertionFail])], { requireRerun: false }).status).toBe('reproduced');
  });

  it('counts only the tests the patch adds to an existing file', () => {
    const oldBroken = failed('tests/test_parse.py::test_empty', 'assertion', 'assert False');
    const j = judgeRuns(ISSUE, EXISTING_FILE, [run([oldBroken, passed('tests/test_parse.py::test_combined_units')])]);
    expect(j.status).toBe('not-reproduced');
    const fixed = judgeRuns(ISSUE, EXISTING_FILE, [
      run([passed('tests/test_parse.py::test_empty'), failed('tests/test_parse.py::test_combined_units', 'error', "ValueError: invalid literal for int() with base 10: '1h30'")]),
      run([passed('tests/test_parse.py::test_empty'), failed('tests/test_parse.py::test_combined_units', 'error', "ValueError: invalid literal for int() with base 10: '1h30'")]),
    ]);
    expect(fixed.status).toBe('reproduced');
    expect(fixed.reproducingTests).toEqual(['tests/test_parse.py::test_combined_units']);
  });

  // The 1.5B model's test on jsdom/cssstyle f1bfdf7 (bench:generate, 2026-11-29) read a getter it never set:
  // it failed on base and on the fix alike. The issue shows the value read back; the test got undefined.
  it('an assertion whose actual value is nothing, where the issue shows a value, is not the issue\'s failure', () => {
    const css = { title: 'url() values are not serialized like browsers do', body: "Setting `div.style.backgroundImage = 'url(http://some/url/here1.png)'` reads back as `url(http://some/url/here1.png)`." };
    const inUrlJs = (kind: TestResult['failureKind'], message: string): TestResult => ({ ...failed('test/url.js > has special properties', kind, message), file: 'test/url.js' });
    const files = splitDiff('diff --git a/test/url.js b/test/url.js\nnew file mode 100644\n--- /dev/null\n+++ b/test/url.js\n@@ -0,0 +1 @@\n+it(\'x\')\n');
    const nodeUndefined = inUrlJs('assertion', "Expected values to be strictly equal:\n+ actual - expected\n\n+ undefined\n- 'url(\"http://some/url/here1.png\")'");
    const j = judgeRuns(css, files, [run([nodeUndefined]), run([nodeUndefined])]);
    expect(j.status).toBe('not-reproduced');
    expect(j.reason).toBe("the test fails on base, but not for the issue's reason: the value it checks is nothing (undefined, null or None), where the issue shows one: set up what the issue does, then check the value it reports");
    // The value the issue shows, read back wrong: a reproduction.
    const wrongValue = inUrlJs('assertion', "Expected values to be strictly equal:\n+ actual - expected\n\n+ 'url(http://some/url/here1.png)'\n- 'url(\"http://some/url/here1.png\")'");
    expect(judgeRuns(css, files, [run([wrongValue]), run([wrongValue])]).status).toBe('reproduced');
    // Other runners' nothing; and an issue about something missing keeps it.
    const facts = reportedFailure(css);
    for (const m of ['assert None == 5400', 'E       assert None == 5400', 'expect(received).toBe(expected)\n\nExpected: 5400\nReceived: undefined', 'AssertionError: expected undefined to equal 5400', 'expected:<5400> but was:<null>']) {
      expect([m, classifyFailure({ id: 't', failureKind: 'assertion', message: m }, facts).kind]).toEqual([m, 'nothing-checked']);
    }
    expect(classifyFailure({ id: 't', failureKind: 'assertion', message: 'assert 0 == 5400' }, facts).kind).toBe('assertion');
    const missing = reportedFailure({ title: 'parse returns None for "1h30m"', body: 'Expected 5400.' });
    expect(classifyFailure({ id: 't', failureKind: 'assertion', message: 'assert None == 5400' }, missing).kind).toBe('assertion');
  });

  it('a timeout counts only when the issue reports a hang', () => {
    const t = failed('tests/test_repro.py::test_combined', 'timeout', 'Timeout >10s');
    expect(judgeRuns(ISSUE, NEW_FILE, [run([t]), run([t])]).status).toBe('not-reproduced');
    const hang = { title: 'tokenize hangs on an unterminated string', body: 'It never returns.' };
    expect(judgeRuns(hang, NEW_FILE, [run([t]), run([t])]).status).toBe('reproduced');
  });

  it('says why each run it cannot judge is no reproduction, and words a single accepted run', () => {
    expect(judgeRuns(ISSUE, NEW_FILE, []).reason).toBe('the tests were not run');
    const timedOut = judgeRuns(ISSUE, NEW_FILE, [run([], { timedOut: true })]);
    expect([timedOut.reason, timedOut.failureExcerpt]).toEqual(['the test run timed out on base (and the issue is not about a hang)', 'output tail']);
    expect(judgeRuns(ISSUE, NEW_FILE, [run([])]).reason).toBe('no test ran (nothing collected)');
    expect(judgeRuns(ISSUE, EXISTING_FILE, [run([passed('tests/other.py::test_x')])]).reason).toBe('none of the tests that ran is one the patch adds');
    const flaky = judgeRuns(ISSUE, NEW_FILE, [run([assertionFail]), run([passed('tests/test_repro.py::test_combined')])]);
    expect([flaky.reason, flaky.reproducingTests, flaky.failureExcerpt]).toEqual(['flaky: tests/test_repro.py::test_combined changed outcome between two runs on base', [], 'tests/test_repro.py::test_combined\nassert 5400 == 0']);
    const unconfirmed = judgeRuns(ISSUE, NEW_FILE, [run([valueError])]);
    expect(unconfirmed).toMatchObject({ reason: 'not re-run: flakiness not ruled out', reproducingTests: ['tests/test_repro.py::test_combined'], matchesIssueException: true });
    const single = judgeRuns(ISSUE, NEW_FILE, [run([valueError])], { requireRerun: false });
    expect(single).toMatchObject({ status: 'reproduced', reason: "fails on base with the issue's ValueError (single run)", matchesIssueException: true, ownError: false });
    expect(judgeRuns(ISSUE, NEW_FILE, [run([valueError]), run([valueError])]).reason).toBe("fails on base with the issue's ValueError, twice; the failure carries the reported ValueError");
  });

  it('rejects a patch without test files', () => {
    const src = splitDiff('diff --git a/durations/parse.py b/durations/parse.py\n--- a/durations/parse.py\n+++ b/durations/parse.py\n@@ -1 +1 @@\n-a\n+b\n');
    expect(judgeRuns(ISSUE, src, [run([assertionFail])]).reason).toMatch(/no test file/);
  });

  it('classifies failure messages from several runners', () => {
    const facts = reportedFailure({ title: 'x', body: 'TypeError: Cannot read properties of undefined' });
    expect(classifyFailure({ id: 'a', failureKind: 'error', message: 'AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal' }, facts).kind).toBe('assertion');
    expect(classifyFailure({ id: 'a', failureKind: 'assertion', message: 'expected [ 1, 2 ] to deeply equal [ 1, 2, 3 ]' }, facts).kind).toBe('assertion');
    expect(classifyFailure({ id: 'a', failureKind: 'error', message: "TypeError: Cannot read properties of undefined (reading 'x')" }, facts).kind).toBe('issue-exception');
    expect(classifyFailure({ id: 'a', failureKind: 'error', message: "Error: Cannot find module '../src/nope'" }, facts).kind).toBe('own-error');
    expect(classifyFailure({ id: 'a', failureKind: 'error', message: 'ReferenceError: chunk is not defined' }, facts).kind).toBe('own-error');
    expect(classifyFailure({ id: 'a', failureKind: 'error', message: "failed on setup with \"file x, line 3: fixture 'tmp' not found\"" }, facts).kind).toBe('own-error');
    expect(classifyFailure({ id: 'a', failureKind: 'assertion', message: 'Failed: DID NOT RAISE <class \'ValueError\'>' }, facts).kind).toBe('assertion');
  });

  it('reads exception names and matches reported messages', () => {
    expect(leadingException('E   KeyError: 3')).toBe('KeyError');
    expect(leadingException('numpy.core._exceptions.UFuncTypeError: x')).toBe('UFuncTypeError');
    expect(leadingException('assert 1 == 2')).toBeUndefined();
    const reported = { type: 'ValueError', message: "invalid literal for int() with base 10: '1h30'" };
    expect(carriesReportedException("AssertionError: the issue's error is raised: ValueError: invalid literal for int() with base 10: \"1h30\"", reported)).toBe(true);
    expect(carriesReportedException('ValueError: empty duration', reported)).toBe(false);
  });
});

describe('verification on real-world shapes', () => {
  const fail = (id: string, message: string, failureKind: 'assertion' | 'error' = 'error') => ({ id, outcome: 'failed' as const, failureKind, message });
  const pass = (id: string) => ({ id, outcome: 'passed' as const });
  const result = (tests: ReturnType<typeof fail | typeof pass>[]) => ({ tests, fileErrors: [], timedOut: false, exitCode: 1, output: '', durationMs: 5 });

  it('a TypeError on undefined counts when the issue reports something missing (pillarjs/send)', () => {
    const issue = { title: 'Fix emitted 416 error missing headers property', body: '' };
    const t = fail('test/send.js > with Range > should emit error 416 with content-range header', "Cannot read properties of undefined (reading 'Content-Range')\nTypeError: Cannot read properties of undefined (reading 'Content-Range')");
    const files = splitDiff("diff --git a/test/send.js b/test/send.js\n--- a/test/send.js\n+++ b/test/send.js\n@@ -1,1 +1,2 @@\n a\n+    it('should emit error 416 with content-range header', function (done) {\n");
    const j = judgeRuns(issue, files, [result([t]), result([t])]);
    expect(j.status).toBe('reproduced');
    expect(j.reason).toMatch(/TypeError on a missing value/);
    const unrelated = judgeRuns({ title: 'Wrong status code for ranges', body: '' }, files, [result([t]), result([t])]);
    expect(unrelated.status).toBe('not-reproduced');
  });

  it('tests whose names stay but whose data the patch changes count when they passed without the patch (pillarjs/path-to-regexp)', () => {
    const issue = { title: 'incorrect group value for `:name*` pattern', body: '' };
    const files = splitDiff("diff --git a/src/index.spec.ts b/src/index.spec.ts\n--- a/src/index.spec.ts\n+++ b/src/index.spec.ts\n@@ -1,1 +1,2 @@\n a\n+      [\"foobar\", [\"foobar\", \"foobar\"]],\n");
    const id = "src/index.spec.ts > rules > ':name*' > match > should match 'foobar'";
    const failing = fail(id, 'Error: expect(received).toEqual(expected)', 'assertion');
    const withoutBaseline = judgeRuns(issue, files, [result([failing]), result([failing])]);
    expect(withoutBaseline.status).toBe('not-reproduced');
    const passedBefore = judgeRuns(issue, files, [result([failing]), result([failing])], { baseline: result([pass(id)]) });
    expect(passedBefore.status).toBe('reproduced');
    const failedBefore = judgeRuns(issue, files, [result([failing]), result([failing])], { baseline: result([failing]) });
    expect(failedBefore.status).toBe('not-reproduced');
  });
});


describe('a test that calls what does not exist is its own error, in every ecosystem', () => {
  const facts = reportedFailure({ title: 'Wrong total', body: 'The total is off by one.' });
  const kind = (message: string) => classifyFailure({ id: 't', failureKind: 'error', message }, facts).kind;
  /** The first line of a real captured report that holds `needle`. */
  const lineOf = (fixture: string, needle: string) => readFileSync(`test/unit/fixtures/${fixture}`, 'utf8').split('\n').find((l) => l.includes(needle))!;

  it('Rust and Java compile errors from real reports', () => {
    expect(kind(lineOf('rust/libtest-1.95.0-build-failure.txt', 'E0425'))).toBe('own-error');
    expect(kind(lineOf('rust/libtest-1.63.0-build-failure.txt', 'E0425'))).toBe('own-error');
    expect(kind(lineOf('java/surefire-3.2.5-junit4/maven-build-failure.log', 'cannot find symbol'))).toBe('own-error');
    expect(kind(lineOf('java/gradle-4.4.1-junit4/gradle-build-failure.log', 'cannot find symbol'))).toBe('own-error');
  });

  it('PHP and Ruby: a missing function, class or constant; a method of nil is a bug, not the test', () => {
    expect(kind('Error: Call to undefined method Composer\\Semver\\Constraint::isEmpty()')).toBe('own-error');
    expect(kind('Error: Class "App\\Money" not found')).toBe('own-error');
    expect(kind('NameError: uninitialized constant Paint::Mode')).toBe('own-error');
    expect(kind("NoMethodError: undefined method `unpaint' for Paint:Module")).toBe('own-error');
    expect(kind("NoMethodError: undefined method `size' for nil:NilClass")).not.toBe('own-error');
    expect(kind("NoMethodError: undefined method 'size' for nil")).not.toBe('own-error');
  });

  it('Go, Python and Node as before', () => {
    expect(kind('./clamp_test.go:9:9: undefined: Abs')).toBe('own-error');
    expect(kind("ModuleNotFoundError: No module named 'durations.extra'")).toBe('own-error');
    expect(kind("Error: Cannot find module '../src/nope'")).toBe('own-error');
  });
});
