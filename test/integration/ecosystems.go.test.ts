import { join } from 'node:path';
import { buildRerunCommand, buildTestCommand, DEFAULT_OUT_DIR, rerunDir } from '../../src/harness/runners.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { prepareContext } from '../../src/pipeline/context.js';
import { roundPlan } from '../../src/harness/rounds.js';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';
import { ABOVE, ABS, BASE_FILES, FIXED, OLD_TEST } from '../helpers/goClampx.js';

// A small real Go module with no configuration at all: detection from go.mod, the golang image
// (built offline from Debian where none can be pulled), `go mod download` of a real dependency
// (github.com/google/go-cmp, from the Go module proxy through the egress proxy, checked against
// go.sum), `go test -json` on the touched package, in real containers; ΔC from go's cover profile.

let repo: TempRepo;
let base: string;
let head: string;

beforeAll(() => {
  repo = createGitRepo({ ...BASE_FILES, 'README.md': '# clampx\n' });
  base = repo.sha;
  head = repo.commit({ 'clampx.go': FIXED }, 'Clamp limits from above; add Abs');
});

afterAll(cleanUpEcosystemRuns);

describe('Go modules, no configuration (real containers, a real dependency from the module proxy)', () => {
  it('swt validate reports exactly the new test as F→P and S', async () => {
    const out = await validateJson(repo.path, base, head, ABOVE);
    expect(transitions(out)).toEqual([
      ['example.com/clampx.TestClampAbove', 'F2P'],
      ['example.com/clampx.TestClampInside', 'P2P'],
    ]);
    expect(out.success).toBe(true);
    expect(out.runner).toBe('go-test');
    expect(out.warnings).toEqual([]);
    // Confirmation is on by default: the one test that moved ran twice more on each side, in rounds
    // inside the first run (its test binary again, a new process per round, no rerun after).
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['example.com/clampx.TestClampAbove'], alone: true, inProcess: ['example.com/clampx.TestClampAbove'] });
    expect(out.confirmation!.runs.base.map((r) => r.tests.map((t) => [t.id, t.outcome]))).toEqual([
      [['example.com/clampx.TestClampAbove', 'failed']],
      [['example.com/clampx.TestClampAbove', 'failed']],
    ]);
    expect(out.confirmation!.runs.head.map((r) => r.tests.map((t) => [t.id, t.outcome]))).toEqual([
      [['example.com/clampx.TestClampAbove', 'passed']],
      [['example.com/clampx.TestClampAbove', 'passed']],
    ]);
  }, 1_800_000);

  it('a confirmation rerun runs only the chosen test: go test -run, read straight from the report', async () => {
    const sandbox = createDockerSandbox();
    const ctx = await prepareContext(sandbox, { repo: repo.path, base });
    const command = buildRerunCommand(ctx.runner, [{ file: 'clampx_test.go', ids: ['example.com/clampx.TestClampAbove'] }], 1);
    expect(command).toContain("-run='^(TestClampAbove)$'");
    const outcome = await sandbox.run({ env: ctx.env, repo: ctx.repo, state: { rev: head, patches: [ABOVE] }, command });
    const json = outcome.files[`${rerunDir(DEFAULT_OUT_DIR, 0, 0).slice(DEFAULT_OUT_DIR.length + 1)}/go-test.json`];
    expect(json).toBeDefined();
    const report = parseRunReports(ctx.runner, { files: ['clampx_test.go'], reports: { 'go-test.json': json! }, output: outcome.output, exitCode: outcome.exitCode, timedOut: false, root: '/testbed' });
    // Everything go test reported: TestClampInside, in the same file and package, did not run.
    expect(report.tests.map((t) => [t.id, t.outcome])).toEqual([['example.com/clampx.TestClampAbove', 'passed']]);
  }, 1_800_000);

  it('a rerun in the first run\'s container runs that run\'s own test binary: it needs no go test, not even the test source', async () => {
    const sandbox = createDockerSandbox();
    const ctx = await prepareContext(sandbox, { repo: repo.path, base });
    const first = buildTestCommand(ctx.runner, ['clampx_test.go'], DEFAULT_OUT_DIR, { kept: true });
    const rerun = buildRerunCommand(ctx.runner, [{ file: 'clampx_test.go', ids: ['example.com/clampx.TestClampAbove'] }], 1);
    // The source goes between the two: go test -run could not build the package any more.
    const outcome = await sandbox.run({ env: ctx.env, repo: ctx.repo, state: { rev: head, patches: [ABOVE] }, command: `${first}; rm clampx_test.go; ${rerun}` });
    const json = outcome.files[`${rerunDir(DEFAULT_OUT_DIR, 0, 0).slice(DEFAULT_OUT_DIR.length + 1)}/go-test.json`];
    const report = parseRunReports(ctx.runner, { files: ['clampx_test.go'], reports: { 'go-test.json': json ?? '' }, output: outcome.output, exitCode: outcome.exitCode, timedOut: false, root: '/testbed' });
    expect(report.tests.map((t) => [t.id, t.outcome, t.file])).toEqual([['example.com/clampx.TestClampAbove', 'passed', 'clampx_test.go']]);
  }, 1_800_000);

  it('rounds convert their output with the toolchain\'s own test2json, found from the PATH go test gives its -exec program', async () => {
    const sandbox = createDockerSandbox();
    const ctx = await prepareContext(sandbox, { repo: repo.path, base });
    const rounds = roundPlan(ABOVE, ['clampx_test.go'], 2)!;
    const command = buildTestCommand(ctx.runner, ['clampx_test.go'], DEFAULT_OUT_DIR, { kept: true, rounds });
    const outcome = await sandbox.run({ env: ctx.env, repo: ctx.repo, state: { rev: base, patches: [ABOVE] }, command: `${command}; echo "tool=$(cat "$GOTMPDIR/swt-test2json")"` });
    // The tool the go command would have started, called straight: no go command per round.
    const tool = /^tool=(.*)$/m.exec(outcome.output)?.[1] ?? '';
    expect(tool).toMatch(/\/bin\/\.\.\/pkg\/tool\/linux_[a-z0-9]+\/test2json$/);
    // Both rounds' reports are go test's JSON, the package named as the run named it.
    for (const r of [1, 2]) {
      const json = outcome.files[`go-test.json.round${r}`] ?? '';
      const report = parseRunReports(ctx.runner, { files: ['clampx_test.go'], reports: { 'go-test.json': json }, output: '', exitCode: 0, timedOut: false, root: '/testbed' });
      expect(report.tests.map((t) => [t.id, t.outcome])).toEqual([['example.com/clampx.TestClampAbove', 'failed']]);
    }
  }, 1_800_000);

  it('a new test that does not compile at base: only it counts as F→P; its neighbour is not judged', async () => {
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: ABS });
    const byId = Object.fromEntries(v.tests.map((t) => [t.id, t]));
    expect(Object.keys(byId).sort()).toEqual(['example.com/clampx.TestAbs', 'example.com/clampx.TestClampInside']);
    expect(byId['example.com/clampx.TestAbs']).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'collection', message: expect.stringContaining('undefined: Abs') } });
    expect(byId['example.com/clampx.TestAbs']!.notJudged).toBeUndefined();
    expect(byId['example.com/clampx.TestClampInside']!.notJudged).toMatch(/did not build at base/);
    expect(v.success).toBe(true);
  }, 1_800_000);

  it('a new test file is judged by its own tests: its package\'s other tests, run with it, are judged against a baseline of the package without it', async () => {
    // An old test pins the bug (the fix breaks it, as a real fix's own test patch then updates);
    // go test runs the new file with its whole package.
    const pinned = `${OLD_TEST}\nfunc TestClampPinsOld(t *testing.T) {\n\tif Clamp(15, 0, 10) != 15 {\n\t\tt.Error("changed")\n\t}\n}\n`;
    const pinning = createGitRepo({ ...BASE_FILES, 'clampx_test.go': pinned });
    try {
      const pinBase = pinning.sha;
      const pinHead = pinning.commit({ 'clampx.go': FIXED }, 'fix');
      const lines = ['package clampx', '', 'import "testing"', '', 'func TestClampAbove(t *testing.T) {', '\tif got := Clamp(15, 0, 10); got != 10 {', '\t\tt.Errorf("Clamp(15, 0, 10) = %d", got)', '\t}', '}'];
      const ABOVE_FILE = `${lines.join('\n')}\n`;
      const newFile = ['diff --git a/above_test.go b/above_test.go', 'new file mode 100644', '--- /dev/null', '+++ b/above_test.go', '@@ -0,0 +1,9 @@', ...lines.map((l) => `+${l}`), ''].join('\n');
      const v = await validate(createDockerSandbox(), { repo: pinning.path, base: pinBase, head: pinHead, testPatch: newFile });
      const byId = Object.fromEntries(v.tests.map((t) => [t.id, t]));
      expect(byId['example.com/clampx.TestClampAbove']).toMatchObject({ transition: 'F2P' });
      expect(byId['example.com/clampx.TestClampAbove']!.preexisting).toBeUndefined();
      expect(byId['example.com/clampx.TestClampPinsOld']).toMatchObject({ transition: 'P2F', preexisting: true });
      expect(byId['example.com/clampx.TestClampInside']).toMatchObject({ transition: 'P2P', preexisting: true });
      // The baseline ran the package through its other test file, without the new one.
      expect(v.baseline!.base.tests.map((t) => t.id).sort()).toEqual(['example.com/clampx.TestClampInside', 'example.com/clampx.TestClampPinsOld']);
      expect(v.success).toBe(true);

      // A pull request that holds the new file itself: head's baseline runs the package without it.
      const withFile = pinning.commit({ 'above_test.go': ABOVE_FILE }, 'the test too');
      const own = await validate(createDockerSandbox(), { repo: pinning.path, base: pinBase, head: withFile, testPatch: newFile });
      expect(own.tests.find((t) => t.id === 'example.com/clampx.TestClampPinsOld')).toMatchObject({ transition: 'P2F', preexisting: true });
      expect(own.baseline!.head.tests.map((t) => [t.id, t.outcome]).sort()).toEqual([
        ['example.com/clampx.TestClampInside', 'passed'],
        ['example.com/clampx.TestClampPinsOld', 'failed'],
      ]);
      expect(own.success).toBe(true);
    } finally {
      pinning.cleanup();
    }
  }, 1_800_000);

  it('measures ΔC from go test\'s own cover profile', async () => {
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: ABOVE, coverage: { referenceTestPatch: ABOVE } });
    expect(v.coverageError).toBeUndefined();
    // X*: the fix's lines the golden tests execute (Clamp's new branch, not Abs). The predicted
    // tests are the golden ones, so both raise the same lines: the branch's body at least.
    const c = v.coverage!;
    expect(c).toMatchObject({ counter: 'go-cover', executableBy: 'reference' });
    expect(c.dC).toBe(c.referenceDC);
    expect(c.dC).toBeGreaterThanOrEqual(0.5);
    expect(c.coveredLines.added['clampx.go']).toEqual(expect.arrayContaining([9]));
    expect(Object.values(c.executable.added).flat().some((l) => l >= 14)).toBe(false);
  }, 1_800_000);
});
