import { join } from 'node:path';
import { buildRerunCommand, DEFAULT_OUT_DIR, rerunDir } from '../../src/harness/runners.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { prepareContext } from '../../src/pipeline/context.js';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, validateJson } from '../helpers/ecosystemRun.js';

// A small real Go module with no configuration at all: detection from go.mod, the golang image
// (built offline from Debian where none can be pulled), `go mod download` of a real dependency
// (github.com/google/go-cmp, from the Go module proxy through the egress proxy, checked against
// go.sum), `go test -json` on the touched package, in real containers; ΔC from go's cover profile.

const GO_MOD = 'module example.com/clampx\n\ngo 1.21\n\nrequire github.com/google/go-cmp v0.6.0\n';
const GO_SUM = [
  'github.com/google/go-cmp v0.6.0 h1:ofyhxvXcZhMsU5ulbFiLKl/XBFqE1GSq7atu8tAmTRI=',
  'github.com/google/go-cmp v0.6.0/go.mod h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=',
  '',
].join('\n');
const BUGGY = 'package clampx\n\n// Clamp limits x to [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n';
const FIXED = 'package clampx\n\n// Clamp limits x to [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n\n// Abs is |x|.\nfunc Abs(x int) int {\n\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}\n';
const OLD_TEST = [
  'package clampx',
  '',
  'import (',
  '\t"testing"',
  '',
  '\t"github.com/google/go-cmp/cmp"',
  ')',
  '',
  'func TestClampInside(t *testing.T) {',
  '\tif d := cmp.Diff(5, Clamp(5, 0, 10)); d != "" {',
  '\t\tt.Error(d)',
  '\t}',
  '}',
  '',
].join('\n');

/** A test patch that appends `lines` (a new test function) to clampx_test.go. */
const appendTest = (lines: string[]) =>
  [
    'diff --git a/clampx_test.go b/clampx_test.go',
    '--- a/clampx_test.go',
    '+++ b/clampx_test.go',
    `@@ -11,3 +11,${3 + lines.length + 1} @@ func TestClampInside(t *testing.T) {`,
    ' \t\tt.Error(d)',
    ' \t}',
    ' }',
    '+',
    ...lines.map((l) => `+${l}`),
    '',
  ].join('\n');

const ABOVE = appendTest(['func TestClampAbove(t *testing.T) {', '\tif d := cmp.Diff(10, Clamp(15, 0, 10)); d != "" {', '\t\tt.Errorf("Clamp(15, 0, 10) (-want +got):\\n%s", d)', '\t}', '}']);
// Calls Abs, which only the fix adds: at base the package does not build.
const ABS = appendTest(['func TestAbs(t *testing.T) {', '\tif Abs(-3) != 3 {', '\t\tt.Fatal("Abs(-3)")', '\t}', '}']);

let repo: TempRepo;
let base: string;
let head: string;

beforeAll(() => {
  repo = createGitRepo({ 'go.mod': GO_MOD, 'go.sum': GO_SUM, 'clampx.go': BUGGY, 'clampx_test.go': OLD_TEST, 'README.md': '# clampx\n' });
  base = repo.sha;
  head = repo.commit({ 'clampx.go': FIXED }, 'Clamp limits from above; add Abs');
});

afterAll(cleanUpEcosystemRuns);

describe('Go modules, no configuration (real containers, a real dependency from the module proxy)', () => {
  it('swt validate reports exactly the new test as F→P and S', async () => {
    const out = await validateJson(repo.path, base, head, ABOVE);
    expect(out.tests.map((t: { id: string; transition: string }) => [t.id, t.transition])).toEqual([
      ['example.com/clampx.TestClampAbove', 'F2P'],
      ['example.com/clampx.TestClampInside', 'P2P'],
    ]);
    expect(out.success).toBe(true);
    expect(out.runner).toBe('go-test');
    expect(out.warnings).toEqual([]);
    // Confirmation is on by default: the one test that moved reran twice more on each side, selected with -run.
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['example.com/clampx.TestClampAbove'], alone: true });
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

  it('a new test that does not compile at base: only it counts as F→P; its neighbour is not judged', async () => {
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: ABS });
    const byId = Object.fromEntries(v.tests.map((t) => [t.id, t]));
    expect(Object.keys(byId).sort()).toEqual(['example.com/clampx.TestAbs', 'example.com/clampx.TestClampInside']);
    expect(byId['example.com/clampx.TestAbs']).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'collection', message: expect.stringContaining('undefined: Abs') } });
    expect(byId['example.com/clampx.TestAbs']!.notJudged).toBeUndefined();
    expect(byId['example.com/clampx.TestClampInside']!.notJudged).toMatch(/did not build at base/);
    expect(v.success).toBe(true);
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
