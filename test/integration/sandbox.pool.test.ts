import { execFileSync } from 'node:child_process';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { DEFAULT_LIMITS, type Environment, type Sandbox } from '../../src/sandbox/types.js';
import { containersOfOurs, expectNothingLeftBehind, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

// The warm pool on real containers: idle run containers started ahead per environment image; a
// run takes one, gets its own overlay and command, and the container goes after that one run.
// An attacker's run leaves nothing for the next; one environment's idle containers never serve
// another's runs; they are locked down as a fresh run's; close() removes every one.

let sandbox: Sandbox;
let repoA: TempRepo;
let repoB: TempRepo;
let envA: Environment;
let envB: Environment;

beforeAll(async () => {
  sandbox = createDockerSandbox({ warmPool: { size: 2, idleMs: 600_000 } });
  repoA = createGitRepo({ 'a.txt': 'A1\n', 'gone.txt': 'x\n' });
  repoB = createGitRepo({ 'b.txt': 'B1\n' });
  envA = await sandbox.ensureEnvironment({ repo: repoA.path, rev: repoA.sha, baseImage: 'python:3.11', install: '' });
  envB = await sandbox.ensureEnvironment({ repo: repoB.path, rev: repoB.sha, baseImage: 'python:3.11', install: 'true' });
}, 900_000);

afterAll(async () => {
  await sandbox.close!();
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
});

/** This process's containers by image. */
function ours(): Array<{ id: string; image: string; running: boolean }> {
  const ids = containersOfOurs().split('\n').filter(Boolean);
  if (ids.length === 0) return [];
  const out = execFileSync('docker', ['inspect', '--format', '{{.Id}} {{.Config.Image}} {{.State.Running}}', ...ids], { encoding: 'utf8' });
  return out.trim().split('\n').map((l) => {
    const [id, image, running] = l.split(' ');
    return { id: id!, image: image!, running: running === 'true' };
  });
}

describe('warm pool', () => {
  it('after a first run, idle containers of its environment wait; the next run takes one and it is gone after the run', async () => {
    const state = { rev: repoA.sha, patches: [] };
    const first = await sandbox.run({ env: envA, repo: repoA.path, state, command: 'cat a.txt' });
    expect(first.output.trim()).toBe('A1');
    await sandbox.warmed!();
    const idle = ours();
    expect(idle.map((c) => [c.image, c.running])).toEqual([
      [envA.image, true],
      [envA.image, true],
    ]);
    const r = await sandbox.run({ env: envA, repo: repoA.path, state, command: 'echo "ran $(id -u)"; exit 3' });
    expect(r.exitCode).toBe(3);
    expect(r.output.trim()).toBe('ran 1000');
    await sandbox.warmed!();
    const after = ours().map((c) => c.id);
    // The one it took is gone; a new idle one took its place.
    expect(after).toHaveLength(2);
    expect(after.filter((id) => idle.some((c) => c.id === id))).toHaveLength(1);
  }, 300_000);

  it('attack: a run plants files and a background process in its container; the next run sees none of them', async () => {
    await sandbox.warmed!();
    const state = { rev: repoA.sha, patches: [] };
    // Processes counted from /proc: images built offline from Debian have no `ps`.
    const sleepers = 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done | grep -c "^sleep 300"';
    const plant = await sandbox.run({ env: envA, repo: repoA.path, state, command: `echo owned > /tmp/planted; echo owned > planted.txt; (sleep 300 &) ; sleep 0.5; ${sleepers}` });
    expect(plant.output.trim()).toBe('1');
    const next = await sandbox.run({ env: envA, repo: repoA.path, state, command: `ls /tmp/planted planted.txt 2>&1; ${sleepers}` });
    expect(next.output).toMatch(/No such file or directory[\s\S]*No such file or directory/);
    expect(next.output.trim().split('\n').pop()).toBe('0');
  }, 300_000);

  it("a run gets its own state's overlay (changed and deleted files) in a pooled container", async () => {
    await sandbox.warmed!();
    const patch = ['--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-A1', '+A2', '--- a/gone.txt', '+++ /dev/null', '@@ -1 +0,0 @@', '-x', ''].join('\n');
    const r = await sandbox.run({ env: envA, repo: repoA.path, state: { rev: repoA.sha, patches: [patch] }, command: 'cat a.txt; test -e gone.txt && echo present || echo deleted' });
    expect(r.output.trim().split('\n')).toEqual(['A2', 'deleted']);
  }, 300_000);

  it("attack: one environment's idle containers never serve another's runs", async () => {
    await sandbox.warmed!();
    const idleA = ours().filter((c) => c.image === envA.image).map((c) => c.id);
    expect(idleA.length).toBe(2);
    const r = await sandbox.run({ env: envB, repo: repoB.path, state: { rev: repoB.sha, patches: [] }, command: 'cat b.txt; ls a.txt 2>&1 || true' });
    expect(r.output).toContain('B1');
    expect(r.output).toMatch(/a\.txt'?: No such file/);
    // A's idle containers are all still there, untouched.
    expect(ours().filter((c) => c.image === envA.image).map((c) => c.id).sort()).toEqual([...idleA].sort());
  }, 300_000);

  it('an idle container is locked down as a fresh run: no network, the sandbox user, no capabilities, the limits', async () => {
    await sandbox.warmed!();
    const [c] = ours().filter((x) => x.image === envA.image);
    const info = JSON.parse(execFileSync('docker', ['inspect', c!.id], { encoding: 'utf8' }))[0];
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.Config.User).toBe('1000:1000');
    expect(info.Config.Env.some((e: string) => /TOKEN|SECRET/i.test(e))).toBe(false);
    expect(info.HostConfig.CapDrop).toContain('ALL');
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.HostConfig.Memory).toBe(DEFAULT_LIMITS.memoryBytes);
    expect(info.HostConfig.PidsLimit).toBe(DEFAULT_LIMITS.pids);
  }, 300_000);

  it('a pooled run past its time limit is killed and its container removed', async () => {
    await sandbox.warmed!();
    const before = ours().map((c) => c.id);
    const r = await sandbox.run({ env: envA, repo: repoA.path, state: { rev: repoA.sha, patches: [] }, command: 'sleep 60', limits: { timeoutMs: 1_500 } });
    expect(r.timedOut).toBe(true);
    await sandbox.warmed!();
    // Other limits are another pool: the killed container is gone, the others' idle ones untouched,
    // and two idle ones of these limits wait for the next such run.
    const now = ours();
    expect(now.every((c) => c.running)).toBe(true);
    expect(before.every((id) => now.some((c) => c.id === id))).toBe(true);
    expect(now).toHaveLength(before.length + 2);
  }, 300_000);

  it('close() removes every idle container', async () => {
    await sandbox.warmed!();
    expect(ours().length).toBeGreaterThan(0);
    await sandbox.close!();
    expect(ours()).toEqual([]);
    // A closed pool starts nothing more: a run still works, in its own container.
    const r = await sandbox.run({ env: envA, repo: repoA.path, state: { rev: repoA.sha, patches: [] }, command: 'cat a.txt' });
    expect(r.output.trim()).toBe('A1');
    await sandbox.warmed!();
    expect(ours()).toEqual([]);
  }, 300_000);
});
