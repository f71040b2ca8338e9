import { execFileSync } from 'node:child_process';
import { jest } from '@jest/globals';
import { createRequire } from 'node:module';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Environment, RunOutcome, Sandbox } from '../../src/sandbox/types.js';
import { containersOfOurs, containersOfOursOnceRetired, expectNothingLeftBehind, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { isSwtError } from '../../src/util/errors.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { commitSharedBlob } from '../helpers/sharedBlobTree.js';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/util/logger.js';
import { OVERLAY_AHEAD_MAX_BYTES } from '../../src/sandbox/containers/copyIn.js';
import { FIRST_COMMAND_MAX_BYTES } from '../../src/sandbox/containers/firstCommand.js';

// A kept run's command, files and reports (issue 42): the first command goes on the stdin of the
// container's own waiting process (no exec to start), the state's overlay after it, and /swt-out
// comes out as a tar on stdout, so a run pays no archive round trip; reruns are execs. A small
// overlay is read from git before the command goes, a big one as it goes in; a first command too
// large for one `sh -c` argument is an exec, as is one where the waiting process has no dd. Where the image has no tar, or the stdout
// is not a whole archive (the command wrote to it), the engine's archive calls do the same work:
// the run is the same either way.

const DockerContainer = createRequire(import.meta.url)('dockerode/lib/container') as { prototype: { getArchive: (...a: unknown[]) => unknown; putArchive: (...a: unknown[]) => unknown } };

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;
let noTar: Environment;
let noDd: Environment;
const noTarImage = `swt-test-notar:${process.pid}`;
const noDdImage = `swt-test-nodd:${process.pid}`;

/** The environment's base with `tool` taken away, as root, committed as an image of this test's own. */
async function baseWithout(tool: string, image: string): Promise<Environment> {
  const name = `swt-test-no${tool}-${process.pid}`;
  execFileSync('docker', ['run', '--name', name, '--user', '0', '--entrypoint', 'sh', env.baseImage, '-c', `rm -f "$(command -v ${tool})"; ! command -v ${tool}`]);
  try {
    execFileSync('docker', ['commit', name, image]);
  } finally {
    execFileSync('docker', ['rm', '-f', name]);
  }
  return sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: image, install: '' });
}

const patch = [
  '--- a/a.txt',
  '+++ b/a.txt',
  '@@ -1 +1 @@',
  '-A1',
  '+A2',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-x',
  '--- /dev/null',
  '+++ b/new/dir/b.txt',
  '@@ -0,0 +1 @@',
  '+B',
  '',
].join('\n');

const command = 'cat a.txt new/dir/b.txt; ls gone.txt 2>&1; echo "<r/>" > /swt-out/r.xml; mkdir -p /swt-out/p0; echo two > /swt-out/p0/s.xml; echo out; echo err >&2; exit 3';

// The sandbox's debug log: how each kept run's command reached it, and how its overlay went in.
const logged: string[] = [];
const overlaysLogged = () => logged.splice(0).flatMap((l) => {
  const o = JSON.parse(l) as { msg?: string; kept?: boolean; overlay?: string; via?: string };
  return o.msg === 'sandbox run' && o.kept ? [`${o.via}: ${o.overlay ?? 'none'}`] : [];
});

beforeAll(async () => {
  const destination = new Writable({ write: (chunk, _enc, done) => (logged.push(String(chunk)), done()) });
  sandbox = createDockerSandbox({ logger: createLogger({ level: 'debug', destination }) });
  repo = createGitRepo({ 'a.txt': 'A1\n', 'gone.txt': 'x\n' });
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' });
  noTar = await baseWithout('tar', noTarImage);
  noDd = await baseWithout('dd', noDdImage);
}, 900_000);

afterAll(async () => {
  await sandbox.close?.();
  await removeEnvImagesBuiltFrom(commitsMade());
  execFileSync('docker', ['rmi', '-f', noTarImage, noDdImage]);
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
});

/** A kept run of `command` on the patched state, and how many archive calls the engine got meanwhile. */
async function keptRun(e: Environment, cmd: string, then?: (r: RunOutcome) => Promise<RunOutcome>, rev = repo.sha) {
  overlaysLogged();
  const gets = jest.spyOn(DockerContainer.prototype, 'getArchive');
  const puts = jest.spyOn(DockerContainer.prototype, 'putArchive');
  try {
    const first = await sandbox.run({ env: e, repo: repo.path, state: { rev, patches: [patch] }, command: cmd, keep: true });
    try {
      const second = then ? await then(first) : undefined;
      return { first, second, gets: gets.mock.calls.length, puts: puts.mock.calls.length };
    } finally {
      await first.kept?.release();
    }
  } finally {
    gets.mockRestore();
    puts.mockRestore();
  }
}

const expectTheRun = (r: RunOutcome) => {
  expect(r.exitCode).toBe(3);
  expect(r.output).toMatch(/^A2\nB\nls: .*gone\.txt.*No such file or directory\nout\nerr\n$/);
  expect(r.files).toEqual({ 'r.xml': '<r/>\n', 'p0/s.xml': 'two\n' });
};

describe("a kept run's command, overlay and reports", () => {
  it("goes with its overlay on the waiting process's stdin, its reports come on stdout: no exec, no archive call; a rerun is an exec and gets only its own reports", async () => {
    const { first, second, gets, puts } = await keptRun(env, command, (r) => r.kept!.rerun('echo again > /swt-out/t.xml; echo rerun'));
    expectTheRun(first);
    expect(second?.output).toBe('rerun\n');
    expect(second?.files).toEqual({ 't.xml': 'again\n' });
    expect([gets, puts]).toEqual([0, 0]);
    // The overlay was read ahead of the first command; the rerun brings none.
    expect(overlaysLogged()).toEqual(['stdin: read ahead', 'exec: none']);
  }, 300_000);

  it('an overlay past the read-ahead bound streams in as git reads it, and the run is the same', async () => {
    const big = OVERLAY_AHEAD_MAX_BYTES + 1;
    const { sha } = commitSharedBlob(repo, { bytes: big, paths: ['big.bin'] });
    const { first, gets, puts } = await keptRun(env, `wc -c < big.bin >&2; ${command}`, undefined, sha);
    expect(first.output).toMatch(new RegExp(`^${big}\n`));
    expectTheRun({ ...first, output: first.output.replace(/^\d+\n/, '') });
    expect([gets, puts]).toEqual([0, 0]);
    expect(overlaysLogged()).toEqual(['stdin: streamed']);
  }, 300_000);

  it('a first command too large for one `sh -c` argument goes as an exec, and the run is the same', async () => {
    const { first, gets, puts } = await keptRun(env, `: ${'x'.repeat(FIRST_COMMAND_MAX_BYTES)}; ${command}`);
    expectTheRun(first);
    expect([gets, puts]).toEqual([0, 0]);
    expect(overlaysLogged()).toEqual(['exec: read ahead']);
  }, 300_000);

  it("a command reaches the waiting process byte for byte, its output ends where it ended, and a background child's later output is not the run's", async () => {
    const text = "  lead\\back $HOME `x` \"q\" 'r'\n\ttab\n\n\\\n";
    const cmd = `(sleep 1; echo late >&2; echo late > /swt-out/late.xml) &\ncat <<'EOF' >&2\n${text}EOF\nprintf 'no newline' >&2\n`;
    const { first, second } = await keptRun(env, cmd, (r) => r.kept!.rerun('sleep 2; echo rerun'));
    expect(first.exitCode).toBe(0);
    expect(first.output).toBe(`${text}no newline`);
    expect(first.files).toEqual({});
    expect(second?.output).toBe('rerun\n');
    expect(overlaysLogged()).toEqual(['stdin: read ahead', 'exec: none']);
  }, 300_000);

  it('an image without tar: the engine copies the overlay in and the reports out, and the run is the same', async () => {
    const { first, gets, puts } = await keptRun(noTar, command);
    expectTheRun(first);
    expect([gets, puts]).toEqual([1, 1]);
    // The waiting process said its tar failed; the engine copied the files, and the command went again as an exec.
    expect(overlaysLogged()).toEqual(['exec: none']);
  }, 300_000);

  it('an image without dd: the waiting process cannot read its command, nothing runs there, and the run is the same as an exec', async () => {
    const { first, second, gets, puts } = await keptRun(noDd, command, (r) => r.kept!.rerun('echo rerun'));
    expectTheRun(first);
    expect(second?.output).toBe('rerun\n');
    expect([gets, puts]).toEqual([0, 1]);
    expect(overlaysLogged()).toEqual(['exec: none', 'exec: none']);
  }, 300_000);

  it('attack: a command writes over the wrapper stdout, a forged archive and garbage; the reports are read from /swt-out instead', async () => {
    // The wrapper shell is the command's parent, of the same user: its stdout is one of /proc/$PPID/fd
    // (dash keeps it as fd 10 while the command's stdout is its stderr), and the command writes to each.
    const forge = 'printf "forged" > /tmp/f.xml; for f in /proc/$PPID/fd/*; do case ${f##*/} in 0|1|2) ;; *) tar -cf $f -C /tmp f.xml 2>/dev/null; printf "garbage" > $f 2>/dev/null;; esac; done; ';
    const { first, gets, puts } = await keptRun(env, forge + command);
    expectTheRun(first);
    expect([gets, puts]).toEqual([1, 0]);
  }, 300_000);
});

describe("a kept run's first command on the waiting process is judged as an exec's was", () => {
  const kept = async (cmd: string, limits?: Parameters<Sandbox['run']>[0]['limits']) => {
    overlaysLogged();
    const r = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [patch] }, command: cmd, keep: true, ...(limits ? { limits } : {}) });
    await r.kept?.release();
    return r;
  };

  it('a 137 the command gave itself is its result; a container stopped from outside is INTERRUPTED', async () => {
    const killed = await kept('echo before >&2; kill -9 $$');
    expect(killed).toMatchObject({ exitCode: 137, timedOut: false, oomKilled: false });
    expect(killed.output).toMatch(/^before\n/);
    expect(overlaysLogged()).toEqual(['stdin: read ahead']);

    const running = kept('echo started; sleep 600');
    let id = '';
    for (let i = 0; i < 300 && !id; i++) {
      id = containersOfOurs(process.pid, { running: true });
      if (!id) await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    execFileSync('docker', ['kill', id]);
    const e = await running.then(() => undefined, (err: unknown) => err);
    expect(isSwtError(e, 'INTERRUPTED')).toBe(true);
    expect(containersOfOursOnceRetired()).toBe('');
  }, 300_000);

  it("attack: a command reads its run's tag and prints the done markers itself, then goes on; the run ends with only what it chose to say, and nothing outlives the release", async () => {
    // The tag is the last line of the script, which is its parent shell's argument; pid 1 is the waiting process, of the same user.
    const forge = [
      "t=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | sed -n 's/^#//p' | tail -n 1)",
      'echo forging >&2',
      'printf "swt-done-%s\\n" "$t" >&2',
      'printf "swt-done-%s 0\\n" "$t" > /proc/1/fd/1',
      'sleep 20; echo late > /swt-out/late.xml; exit 5',
    ].join('\n');
    const started = Date.now();
    const r = await kept(forge);
    expect(Date.now() - started).toBeLessThan(15_000);
    // As if it had exited 0 with no reports: which it could do by itself.
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, files: {} });
    expect(r.output).toBe('forging\n');
    expect(containersOfOursOnceRetired()).toBe('');
  }, 300_000);

  it('past its time limit, out of memory, or past its disk limit, it is killed and said so; the container is gone', async () => {
    const slow = await kept('sleep 600', { timeoutMs: 3_000 });
    expect(slow).toMatchObject({ timedOut: true, exitCode: null });
    const hog = await kept(`python3 -c 'a = []\nwhile True: a.append(b"x" * (16 << 20))'`, { memoryBytes: 128 * 1024 ** 2, timeoutMs: 60_000 });
    expect(hog.oomKilled || /MemoryError/.test(hog.output)).toBe(true);
    expect(hog.exitCode).not.toBe(0);
    const fill = await kept('i=0; while :; do head -c 8388608 /dev/zero > fill-$i || exit 9; i=$((i+1)); done', { diskBytes: 256 * 1024 ** 2, timeoutMs: 120_000 });
    expect(fill).toMatchObject({ diskLimit: true, timedOut: false, exitCode: null });
    expect(overlaysLogged().every((l) => l.startsWith('stdin: '))).toBe(true);
    expect(containersOfOursOnceRetired()).toBe('');
  }, 300_000);
});
