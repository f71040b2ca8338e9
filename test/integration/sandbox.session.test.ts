import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { materialize } from '../../src/repo/git.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { startDecoy } from '../helpers/decoy.js';
import { cleanupGitRepos, commitsMade, createBareMirror, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

// Runs overlay repository states (revisions + patches) onto the environment; sessions edit and diff.

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;
/** The first commit (tests commit more on top). */
let base: string;

const calc = 'def add(a, b):\n    return a - b\n';
const test = 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n';

beforeAll(async () => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({ 'calc.py': calc, 'tests/test_calc.py': test, 'old/obsolete.txt': 'bye\n', 'run.sh': '#!/bin/sh\necho run-ok\n' });
  symlinkSync('calc.py', join(repo.path, 'link.py'));
  repo.git('add', 'link.py');
  base = repo.commit({}, 'a symlink');
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: base, baseImage: 'python:3.11', install: '' });
}, 600_000);

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

const fixPatch = [
  'diff --git a/calc.py b/calc.py',
  '--- a/calc.py',
  '+++ b/calc.py',
  '@@ -1,2 +1,2 @@',
  ' def add(a, b):',
  '-    return a - b',
  '+    return a + b',
  '',
].join('\n');

describe('runs on repository states', () => {
  it('runs pytest: fails on the base state, passes with the fix patch, and collects /swt-out', async () => {
    const cmd = 'python -m pytest -q --junitxml=/swt-out/junit.xml tests';
    const before = await sandbox.run({ env, repo: repo.path, state: { rev: base, patches: [] }, command: cmd });
    expect(before.exitCode).toBe(1);
    expect(before.output).toContain('1 failed');
    expect(before.files['junit.xml']).toContain('<testsuite');
    const after = await sandbox.run({ env, repo: repo.path, state: { rev: base, patches: [fixPatch], patchNames: ['code patch'] }, command: cmd });
    expect(after.exitCode).toBe(0);
    expect(after.output).toContain('1 passed');
    expect(after.files['junit.xml']).toContain('failures="0"');
  });

  it('overlays only what differs from the snapshot: added, modified, deleted and executable files, from a bare mirror too', async () => {
    const head = repo.commit({ 'old/obsolete.txt': null, 'new/dir/added.txt': 'hello\n', 'calc.py': 'def add(a, b):\n    return a + b\n' }, 'head');
    expect(head).not.toBe(base);
    const mirror = createBareMirror(repo);
    const cmd = 'cat new/dir/added.txt; test -e old/obsolete.txt && echo still-there || echo deleted; ./run.sh; stat -c "%u:%g" new/dir new/dir/added.txt; touch new/dir/writable && echo writable';
    for (const path of [repo.path, mirror.path]) {
      const r = await sandbox.run({ env, repo: path, state: { rev: head, patches: [] }, command: cmd });
      expect(r.exitCode).toBe(0);
      expect(r.output.split('\n')).toEqual(['hello', 'deleted', 'run-ok', '1000:1000', '1000:1000', 'writable', '']);
    }
  });

  it('materialises a state into a throwaway checkout and removes it', async () => {
    const { dir, cleanup } = await materialize(repo.path, { rev: base, patches: [fixPatch] });
    try {
      expect(readFileSync(join(dir, 'calc.py'), 'utf8')).toContain('return a + b');
      expect(existsSync(join(dir, 'tests/test_calc.py'))).toBe(true);
    } finally {
      await cleanup();
    }
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(join(repo.path, 'calc.py'), 'utf8')).toBe('def add(a, b):\n    return a + b\n');
  });
});

describe('sessions', () => {
  it('execs, reads and writes files, and diffs every change as a patch git can apply', async () => {
    const state = { rev: base, patches: [fixPatch] };
    const decoy = await startDecoy();
    const session = await sandbox.openSession({ env, repo: repo.path, state }).catch(async (e: unknown) => {
      await decoy.stop();
      throw e;
    });
    try {
      const id = await session.exec(`id -u; cat /proc/self/status | grep NoNewPrivs; python -c "import socket; socket.create_connection(('${decoy.ips[0]}', ${decoy.port}), 3)" 2>&1 | tail -1`);
      expect(id.exitCode).toBe(0);
      // No network: the decoy, which answers other containers, cannot be reached; it logs its control request only.
      expect(id.output).toMatch(/^1000\nNoNewPrivs:\s+1\n.*(unreachable|Errno)/);
      expect(await decoy.requests()).toHaveLength(1);
      expect(await session.readFile('calc.py')).toContain('return a + b');

      await session.writeFile('tests/test_more.py', 'def test_more():\n    assert True\n');
      await session.writeFile('calc.py', 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n');
      const ran = await session.exec('python -m pytest -q tests 2>&1 | tail -1; rm run.sh; printf "no newline" > notes.txt; mkdir -p build && echo x > __pycache__.txt');
      expect(ran.output).toContain('2 passed');

      const diff = await session.diff();
      expect(diff).toContain('diff --git a/tests/test_more.py b/tests/test_more.py\nnew file mode 100644');
      expect(diff).toContain('+def sub(a, b):');
      expect(diff).toContain('diff --git a/run.sh b/run.sh\ndeleted file mode');
      expect(diff).toContain('\\ No newline at end of file');
      expect(diff).not.toContain('.pytest_cache');
      expect(diff).not.toContain('__pycache__/');

      // The diff applies to the session's starting state and reproduces the container's files.
      const { dir, cleanup } = await materialize(repo.path, state);
      try {
        writeFileSync(join(dir, 'session.diff'), diff);
        execFileSync('git', ['apply', '--check', 'session.diff'], { cwd: dir });
        execFileSync('git', ['apply', 'session.diff'], { cwd: dir });
        expect(readFileSync(join(dir, 'calc.py'), 'utf8')).toBe(await session.readFile('calc.py'));
        expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('no newline');
        expect(existsSync(join(dir, 'run.sh'))).toBe(false);
      } finally {
        await cleanup();
      }
    } finally {
      await session.close();
      await decoy.stop();
    }
  });

  it('writes files as the sandbox user (keeping an executable\'s mode) and reads through symlinks', async () => {
    const session = await sandbox.openSession({ env, repo: repo.path, state: { rev: base, patches: [] } });
    try {
      await session.writeFile('run.sh', '#!/bin/sh\necho rewritten\n');
      await session.writeFile('deep/new/dir/file.txt', 'x\n');
      const r = await session.exec('./run.sh; stat -c "%a %u" run.sh deep/new/dir deep/new/dir/file.txt');
      expect(r.output).toBe('rewritten\n755 1000\n755 1000\n644 1000\n');
      expect(await session.readFile('link.py')).toBe(calc);
      const diff = await session.diff();
      expect(diff).toContain('+echo rewritten');
      expect(diff).toContain('diff --git a/deep/new/dir/file.txt b/deep/new/dir/file.txt\nnew file mode 100644');
      expect(diff).not.toContain('link.py');
    } finally {
      await session.close();
    }
  });

  it('kills an exec (and what it started) at its timeout, and the session goes on', async () => {
    const session = await sandbox.openSession({ env, repo: repo.path, state: { rev: base, patches: [] } });
    try {
      const started = Date.now();
      const r = await session.exec('sleep 1000 & sleep 1000; echo never', { timeoutMs: 2000 });
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).toBeNull();
      expect(r.output).not.toContain('never');
      expect(Date.now() - started).toBeLessThan(15_000);
      const ps = await session.exec('ls /proc | grep -E "^[0-9]+$" | while read p; do cat /proc/$p/cmdline 2>/dev/null | tr "\\0" " "; echo; done | grep -c "^sleep 1000" || true');
      expect(ps.output.trim()).toBe('0');
      const ok = await session.exec('echo still-alive');
      expect(ok.output).toBe('still-alive\n');
    } finally {
      await session.close();
    }
  });
});
