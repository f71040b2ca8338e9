import { connectDocker, isNotFound } from '../../src/sandbox/docker.js';
import { listEnvImages, markUsed } from '../../src/sandbox/images/envCache.js';
import { ENV_LABELS } from '../../src/sandbox/images/envKey.js';
import { createDockerSandbox, ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';
import { containerLabels } from '../../src/sandbox/containers/limits.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo } from '../helpers/gitRepo.js';

// Least-recently-used eviction on real images, in a cache namespace of this test's own (so no image
// of another process is ever a candidate): each environment holds ~5 MB of its own, the cache
// 12 MB, so two fit. An image with a container (an open session) is never evicted.

const docker = connectDocker();
const namespace = `test-evict-${process.pid}`;
const MB = 1e6;
let sandbox: Sandbox;

beforeAll(() => {
  sandbox = createDockerSandbox({ envCache: { namespace, maxBytes: 12 * MB, leaseMs: 0 } });
});

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
});

async function cached(): Promise<{ tags: string[]; bytes: number }> {
  const images = await listEnvImages(docker, namespace);
  return { tags: images.flatMap((i) => i.tags).sort(), bytes: images.reduce((n, i) => n + i.bytes, 0) };
}

describe('environment image eviction (real images)', () => {
  it('keeps the cache under its size, least recently used first, never evicting an image in use', async () => {
    const repo = createGitRepo({ 'requirements.txt': '# 1\n', 'test_a.py': 'def test_a():\n    assert True\n' });
    const install = 'head -c 5000000 /dev/urandom > .blob';
    const ensure = async (n: number): Promise<Environment> => {
      const rev = n === 1 ? repo.sha : repo.commit({ 'requirements.txt': `# ${n}\n` });
      // The eviction pass runs after the build returns: waited for here.
      const env = await sandbox.ensureEnvironment({ repo: repo.path, rev, baseImage: 'python:3.11', install });
      await sandbox.upkeep!();
      return env;
    };
    const a = await ensure(1);
    expect(a.image.startsWith(`swt-env-${namespace}:`)).toBe(true);
    const session = await sandbox.openSession({ env: a, repo: repo.path, state: { rev: repo.sha, patches: [] } });
    try {
      const b = await ensure(2);
      expect((await cached()).tags).toEqual([a.image, b.image].sort());
      const c = await ensure(3);
      // Over 12 MB with three: B goes (least recently used and unused); A has a container.
      const after = await cached();
      expect(after.tags).toEqual([a.image, c.image].sort());
      expect(after.bytes).toBeLessThanOrEqual(12 * MB);
      expect(after.bytes).toBeGreaterThan(9 * MB);
      expect((await session.exec('wc -c < .blob')).output.trim()).toBe('5000000');
    } finally {
      await session.close();
    }
    // With the session closed, A is now the least recently used: the next build evicts it, not C.
    const c = (await cached()).tags.find((t) => t !== a.image)!;
    const d = await ensure(4);
    const end = await cached();
    expect(end.tags).toEqual([c, d.image].sort());
    expect(end.bytes).toBeLessThanOrEqual(12 * MB);
    // An evicted environment is built again when asked for.
    const again = await sandbox.ensureEnvironment({ repo: repo.path, rev: a.snapshotRev, baseImage: 'python:3.11', install });
    expect(again.cached).toBe(false);
  });

  it('removes environment images from before namespaces, unless a container uses one', async () => {
    // The earlier builds' upkeep passes done first: one still under way would take the old image before the call below.
    await sandbox.upkeep!();
    const base = await ensureBaseImage('python:3.11', { docker, caBundle: await loadCaBundle() });
    // As an older swt-bot left them: the key label, no namespace label.
    const legacy = async (tag: string) => {
      const c = await docker.createContainer({ Image: base, Cmd: ['true'], Labels: containerLabels('run') });
      try {
        await c.commit({ repo: 'swt-env', tag, changes: [`LABEL ${ENV_LABELS.key}=legacy-${process.pid}`] } as object);
      } finally {
        await c.remove({ force: true });
      }
      // Marked as just used: other test processes, whose builds evict with the default lease, leave
      // them alone; this test's sandbox has no lease.
      await markUsed(`swt-env:${tag}`);
      return `swt-env:${tag}`;
    };
    const unused = await legacy(`legacy-${process.pid}-a`);
    const used = await legacy(`legacy-${process.pid}-b`);
    const holder = await docker.createContainer({ Image: used, Cmd: ['true'], Labels: containerLabels('session') });
    const exists = (image: string) => docker.getImage(image).inspect().then(() => true, (e) => (isNotFound(e) ? false : Promise.reject(e)));
    try {
      const { removed } = await sandbox.evictEnvironments!();
      expect(removed).toContain(unused);
      expect(removed).not.toContain(used);
      expect(await exists(unused)).toBe(false);
      expect(await exists(used)).toBe(true);
    } finally {
      await holder.remove({ force: true });
    }
    expect((await sandbox.evictEnvironments!()).removed).toContain(used);
    expect(await exists(used)).toBe(false);
  });
});
