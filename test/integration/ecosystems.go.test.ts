import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { swt } from '../helpers/cli.js';
import { expectNothingLeftBehind, networksOfOurs, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { ABOVE, ABS, BASE_FILES, FIXED } from '../helpers/goClampx.js';

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

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
  expect(networksOfOurs()).toBe('');
});

describe('Go modules, no configuration (real containers, a real dependency from the module proxy)', () => {
  it('swt validate reports exactly the new test as F→P and S', async () => {
    const tests = join(repo.path, '..', `${base.slice(0, 8)}-go-tests.patch`);
    await writeFile(tests, ABOVE);
    const r = await swt('validate', '--repo', repo.path, '--base', base, '--head', head, '--tests', tests, '--json');
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out.tests.map((t: { id: string; transition: string }) => [t.id, t.transition])).toEqual([
      ['example.com/clampx.TestClampAbove', 'F2P'],
      ['example.com/clampx.TestClampInside', 'P2P'],
    ]);
    expect(out.success).toBe(true);
    expect(out.runner).toBe('go-test');
    expect(out.warnings).toEqual([]);
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
