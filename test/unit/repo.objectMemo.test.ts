/**
 * What git says of objects named by full ids is kept per process (objectMemo.ts): proved on real
 * repositories by asking again once git could no longer answer (a state's temporary objects gone),
 * and that nothing else is kept (a name that moves, a missing object, a failure).
 */
import { execFileSync } from 'node:child_process';
import { openRepo, openState, planSize } from '../../src/repo/git.js';
import { changedFiles, listTreeEntries, readTreeFiles } from '../../src/repo/objects.js';
import { namesOneObject, ObjectMemo } from '../../src/repo/objectMemo.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

afterAll(() => cleanupGitRepos());

describe('ObjectMemo', () => {
  it('computes once per key, shares a query in flight, and keeps no failure', async () => {
    const memo = new ObjectMemo(100);
    let calls = 0;
    const one = () => memo.get('k', async () => ++calls);
    expect(await Promise.all([one(), one()])).toEqual([1, 1]);
    expect(await one()).toBe(1);
    let fails = 0;
    const failing = () => memo.get('f', async () => Promise.reject(new Error(`no ${++fails}`)));
    await expect(failing()).rejects.toThrow('no 1');
    await expect(failing()).rejects.toThrow('no 2');
    expect(memo.has('f')).toBe(false);
  });

  it('lets the least recently used go once the rows kept pass its bound', async () => {
    const memo = new ObjectMemo(10);
    const rows = (n: number) => async () => Array.from({ length: n }, (_, i) => i);
    await memo.get('a', rows(4), (r) => r.length);
    await memo.get('b', rows(4), (r) => r.length);
    await memo.get('a', rows(4), (r) => r.length); // a used last
    await memo.get('c', rows(4), (r) => r.length);
    expect([memo.has('a'), memo.has('b'), memo.has('c')]).toEqual([true, false, true]);
  });

  it('names one object only by a full id', () => {
    expect(namesOneObject('a'.repeat(40))).toBe(true);
    expect(namesOneObject(`${'b'.repeat(64)}^{tree}`)).toBe(true);
    for (const n of ['HEAD', 'main', 'a'.repeat(12), `${'a'.repeat(40)}~1`, `${'a'.repeat(40)}:src`]) expect(namesOneObject(n)).toBe(false);
  });
});

describe("git's answers about objects, kept", () => {
  it("a state's tree listing, its diff from base, its blobs' sizes and its files still answer once its objects are gone", async () => {
    const r = createGitRepo({ 'a.txt': 'a\n' });
    const repo = await openRepo(r.path);
    const patch = 'diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+bee\n';
    const st = await openState(repo, { rev: r.sha, patches: [patch] });
    const diff = await changedFiles(repo, `${r.sha}^{tree}`, st.tree, st.env);
    const listing = await listTreeEntries(repo, st.tree, st.env);
    const plan = { write: diff.map((c) => ({ path: c.path, mode: c.mode, blob: c.blob })), delete: [], dirs: [], skipped: [] };
    expect(await planSize(repo, plan, st.env)).toEqual({ bytes: 4, files: 1 });
    // Asked where the state's objects cannot be seen, b.txt is not there; that answer is not kept.
    expect((await readTreeFiles(repo, st.tree, ['b.txt'])).size).toBe(0);
    expect([...(await readTreeFiles(repo, st.tree, ['b.txt', 'none.txt'], st.env))].map(([p, c]) => [p, c.toString()])).toEqual([['b.txt', 'bee\n']]);
    await st.dispose();
    // Git alone could not answer now: the tree and b.txt's blob lived in the state's temporary objects.
    expect(() => execFileSync('git', ['ls-tree', st.tree], { cwd: r.path, stdio: 'pipe' })).toThrow();
    expect(await changedFiles(repo, `${r.sha}^{tree}`, st.tree)).toEqual(diff);
    expect(await listTreeEntries(repo, st.tree)).toEqual(listing);
    expect(await planSize(repo, plan)).toEqual({ bytes: 4, files: 1 });
    expect([...(await readTreeFiles(repo, st.tree, ['none.txt', 'b.txt']))].map(([p, c]) => [p, c.toString()])).toEqual([['b.txt', 'bee\n']]);
    expect(diff.map((c) => c.path)).toEqual(['b.txt']);
  });

  it('a name that moves is asked again, and a missing blob is never kept as one of no size', async () => {
    const r = createGitRepo({ 'a.txt': 'a\n' });
    const repo = await openRepo(r.path);
    expect((await listTreeEntries(repo, 'HEAD^{tree}')).map((e) => e.path)).toEqual(['a.txt']);
    r.commit({ 'c.txt': 'sea\n' });
    expect((await listTreeEntries(repo, 'HEAD^{tree}')).map((e) => e.path)).toEqual(['a.txt', 'c.txt']);
    const hash = (...a: string[]) => execFileSync('git', ['hash-object', ...a, '--stdin'], { cwd: r.path, input: 'not yet\n', encoding: 'utf8' }).trim();
    const blob = hash();
    const plan = { write: [{ path: 'n.txt', mode: '100644', blob }], delete: [], dirs: [], skipped: [] };
    expect(await planSize(repo, plan)).toEqual({ bytes: 0, files: 1 });
    expect(hash('-w')).toBe(blob);
    expect(await planSize(repo, plan)).toEqual({ bytes: 8, files: 1 });
  });
});
