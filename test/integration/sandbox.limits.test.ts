import { execFileSync } from 'node:child_process';
import { compareRuns } from '../../src/harness/classify.js';
import { renderText } from '../../src/harness/render.js';
import { runTests } from '../../src/harness/runTests.js';
import { runnerFromCommand } from '../../src/harness/runners.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { isSwtError } from '../../src/util/errors.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import { containersOfOurs, containersOfOursOnceRetired, expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { startDecoy } from '../helpers/decoy.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

// Real containers on a tiny python:3.11 environment: timeouts, pids, memory, disk, files, network, privileges.

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;

beforeAll(async () => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({ 'test_ok.py': 'def test_ok():\n    assert True\n' });
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' });
}, 600_000);

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

const state = () => ({ rev: repo.sha, patches: [] });

describe('sandbox limits on real containers', () => {
  it('keeps test runs on the CPUs SWT_CPUSET_CPUS lists, leaving the others to the App', async () => {
    const saved = process.env.SWT_CPUSET_CPUS;
    process.env.SWT_CPUSET_CPUS = '0';
    try {
      // Read when the sandbox is made, as the operator's other settings.
      const pinned = createDockerSandbox();
      const r = await pinned.run({ env, repo: repo.path, state: state(), command: 'nproc; python3 -c "import os; print(sorted(os.sched_getaffinity(0)))"' });
      expect(r.exitCode).toBe(0);
      expect(r.output.trim().split('\n')).toEqual(['1', '[0]']);
    } finally {
      if (saved === undefined) delete process.env.SWT_CPUSET_CPUS;
      else process.env.SWT_CPUSET_CPUS = saved;
    }
  });

  it('a command that exits 137 or 143 by itself gives that result; a container stopped from outside is INTERRUPTED', async () => {
    const killed = await sandbox.run({ env, repo: repo.path, state: state(), command: 'echo before; kill -9 $$' });
    expect(killed).toMatchObject({ exitCode: 137, timedOut: false, oomKilled: false });
    expect(killed.output).toContain('before');
    expect(killed.files).toEqual({});
    expect((await sandbox.run({ env, repo: repo.path, state: state(), command: 'exit 143' })).exitCode).toBe(143);

    const running = sandbox.run({ env, repo: repo.path, state: state(), command: 'echo started; sleep 600' });
    let id = '';
    for (let i = 0; i < 300 && !id; i++) {
      id = containersOfOurs(process.pid, { running: true });
      if (!id) await new Promise((r) => setTimeout(r, 100));
    }
    execFileSync('docker', ['kill', id]);
    const e = await running.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isSwtError(e, 'INTERRUPTED')).toBe(true);
    expect((e as Error).message).toBe('the test container was stopped from outside the run (exit 137: the Docker engine restarting, or someone stopping it)');
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('kills a command that sleeps forever at the wall-clock timeout', async () => {
    const started = Date.now();
    const r = await sandbox.run({ env, repo: repo.path, state: state(), command: 'echo started; sleep 100000', limits: { timeoutMs: 3000 } });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.output).toContain('started');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('stops a run at once when its caller aborts (a newer push supersedes the check)', async () => {
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 1500);
    let err: unknown;
    try {
      await sandbox.run({ env, repo: repo.path, state: state(), command: 'echo started; sleep 100000', limits: { timeoutMs: 120_000 }, signal: ac.signal });
    } catch (e) {
      err = e;
    }
    expect(isSwtError(err, 'CANCELLED')).toBe(true);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(containersOfOursOnceRetired()).toBe('');
    // Aborted before it starts: no container at all.
    await expect(sandbox.run({ env, repo: repo.path, state: state(), command: 'true', signal: ac.signal })).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('stops forking at the pids limit', async () => {
    const script = [
      'import os, time',
      'n = 0',
      'while True:',
      '    try:',
      '        pid = os.fork()',
      '    except OSError as e:',
      '        print("fork refused after", n, "children:", e.strerror, flush=True)',
      '        break',
      '    if pid == 0:',
      '        time.sleep(60)',
      '        os._exit(0)',
      '    n += 1',
    ].join('\n');
    const r = await sandbox.run({ env, repo: repo.path, state: state(), command: `python3 -c '${script}'`, limits: { pids: 64, timeoutMs: 60_000 } });
    const m = /fork refused after (\d+) children/.exec(r.output);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(64);
    expect(r.timedOut).toBe(false);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('contains a fork bomb: the run ends at the timeout and the container is gone', async () => {
    const bomb = ['import os', 'while True:', '    try:', '        os.fork()', '    except OSError:', '        pass'].join('\n');
    const started = Date.now();
    const r = await sandbox.run({ env, repo: repo.path, state: state(), command: `python3 -c '${bomb}'`, limits: { pids: 128, timeoutMs: 8000 } });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(containersOfOursOnceRetired()).toBe('');
    // The host still forks and the engine still runs containers.
    const after = await sandbox.run({ env, repo: repo.path, state: state(), command: 'echo alive', limits: { timeoutMs: 30_000 } });
    expect(after.exitCode).toBe(0);
    expect(after.output).toContain('alive');
  });

  it('stops a memory hog at the memory limit', async () => {
    const hog = ['a = []', 'while True:', '    a.append(b"x" * (16 * 1024 * 1024))'].join('\n');
    const r = await sandbox.run({ env, repo: repo.path, state: state(), command: `python3 -c '${hog}'`, limits: { memoryBytes: 128 * 1024 ** 2, timeoutMs: 60_000 } });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).not.toBe(0);
    expect(r.oomKilled || r.exitCode === 137 || /MemoryError/.test(r.output)).toBe(true);
  });

  it('has no network: a decoy that answers other containers cannot be reached from a run', async () => {
    const decoy = await startDecoy();
    try {
      const ip = decoy.ips[0];
      const probe = [
        'import socket',
        'try:',
        `    socket.create_connection(("${ip}", ${decoy.port}), timeout=5).close()`,
        '    print("CONNECTED")',
        'except Exception as e:',
        '    print("BLOCKED", type(e).__name__)',
      ].join('\n');
      const r = await sandbox.run({ env, repo: repo.path, state: state(), command: `python3 -c '${probe}'; ls /sys/class/net`, limits: { timeoutMs: 60_000 } });
      expect(r.exitCode).toBe(0);
      expect(r.output).toMatch(/^BLOCKED \w+$/m);
      expect(r.output).not.toContain('CONNECTED');
      // Loopback is the only interface.
      expect(r.output.trim().split('\n').pop()).toBe('lo');
      // The decoy saw its control request only.
      expect(await decoy.requests()).toHaveLength(1);
    } finally {
      await decoy.stop();
    }
  });

  it('runs as uid 1000 with no capabilities, no new privileges and no host variables', async () => {
    process.env.SWT_SANDBOX_TEST_TOKEN = 'sandbox-secret-value-42';
    try {
      const r = await sandbox.run({
        env,
        repo: repo.path,
        state: state(),
        command: 'id -u; id -g; grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs):" /proc/self/status; env',
        limits: { timeoutMs: 30_000 },
      });
      expect(r.exitCode).toBe(0);
      const lines = r.output.split('\n');
      expect(lines[0]).toBe('1000');
      expect(lines[1]).toBe('1000');
      expect(r.output).toMatch(/CapEff:\s+0000000000000000/);
      expect(r.output).toMatch(/CapPrm:\s+0000000000000000/);
      expect(r.output).toMatch(/CapBnd:\s+0000000000000000/);
      expect(r.output).toMatch(/NoNewPrivs:\s+1/);
      expect(r.output).not.toContain('sandbox-secret-value-42');
      expect(r.output).not.toContain('SWT_SANDBOX_TEST_TOKEN');
    } finally {
      delete process.env.SWT_SANDBOX_TEST_TOKEN;
    }
  });

  it('kills a run writing many files without end at its disk limit ("disk limit"); the container is gone', async () => {
    const started = Date.now();
    const fill = 'i=0; while :; do head -c 8388608 /dev/zero > fill-$i || exit 9; i=$((i+1)); done';
    const r = await sandbox.run({ env, repo: repo.path, state: state(), command: fill, limits: { diskBytes: 256 * 1024 ** 2, timeoutMs: 120_000 } });
    expect(r.diskLimit).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBeNull();
    expect(r.output).toContain('killed: disk limit, wrote more than 256 MiB');
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('stops one file growing without end at the same limit (fsize), and reports it as the disk limit', async () => {
    const r = await sandbox.run({ env, repo: repo.path, state: state(), command: 'cat /dev/zero > big; echo "cat exited $?"', limits: { diskBytes: 128 * 1024 ** 2, timeoutMs: 120_000 } });
    expect(r.diskLimit).toBe(true);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('a test writing without end is a "disk limit" failure in the results and the table', async () => {
    const test = ['def test_fills_the_disk():', '    i = 0', '    while True:', "        open(f'junk-{i}', 'wb').write(b'x' * (8 << 20))", '        i += 1', '', 'def test_fine():', '    assert True', ''];
    const patch = ['diff --git a/test_fill.py b/test_fill.py', 'new file mode 100644', '--- /dev/null', '+++ b/test_fill.py', `@@ -0,0 +1,${test.length} @@`, ...test.map((l) => `+${l}`), ''].join('\n');
    const runner = runnerFromCommand('python3 -m pytest -p no:cacheprovider {files}');
    const result = await runTests(sandbox, { env, repo: repo.path, state: { rev: repo.sha, patches: [patch] }, runner, files: ['test_fill.py'], limits: { diskBytes: 200 * 1024 ** 2, timeoutMs: 120_000 } });
    expect(result.diskLimit).toBe(true);
    expect(result.fileErrors).toEqual([expect.objectContaining({ file: 'test_fill.py', kind: 'disk' })]);
    const ok = await runTests(sandbox, { env, repo: repo.path, state: { rev: repo.sha, patches: [] }, runner, files: ['test_ok.py'] });
    const verdict = compareRuns([result], [ok]);
    expect(verdict.tests.find((t) => t.id.startsWith('test_fill.py'))?.baseFailure?.kind).toBe('disk');
    expect(renderText(verdict)).toContain('fail (disk limit)');
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('gives every run a bounded tmpfs /tmp and a nofile limit', async () => {
    const r = await sandbox.run({
      env,
      repo: repo.path,
      state: state(),
      // head's message on stdout too: the engine's stdout and stderr streams keep no order between them (CI once read "tmp write 1" inside it).
      command: 'ulimit -n; df -k /tmp | tail -1 | awk \'{print $2}\'; { head -c 100000000 /dev/zero > /tmp/x; } 2>&1; echo "tmp write $?"',
      limits: { memoryBytes: 128 * 1024 ** 2, timeoutMs: 60_000 },
    });
    expect({ oomKilled: r.oomKilled, exitCode: r.exitCode }).toEqual({ oomKilled: false, exitCode: 0 });
    const [nofile, tmpKib] = r.output.trim().split('\n');
    expect(nofile).toBe('8192');
    // Half the memory; writing past it fails with ENOSPC instead of eating the engine's disk.
    expect(Number(tmpKib)).toBe(64 * 1024);
    expect(r.output).toContain('No space left on device');
    expect(r.output).toMatch(/^tmp write [1-9]/m);
  });
});
