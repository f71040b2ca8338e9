import { createDockerSandbox } from '../../src/sandbox/index.js';
import { connectDocker, pingDocker } from '../../src/sandbox/docker.js';
import { materialize, openRepo, openState, resolveRev } from '../../src/repo/git.js';
import { isSwtError, SwtError } from '../../src/util/errors.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, createPlainDir, type TempRepo } from '../helpers/gitRepo.js';

// Bad input gives one clear SwtError each, and nothing is left behind.

let sandbox: Sandbox;
let repo: TempRepo;

async function caught(p: Promise<unknown>): Promise<SwtError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SwtError) return e;
    throw e;
  }
  throw new Error('expected an error');
}

const testFile = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

beforeAll(() => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({ 'tests/test_x.py': testFile, 'src/app.py': 'VALUE = 1\n' });
});

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

describe('bad input', () => {
  it('rejects a directory that is not a git repository', async () => {
    const dir = createPlainDir();
    const e = await caught(openRepo(dir));
    expect(e.code).toBe('NOT_A_REPO');
    expect(e.message).toBe(`${dir} is not a git repository`);
    const e2 = await caught(sandbox.ensureEnvironment({ repo: dir, rev: 'HEAD', baseImage: 'python:3.11', install: '' }));
    expect(e2.code).toBe('NOT_A_REPO');
    const e3 = await caught(openRepo('/nonexistent/swt/path'));
    expect(e3.code).toBe('NOT_A_REPO');
  });

  it('rejects an unknown revision', async () => {
    const e = await caught(resolveRev(repo.path, 'no-such-branch'));
    expect(e.code).toBe('UNKNOWN_REVISION');
    expect(e.message).toBe(`unknown revision 'no-such-branch' in ${repo.path}`);
    const e2 = await caught(resolveRev(repo.path, '--output=/tmp/x'));
    expect(e2.code).toBe('UNKNOWN_REVISION');
    expect(await resolveRev(repo.path, 'HEAD')).toBe(repo.sha);
  });

  it('names the file and the hunk of a patch that does not apply', async () => {
    const patch = [
      'diff --git a/tests/test_x.py b/tests/test_x.py',
      '--- a/tests/test_x.py',
      '+++ b/tests/test_x.py',
      '@@ -2,3 +2,4 @@',
      ' line 2',
      ' line 3',
      '+inserted after 3',
      ' line 4',
      '@@ -40,6 +41,6 @@',
      ' line 40',
      ' line 41',
      '-this line is not there',
      '+replacement',
      ' line 43',
      ' line 44',
      ' line 45',
      '',
    ].join('\n');
    const e = await caught(openState(repo.path, { rev: repo.sha, patches: [patch], patchNames: ['test patch'] }));
    expect(e.code).toBe('PATCH_DOES_NOT_APPLY');
    expect(e.message).toBe('test patch does not apply: tests/test_x.py, hunk 2 (@@ -40,6 +41,6 @@)');
    const e2 = await caught(materialize(repo.path, { rev: repo.sha, patches: ['', patch] }));
    expect(e2.message).toBe('patch 2 of 2 does not apply: tests/test_x.py, hunk 2 (@@ -40,6 +41,6 @@)');
    const missing = 'diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n';
    const e3 = await caught(openState(repo.path, { rev: repo.sha, patches: [missing], patchNames: ['code patch'] }));
    expect(e3.code).toBe('PATCH_DOES_NOT_APPLY');
    expect(e3.message).toBe('code patch does not apply: nope.py, the file does not exist');
    const e4 = await caught(openState(repo.path, { rev: repo.sha, patches: ['this is not a diff\n'] }));
    expect(e4.code).toBe('PATCH_MALFORMED');
    // The user's repository is untouched: clean status, same HEAD, no stray index changes.
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(repo.sha);
  });

  it('reports an unreachable engine as DOCKER_UNREACHABLE with the hint', async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'tcp://127.0.0.1:1';
    try {
      const e = await caught(pingDocker(connectDocker()));
      expect(e.code).toBe('DOCKER_UNREACHABLE');
      expect(e.message).toBe('cannot reach the Docker engine at tcp://127.0.0.1:1 (ECONNREFUSED)');
      expect(e.hint).toBe('start one with `scripts/dev setup` or `sudo dockerd &`, or set DOCKER_HOST');
      const s = createDockerSandbox();
      const e2 = await caught(s.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' }));
      expect(isSwtError(e2, 'DOCKER_UNREACHABLE')).toBe(true);
      expect(e2.oneLine()).toContain('(start one with `scripts/dev setup`');
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });

  it('rejects unsafe session paths and an unknown base image without an offline recipe', async () => {
    const env: Environment = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' });
    const session = await sandbox.openSession({ env, repo: repo.path, state: { rev: repo.sha, patches: [] } });
    try {
      for (const bad of ['/etc/passwd', '../outside.txt', 'tests/../../x', '']) {
        const e = await caught(session.readFile(bad));
        expect(e.code).toBe('UNSAFE_PATH');
        const w = await caught(session.writeFile(bad, 'x'));
        expect(w.code).toBe('UNSAFE_PATH');
      }
      const missing = await caught(session.readFile('tests/nope.py'));
      expect(missing.code).toBe('BAD_INPUT');
    } finally {
      await session.close();
    }
    const e = await caught(sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'swt-no-such/image:1', install: '' }));
    expect(e.code).toBe('IMAGE_UNAVAILABLE');
  });
});
