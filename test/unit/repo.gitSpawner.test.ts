/** git started by the small helper process (gitSpawner): the same results as a direct start, stdout held back while unread, and nothing lost or left when the helper goes (real git). */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { catFileBatch, gitBaseEnv, runGit } from '../../src/repo/gitExec.js';
import { spawnGit, spawnerPid, spawnerReady, type GitChild } from '../../src/repo/gitSpawner.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

afterAll(cleanupGitRepos);

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

async function until(what: () => boolean, ms = 5_000): Promise<boolean> {
  for (const end = Date.now() + ms; !what() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  return what();
}

const hashed = (cwd: string, input: string) => execFileSync('git', ['hash-object', '--stdin'], { cwd, input, encoding: 'utf8' });

const closed = (c: GitChild) => new Promise<number | null>((r) => c.on('close', (code: number | null) => r(code)));

// An idle helper goes after 3 s here (10 s in the product): each test that needs it asks for it.
const IDLE_MS = 3_000;

beforeAll(async () => {
  expect(await spawnerReady(5_000, IDLE_MS)).toBe(true);
});

describe('git through the helper', () => {
  it('gives what a direct start gives: output, input, the exit code, stderr, and only the environment it is handed', async () => {
    const repo = createGitRepo({ 'a.txt': 'hello\n' });
    expect(await spawnerReady()).toBe(true);
    const viaHelper = await runGit(repo.path, ['hash-object', '--stdin'], { input: 'some bytes\n' });
    expect(spawnerPid()).toBeGreaterThan(0);
    expect(viaHelper.code).toBe(0);
    expect(viaHelper.stdout.toString().trim()).toBe(hashed(repo.path, 'some bytes\n').trim());

    const bad = await runGit(repo.path, ['rev-parse', '--verify', 'no-such-ref']);
    expect(bad.code).toBe(128);
    expect(bad.stderr).toMatch(/Needed a single revision/);

    const ident = await runGit(repo.path, ['var', 'GIT_AUTHOR_IDENT'], { env: { GIT_AUTHOR_NAME: 'Ada Lovelace', GIT_AUTHOR_EMAIL: 'ada@example.invalid' } });
    expect(ident.stdout.toString()).toMatch(/^Ada Lovelace <ada@example\.invalid> /);
    // The helper itself runs with no variables but node's channel: what git sees is only what this side sends.
    const env = readFileSync(`/proc/${spawnerPid()}/environ`, 'utf8').split('\0').filter(Boolean);
    expect(env.map((v) => v.split('=')[0]).sort()).toEqual(['NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE']);
  });

  it('many at once, each its own answer', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    const inputs = Array.from({ length: 24 }, (_, i) => `blob ${i}\n`.repeat(i + 1));
    const got = await Promise.all(inputs.map((input) => runGit(repo.path, ['hash-object', '--stdin'], { input })));
    const want = inputs.map((input) => hashed(repo.path, input).trim());
    expect(got.map((r) => r.stdout.toString().trim())).toEqual(want);
  });

  it("holds git's stdout back while it is not read (about a megabyte ahead), and hands over all of it once read", async () => {
    const big = Array.from({ length: 200_000 }, (_, i) => `line ${i} ${(i * 7919) % 100_003} of a file larger than what may wait\n`).join('');
    expect(big.length).toBeGreaterThan(10 * 1024 * 1024);
    const repo = createGitRepo({ 'big.txt': big });
    expect(await spawnerReady()).toBe(true);
    const child = spawnGit(['cat-file', 'blob', 'HEAD:big.txt'], { cwd: repo.path, env: gitBaseEnv() });
    child.stdin.end();
    const done = closed(child);
    // Unread: what arrives stops growing well short of the blob.
    let last = -1;
    await until(() => {
      const now = child.stdout.readableLength;
      const still = now > 0 && now === last;
      last = now;
      return still;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(child.stdout.readableLength).toBeGreaterThan(0);
    expect(child.stdout.readableLength).toBeLessThan(3 * 1024 * 1024);
    expect(child.exitCode).toBeNull();
    const parts: Buffer[] = [];
    for await (const c of child.stdout) parts.push(c as Buffer);
    expect(Buffer.concat(parts).toString()).toBe(big);
    expect(await done).toBe(0);
  });

  it('streams a cat-file batch as before, a missing object included', async () => {
    const repo = createGitRepo({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
    const got = [];
    for await (const b of catFileBatch(repo.path, ['HEAD:a.txt', 'HEAD:nope.txt', 'HEAD:b.txt'])) got.push([b.spec, b.content?.toString() ?? null]);
    expect(got).toEqual([
      ['HEAD:a.txt', 'alpha\n'],
      ['HEAD:nope.txt', null],
      ['HEAD:b.txt', 'beta\n'],
    ]);
  });

  it('kills git when asked', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    // cat-file --batch waits on its stdin, which stays open.
    const child = spawnGit(['cat-file', '--batch'], { cwd: repo.path, env: gitBaseEnv() });
    child.stderr.resume();
    child.stdout.resume();
    const done = new Promise<unknown[]>((r) => child.on('close', (...a: unknown[]) => r(a)));
    await new Promise((r) => setTimeout(r, 100));
    expect(child.kill('SIGKILL')).toBe(true);
    expect(await done).toEqual([null, 'SIGKILL']);
  });

  it('a git that cannot start is an error, as a direct start gives, and nothing stays pending', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    await expect(runGit(repo.path, ['status'], { env: { PATH: '/nonexistent' } })).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await runGit(repo.path, ['rev-parse', 'HEAD'])).code).toBe(0);
  });

  it("a Ctrl-C or SIGTERM aimed at the helper is not its: it stays, and git's calls go on", async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    expect(await spawnerReady()).toBe(true);
    const pid = spawnerPid()!;
    process.kill(pid, 'SIGTERM');
    process.kill(pid, 'SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(pid)).toBe(true);
    expect((await runGit(repo.path, ['rev-parse', 'HEAD'])).stdout.toString().trim()).toBe(repo.sha);
    expect(spawnerPid()).toBe(pid);
  });

  it('when the helper dies, what it ran ends with a clear error and its git goes too; the next call starts a new helper', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    expect(await spawnerReady()).toBe(true);
    const pid = spawnerPid()!;
    // A git that waits: stdin left open through spawnGit.
    const waiting = spawnGit(['cat-file', '--batch'], { cwd: repo.path, env: gitBaseEnv() });
    let stderr = '';
    waiting.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    waiting.stdout.resume();
    const done = closed(waiting);
    await new Promise((r) => setTimeout(r, 100));
    const gitPids = readdirSync('/proc')
      .filter((p: string) => /^\d+$/.test(p))
      .filter((p: string) => {
        try {
          const st = readFileSync(`/proc/${p}/stat`, 'utf8');
          return st.slice(st.lastIndexOf(')') + 2).split(' ')[1] === String(pid);
        } catch {
          return false;
        }
      })
      .map(Number);
    expect(gitPids.length).toBe(1);
    process.kill(pid, 'SIGKILL');
    expect(await done).toBeNull();
    expect(stderr).toMatch(/the process that starts git stopped \(SIGKILL\)/);
    // Its stdin closed with the helper: the orphaned git ends.
    expect(await until(() => !alive(gitPids[0]!))).toBe(true);
    expect(await spawnerReady()).toBe(true);
    expect(spawnerPid()).not.toBe(pid);
    const again = await runGit(repo.path, ['rev-parse', 'HEAD']);
    expect(again.stdout.toString().trim()).toBe(repo.sha);
  });

  it('a helper with nothing to do goes after a while (none is left behind), and the next call starts another', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    expect(await spawnerReady()).toBe(true);
    const pid = spawnerPid()!;
    await runGit(repo.path, ['rev-parse', 'HEAD']);
    expect(await until(() => !alive(pid), IDLE_MS + 3_000)).toBe(true);
    expect(spawnerPid()).toBeUndefined();
    // Started here while the new helper gets ready: the same answer.
    expect((await runGit(repo.path, ['rev-parse', 'HEAD'])).stdout.toString().trim()).toBe(repo.sha);
    expect(await spawnerReady()).toBe(true);
    expect(spawnerPid()).not.toBe(pid);
    expect((await runGit(repo.path, ['rev-parse', 'HEAD'])).stdout.toString().trim()).toBe(repo.sha);
  }, 20_000);
});
