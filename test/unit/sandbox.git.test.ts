import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tarStream from 'tar-stream';
import { listFiles, openRepo, openState, overlayTar, planStateOverlay, readFileAt, resolveRev } from '../../src/repo/git.js';
import { changedFiles } from '../../src/repo/objects.js';
import { withFileLock } from '../../src/util/lock.js';
import { tempPrefix } from '../../src/util/tempDirs.js';
import { isSwtError } from '../../src/util/errors.js';
import { cleanupGitRepos, createBareMirror, createGitRepo, leftoverGitRepos } from '../helpers/gitRepo.js';

// Git workspaces on tiny temporary repositories (host git only, no Docker).

afterAll(() => {
  cleanupGitRepos();
  expect(leftoverGitRepos()).toEqual([]);
  expect(readdirSync(tmpdir()).filter((n) => n.startsWith(tempPrefix()))).toEqual([]);
});

function objectCount(gitDir: string): number {
  return execFileSync('git', ['count-objects', '-v'], { cwd: gitDir, encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith('count:') || l.startsWith('in-pack:'))
    .reduce((n, l) => n + Number(l.split(':')[1]), 0);
}

async function tarEntries(stream: NodeJS.ReadableStream) {
  const out: Array<{ name: string; type: string; mode: number; uid: number; gid: number; linkname?: string; body: string }> = [];
  const extract = tarStream.extract();
  (stream as unknown as NodeJS.ReadableStream).pipe(extract as unknown as NodeJS.WritableStream);
  for await (const e of extract) {
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    out.push({ name: e.header.name, type: e.header.type, mode: e.header.mode, uid: e.header.uid, gid: e.header.gid, linkname: e.header.linkname || undefined, body: Buffer.concat(chunks).toString() });
  }
  return out;
}

describe('git workspaces', () => {
  it('opens working trees (from a subdirectory too) and bare mirrors', async () => {
    const repo = createGitRepo({ 'src/a.py': 'a = 1\n' });
    const r = await openRepo(join(repo.path, 'src'));
    expect(r.path).toBe(execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo.path, encoding: 'utf8' }).trim());
    expect(r.bare).toBe(false);
    const mirror = createBareMirror(repo);
    const m = await openRepo(mirror.path);
    expect(m.bare).toBe(true);
    expect(await resolveRev(m, 'main')).toBe(repo.sha);
    expect(await listFiles(mirror.path, 'main')).toEqual(['src/a.py']);
    expect(await readFileAt(repo.path, 'HEAD', 'src/a.py')).toBe('a = 1\n');
    let err: unknown;
    try {
      await readFileAt(repo.path, 'HEAD', 'missing.txt');
    } catch (e) {
      err = e;
    }
    expect(isSwtError(err, 'BAD_INPUT')).toBe(true);
  });

  it('materialises a state as a tree without writing into the repository', async () => {
    const repo = createGitRepo({ 'a.txt': 'one\n', 'gone.txt': 'bye\n' });
    const before = objectCount(repo.path);
    const patch = [
      'diff --git a/a.txt b/a.txt',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1 +1 @@',
      '-one',
      '+two',
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-bye',
      'diff --git a/bin/run b/bin/run',
      'new file mode 100755',
      '--- /dev/null',
      '+++ b/bin/run',
      '@@ -0,0 +1 @@',
      '+#!/bin/sh',
      '',
    ].join('\n');
    const st = await openState(repo.path, { rev: repo.sha, patches: [patch] });
    try {
      const changes = await changedFiles(st.repo, `${repo.sha}^{tree}`, st.tree, st.env);
      expect(changes.map((c) => `${c.status} ${c.path} ${c.mode}`).sort()).toEqual(['A bin/run 100755', 'D gone.txt 000000', 'M a.txt 100644']);
      const plan = await planStateOverlay(st, repo.sha);
      expect(plan.delete).toEqual(['gone.txt']);
      const entries = await tarEntries(overlayTar(st.repo, plan, { env: st.env }) as unknown as NodeJS.ReadableStream);
      expect(entries.map((e) => [e.name, e.type, e.mode.toString(8), e.uid, e.gid, e.body])).toEqual([
        ['bin', 'directory', '755', 1000, 1000, ''],
        ['a.txt', 'file', '644', 1000, 1000, 'two\n'],
        ['bin/run', 'file', '755', 1000, 1000, '#!/bin/sh\n'],
      ]);
    } finally {
      await st.dispose();
    }
    expect(objectCount(repo.path)).toBe(before);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('archives a full snapshot (from the empty tree) with symlinks kept as symlinks', async () => {
    const repo = createGitRepo({ 'dir/file.txt': 'content\n' });
    symlinkSync('dir/file.txt', join(repo.path, 'link'));
    repo.git('add', 'link');
    const sha = repo.commit({}, 'link');
    const st = await openState(repo.path, { rev: sha, patches: [] });
    const plan = await planStateOverlay(st, '');
    const entries = await tarEntries(overlayTar(st.repo, plan) as unknown as NodeJS.ReadableStream);
    expect(entries.map((e) => [e.name, e.type, e.linkname ?? e.body])).toEqual([
      ['dir', 'directory', ''],
      ['dir/file.txt', 'file', 'content\n'],
      ['link', 'symlink', 'dir/file.txt'],
    ]);
    await st.dispose();
  });
});

describe('file locks', () => {
  it('lets one holder in at a time and tells the waiter it waits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swt-locktest-'));
    const saved = process.env.SWT_CACHE_DIR;
    process.env.SWT_CACHE_DIR = dir;
    try {
      const events: string[] = [];
      let waited = 0;
      const holder = (name: string) =>
        withFileLock(
          'same-image',
          async () => {
            events.push(`in ${name}`);
            await new Promise((r) => setTimeout(r, 300));
            events.push(`out ${name}`);
          },
          { onWait: () => waited++ },
        );
      await Promise.all([holder('a'), holder('b')]);
      expect(events).toHaveLength(4);
      expect(events[0]!.startsWith('in')).toBe(true);
      expect(events[1]!.startsWith('out')).toBe(true);
      expect(events[0]!.slice(3)).toBe(events[1]!.slice(4));
      expect(waited).toBe(1);
      expect(readdirSync(join(dir, 'locks'))).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.SWT_CACHE_DIR;
      else process.env.SWT_CACHE_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
