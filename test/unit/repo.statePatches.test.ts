/** A state's patches applied in order, in one `git apply` when they all go in, each alone when one does not (real git). */
import { openState, type StateTree } from '../../src/repo/git.js';
import { listTreeFiles, readTreeFiles } from '../../src/repo/objects.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

afterAll(cleanupGitRepos);

const LINES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
const text = (changes: Record<number, string>) => LINES.map((l, i) => changes[i] ?? l).join('\n') + '\n';

async function filesOf(st: StateTree): Promise<Record<string, string>> {
  const names = await listTreeFiles(st.repo, st.tree, st.env);
  const read = await readTreeFiles(st.repo, st.tree, names, st.env);
  return Object.fromEntries([...read].map(([n, b]) => [n, b.toString('utf8')]));
}

describe('a state of several patches', () => {
  it('a later patch goes onto what the earlier made (the same file twice, a file the first creates): the tree is the one of both in order', async () => {
    const repo = createGitRepo({ 'f.txt': text({}) });
    const base = repo.sha;
    const first = repo.commit({ 'f.txt': text({ 1: 'B' }), 'new.txt': 'one\n' }, 'first');
    const second = repo.commit({ 'f.txt': text({ 1: 'B', 8: 'I' }), 'new.txt': 'one\ntwo\n' }, 'second');
    const p1 = repo.git('diff', base, first);
    const p2 = repo.git('diff', first, second);
    const st = await openState(repo.path, { rev: base, patches: [p1, p2] });
    try {
      expect(st.tree).toBe(repo.git('rev-parse', `${second}^{tree}`).trim());
      expect(st.contained).toEqual([]);
      expect((await filesOf(st))['new.txt']).toBe('one\ntwo\n');
    } finally {
      await st.dispose();
    }
  });

  it('a patch the earlier ones already hold is left out and named (`contained`); the others apply', async () => {
    const repo = createGitRepo({ 'f.txt': text({}), 'test_f.txt': 'old\n' });
    const base = repo.sha;
    const head = repo.commit({ 'f.txt': text({ 2: 'C' }), 'test_f.txt': 'new\n' }, 'a fix that holds the tests');
    const tests = repo.git('diff', base, head, '--', 'test_f.txt');
    const fix = repo.git('diff', base, head);
    const st = await openState(repo.path, { rev: base, patches: [fix, '', tests] });
    try {
      expect(st.contained).toEqual([2]);
      expect(st.tree).toBe(repo.git('rev-parse', `${head}^{tree}`).trim());
    } finally {
      await st.dispose();
    }
  });

  it('a patch that does not apply is named as it is alone, after the ones that did', async () => {
    const repo = createGitRepo({ 'f.txt': text({}) });
    const base = repo.sha;
    const fix = repo.git('diff', base, repo.commit({ 'f.txt': text({ 4: 'E' }) }, 'fix'));
    // Its context is not the file's, before the fix or after it.
    const stale = fix.replace('\n d\n', '\n zz\n');
    expect(stale).not.toBe(fix);
    await expect(openState(repo.path, { rev: base, patches: [fix, stale], patchNames: ['the fix', 'the test patch'] })).rejects.toThrow(/the test patch/);
  });
});
