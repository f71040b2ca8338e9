import { fileCounter } from '../../src/sandbox/containers/diskWatch.js';
import { connectDocker } from '../../src/sandbox/docker.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containerLabels, inodeLimit } from '../../src/sandbox/containers/limits.js';
import { DEFAULT_LIMITS, type Environment, type Sandbox } from '../../src/sandbox/types.js';
import { containersOfOursOnceRetired, expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

/**
 * Files cost the engine's disk inodes but no bytes: a run that creates a million empty files ends
 * as a disk limit, by the watchdog's count of files in its writable layer (/testbed, home) and by
 * the kernel's nr_inodes on /tmp.
 */

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;
// 1 GiB of disk: 65,536 files.
const limits = { ...DEFAULT_LIMITS, diskBytes: 1024 ** 3 };
const limit = inodeLimit(limits);
// xargs batches the names: a few thousand files per touch, as fast as a shell can make them.
const MILLION = 'mkdir -p flood && cd flood && seq 1000000 | xargs touch; echo "touch exited $?"; ls | wc -l';

beforeAll(async () => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({ 'a.py': 'x = 1\n' });
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' });
}, 600_000);

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

describe('disk limit on files, not only bytes', () => {
  it('attack: a run creates a million empty files in /testbed (0 bytes, a million inodes)', async () => {
    // A long timeout, so only the disk limit can end it early.
    const r = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: MILLION, limits: { diskBytes: limits.diskBytes, timeoutMs: 15 * 60_000 } });
    console.log(`a million empty files: killed after ${(r.durationMs / 1000).toFixed(1)} s at the ${limit}-file limit`);
    expect(r).toMatchObject({ diskLimit: true, timedOut: false, exitCode: null });
    expect(r.output).toContain(`[swt: killed: disk limit, created more than ${limit} files]`);
    // Killed mid-flood: it never got to print its end.
    expect(r.output).not.toContain('touch exited');
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('attack: a run creates a million empty files in /tmp (the tmpfs)', async () => {
    const r = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: `cd /tmp && ${MILLION}`, limits: { diskBytes: limits.diskBytes } });
    // The kernel refuses past nr_inodes: the run sees ENOSPC and holds at most the limit.
    expect(r.output).toContain('No space left on device');
    const made = Number(r.output.trim().split('\n').pop());
    expect(made).toBeGreaterThan(limit / 2);
    expect(made).toBeLessThanOrEqual(limit);
  });
});

describe('the file count is cheap', () => {
  it('attack: 200,000 empty files (0 bytes) make each disk look slow and count for nothing', async () => {
    const docker = connectDocker();
    const c = await docker.createContainer({ Image: env.image, Entrypoint: [], Cmd: ['sleep', 'infinity'], User: '1000:1000', WorkingDir: '/testbed', Labels: containerLabels('probe'), HostConfig: { NetworkMode: 'none' } });
    try {
      await c.start();
      const counter = await fileCounter(docker, c.id, 400_000);
      expect(counter).toBeDefined();
      const exec = await c.exec({ Cmd: ['sh', '-c', 'mkdir f && cd f && seq 200000 | xargs touch && ls | wc -l'], AttachStdout: true, AttachStderr: true });
      const out = await new Promise<string>((resolve, reject) => {
        exec.start({ hijack: true, stdin: false }, (err, stream) => {
          if (err || !stream) return reject(err);
          let text = '';
          stream.on('data', (b: Buffer) => (text += b.toString('latin1')));
          stream.on('end', () => resolve(text));
        });
      });
      expect(out).toContain('200000');
      // The engine's size of the layer: a walk of every file, and the files weigh (almost) nothing.
      let t0 = Date.now();
      const sizeRw = ((await c.inspect({ size: true } as object)) as { SizeRw?: number }).SizeRw ?? 0;
      const sizeMs = Date.now() - t0;
      // The file count: one statfs.
      t0 = Date.now();
      const files = await counter!.look();
      const countMs = Date.now() - t0;
      console.log(`200,000 empty files: the layer's size ${sizeRw} bytes in ${sizeMs} ms; the file count ${files} in ${countMs} ms`);
      expect(sizeRw).toBeLessThan(64 * 1024 ** 2);
      // One statfs of the engine's filesystem, which the host shares: a file another process deletes
      // meanwhile takes one from the count (199,988 in one run beside other tests; 197,182 in CI's
      // other half building C++ and installing packages), so within 5%: still the files, not the 0 bytes.
      expect(files).toBeGreaterThanOrEqual(190_000);
      expect(countMs).toBeLessThan(sizeMs);
    } finally {
      await c.remove({ force: true });
    }
  });
});
