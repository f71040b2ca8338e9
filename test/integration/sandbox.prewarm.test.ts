import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import { containersOfOurs, expectNothingLeftBehind, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

// Pre-warmed runs on real containers: a run takes the container started for it (a fresh one per
// run), the command never reads the go line, an untaken one is removed by its release; and the
// ecosystem warm-up lands in the environment image (Python bytecode checked by hash, so a run's
// overlaid file of the same size is still what runs).

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;

const MOD_V1 = 'def value():\n    return 1\n';
// Same size as MOD_V1: only a content check tells them apart.
const MOD_V2 = 'def value():\n    return 2\n';

beforeAll(async () => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({ 'mod.py': MOD_V1, 'test_mod.py': 'from mod import value\n\ndef test_value():\n    assert value() == 1\n' });
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '', warm: { after: 'python3 -m compileall -q -j 0 --invalidation-mode checked-hash .' } });
}, 900_000);

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
});

/** This process's containers: between runs, only pre-warmed ones. */
function containersOfEnv(): string[] {
  return containersOfOurs().split('\n').filter(Boolean);
}

describe('pre-warmed runs', () => {
  it('a run takes the container started for it; the command reads nothing from the go line; its output and status are its own', async () => {
    const state = { rev: repo.sha, patches: [] };
    const command = 'head -c 100 > /swt-out/stdin.txt; echo "ran $(id -u)"; exit 3';
    const release = sandbox.prewarm!({ env, repo: repo.path, state, command });
    const r = await sandbox.run({ env, repo: repo.path, state, command });
    expect(r.exitCode).toBe(3);
    expect(r.output.trim()).toBe('ran 1000');
    // stdin is /dev/null for the command: the line that started it is not there.
    expect(r.files['stdin.txt']).toBe('');
    await release(); // taken: nothing to remove
    // A second run with the same request is a cold one, in its own container.
    const again = await sandbox.run({ env, repo: repo.path, state, command });
    expect(again.exitCode).toBe(3);
  }, 300_000);

  it('an untaken pre-warmed container is removed by its release', async () => {
    const state = { rev: repo.sha, patches: [] };
    const release = sandbox.prewarm!({ env, repo: repo.path, state, command: 'echo never' });
    // Its container exists and waits (polled: the start is asynchronous on a loaded engine).
    for (let i = 0; i < 600 && containersOfEnv().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(containersOfEnv().length).toBe(1);
    await release();
    expect(containersOfEnv()).toEqual([]);
  }, 300_000);
});

describe('kept runs (a side\'s container kept for its own confirmation reruns)', () => {
  it('a rerun execs in the same container: the first command\'s /tmp and /testbed writes are there, its reports are not; release removes it', async () => {
    const state = { rev: repo.sha, patches: [] };
    const command = 'echo one > /tmp/cache.txt; echo first > /testbed/made.txt; echo r1 > /swt-out/report.txt; echo "ran $(id -u)"; exit 4';
    const release = sandbox.prewarm!({ env, repo: repo.path, state, command, keep: true });
    const r = await sandbox.run({ env, repo: repo.path, state, command, keep: true });
    await release();
    expect(r.exitCode).toBe(4);
    expect(r.output.trim()).toBe('ran 1000');
    expect(r.files['report.txt']).toBe('r1\n');
    expect(r.kept).toBeDefined();
    expect(containersOfEnv().length).toBe(1);
    const again = await r.kept!.rerun('cat /tmp/cache.txt /testbed/made.txt; ls /swt-out; echo r2 > /swt-out/other.txt');
    expect(again.exitCode).toBe(0);
    expect(again.output.trim()).toBe('one\nfirst');
    expect(again.files).toEqual({ 'other.txt': 'r2\n' });
    await r.kept!.release();
    await r.kept!.release();
    expect(containersOfEnv()).toEqual([]);
    await expect(r.kept!.rerun('true')).rejects.toThrow(/released/);
  }, 300_000);

  it('a command killed at its time limit ends the container: nothing is kept', async () => {
    const state = { rev: repo.sha, patches: [] };
    const r = await sandbox.run({ env, repo: repo.path, state, command: 'echo started; sleep 60', keep: true, limits: { timeoutMs: 3_000 } });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.output).toContain('started');
    expect(r.kept).toBeUndefined();
    expect(containersOfEnv()).toEqual([]);
  }, 300_000);

  it('a command killed for its memory is reported out of memory, and nothing is kept', async () => {
    const state = { rev: repo.sha, patches: [] };
    const r = await sandbox.run({ env, repo: repo.path, state, command: 'python3 -c "a = [bytearray(10**6) for _ in range(2000)]"', keep: true, limits: { memoryBytes: 256 * 1024 ** 2 } });
    expect(r.oomKilled).toBe(true);
    expect(r.kept).toBeUndefined();
    expect(containersOfEnv()).toEqual([]);
  }, 300_000);

  it('a background child that keeps the output open does not hold the run past its command', async () => {
    const state = { rev: repo.sha, patches: [] };
    const started = Date.now();
    const r = await sandbox.run({ env, repo: repo.path, state, command: '(sleep 120 &) ; echo done', keep: true });
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain('done');
    expect(Date.now() - started).toBeLessThan(60_000);
    await r.kept?.release();
    expect(containersOfEnv()).toEqual([]);
  }, 300_000);
});

describe('the ecosystem warm-up', () => {
  it('puts bytecode in the image, and a changed file of the same size still runs as changed', async () => {
    const state = { rev: repo.sha, patches: [] };
    const cached = await sandbox.run({ env, repo: repo.path, state, command: 'ls __pycache__' });
    expect(cached.output).toMatch(/mod\.cpython-\d+\.pyc/);
    const patch = ['diff --git a/mod.py b/mod.py', '--- a/mod.py', '+++ b/mod.py', '@@ -1,2 +1,2 @@', ' def value():', '-    return 1', '+    return 2', ''].join('\n');
    const r = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [patch] }, command: 'python3 -c "import mod; print(mod.value())"' });
    expect(r.output.trim()).toBe('2');
    expect(MOD_V2.length).toBe(MOD_V1.length);
  }, 300_000);
});
