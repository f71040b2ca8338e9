import { filesTouchedByPatch, OUTPUT_TAIL_CHARS, runTests } from '../../src/harness/runTests.js';
import { isTestFile } from '../../src/harness/testFiles.js';
import { buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';
import type { Environment, RunOutcome, RunRequest, Sandbox } from '../../src/sandbox/types.js';
import { isSwtError, SwtError } from '../../src/util/errors.js';
import { loadCapture } from './fixtures/reports/load.js';

const env: Environment = { image: 'swt-env:abc', key: 'abc', baseImage: 'node:22', snapshotRev: 'deadbeef', cached: true, buildMs: 0 };

/** A Sandbox that replays a captured run and records what it was asked. */
function replay(scenario: string, patch: Partial<RunOutcome> = {}) {
  const c = loadCapture(scenario);
  const calls: RunRequest[] = [];
  const sandbox: Pick<Sandbox, 'run'> = {
    async run(req) {
      calls.push(req);
      return { exitCode: c.meta.exitCode, timedOut: c.meta.timedOut, oomKilled: false, output: c.input.output, files: c.input.reports, durationMs: 1234, ...patch };
    },
  };
  return { sandbox, calls, capture: c };
}

async function swtErrorOf(p: Promise<unknown>): Promise<SwtError> {
  try {
    await p;
  } catch (e) {
    if (isSwtError(e)) return e;
    throw e;
  }
  throw new Error('expected an SwtError');
}

describe('runTests', () => {
  it('runs the built command on the state and parses the report', async () => {
    const { sandbox, calls, capture } = replay('jest-base');
    const runner = runnerFromCommand(capture.meta.template);
    const state = { rev: 'abc123', patches: ['diff --git a/x b/x'] };
    const r = await runTests(sandbox, { env, repo: '/repos/x', state, runner, files: capture.meta.files, limits: { timeoutMs: 1000 } });
    expect(calls).toEqual([{ env, repo: '/repos/x', state, command: buildTestCommand(runner, capture.meta.files, '/swt-out'), limits: { timeoutMs: 1000 } }]);
    expect(calls[0].command).toContain('--outputFile=/swt-out/jest.json');
    // the report's absolute paths (another root) still map to the requested files
    expect(r.tests.find((t) => t.id === 'test/math.test.js > math > adds')).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(r.fileErrors.map((e) => e.file).sort()).toEqual(['test/badimport.test.js', 'test/broken.test.js', 'test/typeerror.test.ts']);
    expect(r).toMatchObject({ timedOut: false, exitCode: 1, durationMs: 1234 });
  });

  it('marks a timed-out run and gives its files timeout errors', async () => {
    const { sandbox, capture } = replay('pytest-timeout');
    const r = await runTests(sandbox, { env, repo: '/r', state: { rev: 'a', patches: [] }, runner: runnerFromCommand(capture.meta.template), files: capture.meta.files });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.tests).toEqual([]);
    expect(r.fileErrors.map((e) => e.kind)).toEqual(['timeout', 'timeout']);
  });

  it.each(['sh-missing', 'jest-missing', 'pytest-missing'])('throws TEST_COMMAND_NOT_FOUND when the runner is missing (%s)', async (scenario) => {
    const { sandbox, capture } = replay(scenario);
    const e = await swtErrorOf(runTests(sandbox, { env, repo: '/r', state: { rev: 'a', patches: [] }, runner: runnerFromCommand(capture.meta.template), files: capture.meta.files }));
    expect(e.code).toBe('TEST_COMMAND_NOT_FOUND');
    expect(e.message).toContain(capture.meta.template);
    expect(e.hint).toMatch(/install/);
  });

  it('does not blame the command when a report was written', async () => {
    const { sandbox, capture } = replay('pytest-base', { exitCode: 127 });
    const r = await runTests(sandbox, { env, repo: '/r', state: { rev: 'a', patches: [] }, runner: runnerFromCommand(capture.meta.template), files: capture.meta.files });
    expect(r.tests.length).toBeGreaterThan(5);
  });

  it('refuses an empty file list', async () => {
    const { sandbox, calls } = replay('pytest-base');
    const e = await swtErrorOf(runTests(sandbox, { env, repo: '/r', state: { rev: 'a', patches: [] }, runner: runnerFromCommand('pytest {files}'), files: [] }));
    expect(e.code).toBe('NO_TEST_FILES');
    expect(calls).toEqual([]);
  });

  it('keeps a bounded tail of the output', async () => {
    const { sandbox, capture } = replay('pytest-base', { output: `${'x'.repeat(50_000)}\nLAST LINE` });
    const r = await runTests(sandbox, { env, repo: '/r', state: { rev: 'a', patches: [] }, runner: runnerFromCommand(capture.meta.template), files: capture.meta.files });
    expect(r.output.length).toBeLessThanOrEqual(OUTPUT_TAIL_CHARS);
    expect(r.output.endsWith('LAST LINE')).toBe(true);
  });
});

describe('filesTouchedByPatch', () => {
  const patch = [
    'diff --git a/tests/test_new.py b/tests/test_new.py',
    'new file mode 100644',
    'index 0000000..1111111',
    '--- /dev/null',
    '+++ b/tests/test_new.py',
    '@@ -0,0 +1,2 @@',
    '+def test_x():',
    '+    assert True',
    'diff --git a/tests/test_gone.py b/tests/test_gone.py',
    'deleted file mode 100644',
    'index 1111111..0000000',
    '--- a/tests/test_gone.py',
    '+++ /dev/null',
    '@@ -1,2 +0,0 @@',
    '-def test_y():',
    '-    assert True',
    'diff --git a/src/lib.py b/src/lib.py',
    'index 1..2 100644',
    '--- a/src/lib.py',
    '+++ b/src/lib.py',
    '@@ -1 +1 @@',
    '-a = 1',
    '+a = 2',
    'diff --git a/tests/conftest.py b/tests/conftest.py',
    'index 1..2 100644',
    '--- a/tests/conftest.py',
    '+++ b/tests/conftest.py',
    '@@ -1 +1 @@',
    '-a = 1',
    '+a = 2',
    'diff --git "a/test/we ird.test.js" "b/test/we ird.test.js"',
    'index 1..2 100644',
    '--- "a/test/we ird.test.js"',
    '+++ "b/test/we ird.test.js"',
    '@@ -1 +1 @@',
    '-x',
    '+y',
    'diff --git a/test/old.spec.ts b/test/renamed.spec.ts',
    'similarity index 100%',
    'rename from test/old.spec.ts',
    'rename to test/renamed.spec.ts',
    '',
  ].join('\n');

  it('lists added, modified and renamed test files, not deletions or non-tests', () => {
    expect(filesTouchedByPatch(patch)).toEqual(['tests/test_new.py', 'test/we ird.test.js', 'test/renamed.spec.ts']);
  });

  it('takes a custom test-file predicate', () => {
    expect(filesTouchedByPatch(patch, (p) => p.endsWith('.py'))).toEqual(['tests/test_new.py', 'src/lib.py', 'tests/conftest.py']);
  });

  it('handles plain diff -u patches without a/ b/ prefixes', () => {
    const plain = '--- a/test_x.py\t2024-01-01\n+++ a/test_x.py\t2024-01-02\n@@ -1 +1 @@\n-x\n+y\n';
    expect(filesTouchedByPatch(plain)).toEqual(['a/test_x.py']);
    expect(filesTouchedByPatch('')).toEqual([]);
  });

  it('isTestFile knows the usual layouts', () => {
    for (const p of ['tests/test_a.py', 'pkg/a_test.py', 'src/a.test.ts', 'src/a.spec.mjs', '__tests__/a.js', 'test/a.js', 'test/sub/b.cjs']) expect([p, isTestFile(p)]).toEqual([p, true]);
    for (const p of ['src/a.py', 'tests/conftest.py', 'tests/__init__.py', 'test/fixtures/a.js', 'test/helpers/setup.js', 'README.md', 'src/a.d.ts', 'test/__snapshots__/a.test.js.snap']) expect([p, isTestFile(p)]).toEqual([p, false]);
  });
});
