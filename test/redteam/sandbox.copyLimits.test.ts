/**
 * Attacks on what enters a container before its command: a head whose tree is tiny in git objects
 * and huge checked out (many paths naming one blob). Every byte and file copied into a container
 * counts against the run's limits before it is copied, from git's object sizes alone; the copy
 * itself runs under the run's time limit and its signal. Real git repositories built here (nothing
 * checked out on the host), real containers; "no container" is read from the engine's events.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { DEFAULT_LIMITS, type Environment, type Sandbox } from '../../src/sandbox/types.js';
import { isSwtError } from '../../src/util/errors.js';
import { swt } from '../helpers/cli.js';
import { containersOfOurs, expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { commitSharedBlob, objectBytes } from '../helpers/sharedBlobTree.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
// The attacker's own figures: a 512 MiB disk limit, so 32,768 files.
const DISK_MIB = 512;
const limits = { diskBytes: DISK_MIB * MiB };
const TEST_PATCH = `diff --git a/tests/test_more.py b/tests/test_more.py
new file mode 100644
--- /dev/null
+++ b/tests/test_more.py
@@ -0,0 +1,4 @@
+from calc import add
+
+def test_more():
+    assert add(2, 2) == 4
`;

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;
/** 40 paths → one 99 MiB blob of zeros: 3.9 GiB checked out. */
let huge: string;
/** 100,000 paths → the empty blob. */
let many: string;
let scratch: string;

/** Containers of this process the engine created since `since` (seconds, with a fraction): read from its events. */
function containersCreatedSince(since: string): string[] {
  const out = execFileSync(
    'docker',
    ['events', '--since', since, '--until', String(Math.ceil(Date.now() / 1000) + 1), '--filter', 'type=container', '--filter', 'event=create', '--filter', `label=swt-bot.pid=${process.pid}`, '--format', '{{.Actor.ID}} {{index .Actor.Attributes "swt-bot.role"}} {{.Actor.Attributes.image}}'],
    { encoding: 'utf8' },
  );
  return out.split('\n').filter(Boolean);
}

const nowSeconds = () => (Date.now() / 1000).toFixed(3);

beforeAll(async () => {
  sandbox = createDockerSandbox({ ceilings: { diskBytes: 8 * GiB } });
  repo = createGitRepo({ 'calc.py': 'def add(a, b):\n    return a + b\n', 'tests/test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n' });
  const before = objectBytes(repo);
  huge = commitSharedBlob(repo, { bytes: 99 * MiB, paths: Array.from({ length: 40 }, (_, i) => `assets/blob-${String(i).padStart(2, '0')}.bin`) }).sha;
  const hugeObjects = objectBytes(repo) - before;
  many = commitSharedBlob(repo, { bytes: 0, paths: Array.from({ length: 100_000 }, (_, i) => `flood/f${i}`) }).sha;
  console.log(`the attacker's objects: ${Math.round(hugeObjects / 1024)} KiB for the 3.9 GiB head, ${Math.round((objectBytes(repo) - before - hugeObjects) / 1024)} KiB for the 100,000-file head`);
  // Under 1 MB of git objects each.
  expect(hugeObjects).toBeLessThan(1024 ** 2);
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' });
  scratch = mkdtempSync(join(tmpdir(), `swt-redteam-copy-${process.pid}-`));
  writeFileSync(join(scratch, 'tests.diff'), TEST_PATCH);
}, 600_000);

afterAll(async () => {
  await sandbox?.close?.();
  await removeEnvImagesBuiltFrom(commitsMade());
  rmSync(scratch, { recursive: true, force: true });
  cleanupGitRepos();
  expectNothingLeftBehind();
});

describe('a head that is small in git and huge checked out', () => {
  it('attack: `swt validate` of a head whose 40 paths name one 99 MiB blob of zeros (3.9 GiB checked out) is refused in seconds, with the reason', async () => {
    const since = nowSeconds();
    const t0 = Date.now();
    const r = await swt('validate', '--repo', repo.path, '--base', repo.sha, '--head', huge, '--tests', join(scratch, 'tests.diff'), '--image', 'python:3.11', '--install', '', '--test-cmd', 'python -m pytest -q {files}', '--disk', String(DISK_MIB));
    const ms = Date.now() - t0;
    console.log(`3.9 GiB head: refused in ${ms} ms: ${r.stderr.trim()}`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("head's files to copy into the run container are 3.9 GiB (41 files and directories), over the run's disk limit of 512 MiB");
    expect(ms).toBeLessThan(30_000);
    // Refused before any container of the head: the only one made is the install of base's own
    // environment (the CLI's, with the ecosystem's warm-up, is not the one built above).
    expect(containersCreatedSince(since).filter((c) => c.split(' ')[1] !== 'install')).toEqual([]);
    expect(containersOfOurs()).toBe('');
  });

  it('attack: validating a head whose 100,000 paths name the empty blob (0 bytes, 100,000 files) is refused at the file limit', async () => {
    const since = nowSeconds();
    const t0 = Date.now();
    const err = await validate(sandbox, { repo: repo.path, base: repo.sha, head: many, testPatch: TEST_PATCH, image: 'python:3.11', install: '', testCmd: 'python -m pytest -q {files}', limits }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const ms = Date.now() - t0;
    console.log(`100,000-file head: refused in ${ms} ms: ${(err as Error)?.message}`);
    expect(isSwtError(err, 'STATE_TOO_LARGE')).toBe(true);
    expect((err as Error).message).toBe("head's files to copy into the run container are 100001 files and directories, over the run's file limit of 32768 (one per 16 KiB of its 512 MiB disk limit)");
    expect(ms).toBeLessThan(30_000);
    expect(containersCreatedSince(since)).toEqual([]);
  });

  it('attack: a run, a session and an install of the 3.9 GiB head are each refused before any container is created', async () => {
    const since = nowSeconds();
    const t0 = Date.now();
    const state = { rev: huge, patches: [] };
    const run = await sandbox.run({ env, repo: repo.path, state, command: 'true', limits }).catch((e: unknown) => e);
    const session = await sandbox.openSession({ env, repo: repo.path, state, limits }).catch((e: unknown) => e);
    // An install's own limits (here 512 MiB of disk): the whole tree goes into its container. Its
    // own cache scope, so base's environment (the same manifests) is not simply reused.
    const small = createDockerSandbox({ installLimits: { diskBytes: DISK_MIB * MiB } });
    const install = await small.ensureEnvironment({ repo: repo.path, rev: huge, baseImage: 'python:3.11', install: '', cacheScope: `copy-limits-${process.pid}` }).catch((e: unknown) => e);
    const ms = Date.now() - t0;
    for (const e of [run, session, install]) expect(isSwtError(e, 'STATE_TOO_LARGE')).toBe(true);
    const short = huge.slice(0, 12);
    expect((run as Error).message).toBe(`the files of ${short} to copy into the run container are 3.9 GiB (41 files and directories), over the run's disk limit of 512 MiB`);
    expect((session as Error).message).toBe(`the files of ${short} to copy into the session container are 3.9 GiB (41 files and directories), over the session's disk limit of 512 MiB`);
    expect((install as Error).message).toMatch(new RegExp(`^the files of ${short} to copy into the install container are 3\\.9 GiB \\(4[45] files and directories\\), over the install's disk limit of 512 MiB$`));
    expect(ms).toBeLessThan(30_000);
    expect(containersCreatedSince(since)).toEqual([]);
  });
});

describe('the copy runs under the run’s time limit and signal', () => {
  // Under the disk limit (8 GiB), so only the copy's deadline or the signal can end it early.
  const roomy = { diskBytes: 8 * GiB };

  it('attack: copying the 3.9 GiB head into a run with a 3 s time limit ends at the time limit, and the container goes', async () => {
    const t0 = Date.now();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const watch = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
    const err = await sandbox.run({ env, repo: repo.path, state: { rev: huge, patches: [] }, command: 'true', limits: { ...roomy, timeoutMs: 3_000 } }).catch((e: unknown) => e);
    clearInterval(watch);
    const ms = Date.now() - t0;
    console.log(`3.9 GiB copy under a 3 s limit: ended after ${ms} ms; this process grew by ${Math.round((peak - rss0) / MiB)} MiB`);
    expect(isSwtError(err, 'STATE_TOO_LARGE')).toBe(true);
    expect((err as Error).message).toBe(`copying the files of ${huge.slice(0, 12)} into the container took longer than the run's time limit of 3 s`);
    expect(ms).toBeLessThan(20_000);
    // Blobs stream: the process never holds a 99 MiB blob, let alone several.
    expect(peak - rss0).toBeLessThan(256 * MiB);
    expect(containersOfOurs()).toBe('');
  });

  it('attack: a cancelled run (a newer push) stops its 3.9 GiB copy at once, and the container goes', async () => {
    const ctl = new AbortController();
    const since = nowSeconds();
    const p = sandbox.run({ env, repo: repo.path, state: { rev: huge, patches: [] }, command: 'true', limits: roomy, signal: ctl.signal }).catch((e: unknown) => e);
    // Abort once the container exists (the copy is under way).
    for (const end = Date.now() + 20_000; !containersOfOurs() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    expect(containersCreatedSince(since)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_000));
    const t0 = Date.now();
    ctl.abort();
    const err = await p;
    const ms = Date.now() - t0;
    console.log(`cancelled 3.9 GiB copy: ended ${ms} ms after the abort`);
    expect(isSwtError(err, 'CANCELLED')).toBe(true);
    expect(ms).toBeLessThan(10_000);
    expect(containersOfOurs()).toBe('');
  });

  it('attack: SIGTERM to `swt validate` while it copies the 3.9 GiB head ends it promptly and removes its containers', async () => {
    const child = spawn(process.execPath, ['dist/cli/bin.js', '--quiet', 'validate', '--repo', repo.path, '--base', repo.sha, '--head', huge, '--tests', join(scratch, 'tests.diff'), '--image', 'python:3.11', '--install', '', '--test-cmd', 'python -m pytest -q {files}', '--disk', '8192'], {
      env: { ...process.env, SWT_MAX_DISK_MIB: '8192' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    // Its head's container exists once the copy has started.
    const pid = child.pid!;
    for (const end = Date.now() + 60_000; Date.now() < end && containersOfOurs(pid).split('\n').filter(Boolean).length < 2; ) await new Promise((r) => setTimeout(r, 200));
    expect(containersOfOurs(pid)).not.toBe('');
    await new Promise((r) => setTimeout(r, 1_000));
    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    const ms = Date.now() - t0;
    console.log(`SIGTERM during the 3.9 GiB copy: exited ${code} after ${ms} ms`);
    expect(code).toBe(143);
    expect(ms).toBeLessThan(15_000);
    expect(containersOfOurs(pid)).toBe('');
  });
});

// The defaults still copy a normal state: a run of base's own files passes its limits.
describe('a state within the limits', () => {
  it('is copied and run as before', async () => {
    const r = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [TEST_PATCH] }, command: 'cat tests/test_more.py', limits: { ...limits, timeoutMs: DEFAULT_LIMITS.timeoutMs } });
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain('assert add(2, 2) == 4');
  });
});
