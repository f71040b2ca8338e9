/** States built once per scope (a validation asks for the same tree up to four times), and nothing left once it ends. */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openState } from '../../src/repo/git.js';
import { sharedState, withStateCache } from '../../src/repo/stateCache.js';
import { tempPrefix } from '../../src/util/tempDirs.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

const stateDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`${tempPrefix()}state-`));

afterAll(() => {
  cleanupGitRepos();
  expect(stateDirs()).toEqual([]);
});

/** A build that counts itself and its disposals. */
function counted() {
  const log = { built: 0, disposed: 0 };
  const build = async () => {
    log.built += 1;
    return { n: log.built, dispose: async () => void (log.disposed += 1) };
  };
  return { log, build };
}

describe('states shared within a scope', () => {
  it('outside a scope every call builds and owns its build', async () => {
    const { log, build } = counted();
    const a = await sharedState('k', build);
    const b = await sharedState('k', build);
    expect([a.n, b.n]).toEqual([1, 2]);
    await a.dispose();
    expect(log.disposed).toBe(1);
  });

  it('inside one, one build per key; disposing lets go only, and the scope disposes of it at its end', async () => {
    const { log, build } = counted();
    await withStateCache(async () => {
      const [a, b] = await Promise.all([sharedState('k', build), sharedState('k', build)]);
      const c = await sharedState('other', build);
      expect([a.n, b.n, c.n]).toEqual([1, 1, 2]);
      await a.dispose();
      await a.dispose();
      await b.dispose();
      expect(log.disposed).toBe(0);
      const again = await sharedState('k', build);
      expect(again.n).toBe(1);
      await Promise.all([again.dispose(), c.dispose()]);
      expect(log.disposed).toBe(0);
    });
    expect(log).toEqual({ built: 2, disposed: 2 });
  });

  it('one held past the end goes when its holder lets go; a failed build is not kept', async () => {
    const { log, build } = counted();
    let held: { dispose(): Promise<void> } | undefined;
    await withStateCache(async () => {
      held = await sharedState('k', build);
      let fail = true;
      const flaky = async () => {
        if (fail) throw new Error('apply failed');
        return build();
      };
      await expect(sharedState('f', flaky)).rejects.toThrow('apply failed');
      fail = false;
      const f = await sharedState('f', flaky);
      expect(f.n).toBe(2);
      await f.dispose();
    });
    expect(log.disposed).toBe(1);
    await held!.dispose();
    expect(log.disposed).toBe(2);
  });

  it('openState: the same commit and patches are one temporary tree in a scope, gone when it ends', async () => {
    const repo = createGitRepo({ 'a.txt': 'one\n' });
    const patch = repo.git('diff', repo.sha, repo.commit({ 'a.txt': 'two\n' }, 'two'));
    const state = { rev: repo.sha, patches: [patch] };
    await withStateCache(async () => {
      const a = await openState(repo.path, state);
      await a.dispose();
      const b = await openState(repo.path, state);
      const c = await openState(repo.path, { rev: repo.sha, patches: ['', patch] });
      expect(b.tree).toBe(a.tree);
      expect(b.env).toEqual(a.env);
      // The same tree, a different state: `contained` and its index differ.
      expect(c.tree).toBe(a.tree);
      expect(c.env.GIT_INDEX_FILE).not.toBe(a.env.GIT_INDEX_FILE);
      expect(stateDirs()).toHaveLength(2);
      await Promise.all([b.dispose(), c.dispose()]);
    });
    expect(stateDirs()).toEqual([]);
  });
});
