import tarStream from 'tar-stream';
import { openState, overlayTar, planSize, planStateOverlay } from '../../src/repo/git.js';
import { catFileObjects } from '../../src/repo/gitExec.js';
import { bytesText, copyRefusal, inodeLimit } from '../../src/sandbox/containers/limits.js';
import { overlayAhead } from '../../src/sandbox/containers/copyIn.js';
import { Readable } from 'node:stream';
import { DEFAULT_LIMITS } from '../../src/sandbox/types.js';
import { cleanupGitRepos, createGitRepo, leftoverGitRepos } from '../helpers/gitRepo.js';
import { commitSharedBlob } from '../helpers/sharedBlobTree.js';

// What enters a container is counted before it is copied: the pure check, and the sizes from git.

afterAll(() => {
  cleanupGitRepos();
  expect(leftoverGitRepos()).toEqual([]);
});

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const run512 = { ...DEFAULT_LIMITS, diskBytes: 512 * MiB };

describe('copyRefusal (pure)', () => {
  it('refuses bytes that reach the disk limit, with both figures in the reason', () => {
    const why = copyRefusal({ bytes: 40 * 99 * MiB, files: 40 }, run512, "head's files");
    expect(why).toBe("head's files to copy into the run container are 3.9 GiB (40 files and directories), over the run's disk limit of 512 MiB");
    // Reaching the limit is passing it, as for the disk watchdog: nothing would be left for the run.
    expect(copyRefusal({ bytes: 512 * MiB, files: 1 }, run512, 'x')).toMatch(/over the run's disk limit/);
    expect(copyRefusal({ bytes: 512 * MiB - 1, files: 1 }, run512, 'x')).toBeUndefined();
  });

  it('refuses files past the file limit (one per 16 KiB of the disk limit), bytes or not', () => {
    expect(inodeLimit(run512)).toBe(32_768);
    const why = copyRefusal({ bytes: 0, files: 100_001 }, run512, "head's files");
    expect(why).toBe("head's files to copy into the run container are 100001 files and directories, over the run's file limit of 32768 (one per 16 KiB of its 512 MiB disk limit)");
    expect(copyRefusal({ bytes: 0, files: 32_767 }, run512, 'x')).toBeUndefined();
    expect(copyRefusal({ bytes: 0, files: 32_768 }, run512, 'x')).toBeDefined();
  });

  it("names the container's role: an install's limits are its own", () => {
    const install = { ...DEFAULT_LIMITS, diskBytes: 10 * GiB };
    expect(copyRefusal({ bytes: 11 * GiB, files: 3 }, install, 'the files of abc', 'install')).toBe(
      "the files of abc to copy into the install container are 11 GiB (3 files and directories), over the install's disk limit of 10 GiB",
    );
    expect(copyRefusal({ bytes: 3.9 * GiB, files: 40 }, install, 'x', 'install')).toBeUndefined();
  });

  it('writes bytes for people', () => {
    expect([bytesText(0), bytesText(1023), bytesText(1024), bytesText(812 * 1024), bytesText(512 * MiB), bytesText(40 * 99 * MiB), bytesText(10 * GiB)]).toEqual([
      '0 bytes',
      '1023 bytes',
      '1 KiB',
      '812 KiB',
      '512 MiB',
      '3.9 GiB',
      '10 GiB',
    ]);
  });
});

describe('sizes from git, nothing checked out', () => {
  it("a plan's size counts every path of a shared blob, from object sizes alone", async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    const paths = Array.from({ length: 40 }, (_, i) => `big/copy-${String(i).padStart(2, '0')}.bin`);
    const { sha } = commitSharedBlob(repo, { bytes: 3 * MiB, paths });
    const st = await openState(repo.path, { rev: sha, patches: [] });
    try {
      const plan = await planStateOverlay(st, repo.sha);
      expect(plan.write).toHaveLength(40);
      // 40 files and their one directory.
      expect(await planSize(st.repo, plan, st.env)).toEqual({ bytes: 40 * 3 * MiB, files: 41 });
      // The whole tree (an install's copy): a.txt too.
      const whole = await planStateOverlay(st, '');
      expect(await planSize(st.repo, whole, st.env)).toEqual({ bytes: 40 * 3 * MiB + 2, files: 42 });
    } finally {
      await st.dispose();
    }
    // Nothing was checked out: the working tree still holds only a.txt.
    expect(repo.git('ls-files').trim()).toBe('a.txt');
  });

  it('a blob streams out of git in chunks, never whole', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    const { blob } = commitSharedBlob(repo, { bytes: 8 * MiB, paths: ['z.bin'] });
    let largest = 0;
    let total = 0;
    for await (const o of catFileObjects(repo.path, [blob, blob])) {
      expect(o).toMatchObject({ found: true, type: 'blob', size: 8 * MiB });
      // The second body is left unread: the next object (none) still comes out right.
      if (total) continue;
      for await (const c of o.body()) {
        largest = Math.max(largest, c.length);
        total += c.length;
      }
    }
    expect(total).toBe(8 * MiB);
    expect(largest).toBeLessThanOrEqual(1 * MiB);
  });

  it('the overlay archive streams large files intact, and a destroyed one closes at once', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    const { sha } = commitSharedBlob(repo, { bytes: 6 * MiB + 3, paths: ['one.bin', 'two.bin'] });
    const st = await openState(repo.path, { rev: sha, patches: [] });
    try {
      const plan = await planStateOverlay(st, repo.sha);
      const extract = tarStream.extract();
      overlayTar(st.repo, plan).pipe(extract as unknown as NodeJS.WritableStream);
      const seen: Array<[string, number, boolean]> = [];
      for await (const e of extract) {
        let n = 0;
        let zeros = true;
        for await (const c of e as AsyncIterable<Buffer>) {
          n += c.length;
          if (c.some((b) => b !== 0)) zeros = false;
        }
        seen.push([e.header.name, n, zeros]);
      }
      expect(seen).toEqual([
        ['one.bin', 6 * MiB + 3, true],
        ['two.bin', 6 * MiB + 3, true],
      ]);
      // Destroyed early (a cancelled copy): it closes, no error escapes, and nothing hangs.
      const tar = overlayTar(st.repo, plan);
      const closed = new Promise((r) => tar.on('close', r));
      tar.once('data', () => tar.destroy());
      tar.on('error', () => undefined);
      await closed;
    } finally {
      await st.dispose();
    }
  });

  it('an overlay read ahead is the whole archive; cancelled, or with a blob git cannot give, it fails instead', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n', 'gone.txt': 'x\n' });
    const patch = ['--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-a', '+b', '--- /dev/null', '+++ b/new/c.txt', '@@ -0,0 +1 @@', '+c', ''].join('\n');
    const st = await openState(repo.path, { rev: repo.sha, patches: [patch] });
    try {
      const plan = await planStateOverlay(st, repo.sha);
      const archive = await overlayAhead(st.repo, plan, st.env).archive;
      const extract = tarStream.extract();
      Readable.from([archive]).pipe(extract as unknown as NodeJS.WritableStream);
      const seen: Array<[string, string, string]> = [];
      for await (const e of extract) {
        const parts: Buffer[] = [];
        for await (const c of e as AsyncIterable<Buffer>) parts.push(c);
        seen.push([e.header.name, e.header.type, Buffer.concat(parts).toString()]);
      }
      expect(seen).toEqual([
        ['new', 'directory', ''],
        ['a.txt', 'file', 'b\n'],
        ['new/c.txt', 'file', 'c\n'],
      ]);
      // Cancelled before it is read (the container was not needed): it rejects, and nothing hangs.
      const cancelled = overlayAhead(st.repo, plan, st.env);
      cancelled.cancel();
      await expect(cancelled.archive).rejects.toThrow();
      // A blob missing from the state's objects: no archive, git's failure instead of a cut one.
      const missing = { ...plan, write: [...plan.write, { ...plan.write[0]!, path: 'missing.txt', blob: '0123456789012345678901234567890123456789' }] };
      await expect(overlayAhead(st.repo, missing, st.env).archive).rejects.toThrow(/missing/);
    } finally {
      await st.dispose();
    }
  });
});
