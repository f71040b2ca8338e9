/**
 * What git says of objects: a tree's entries and files, two trees' diff, files' contents, blob
 * sizes, a commit's index. Of objects named by their full ids the answers never change: they are
 * kept per process (objectMemo.ts), so the validations of one base (each push to a pull request,
 * the pull requests that compete for one issue) ask git once.
 */
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import type { GitRepo } from './git.js';
import { catFileBatch, git, objectSizes } from './gitExec.js';
import { namesOneObject, ObjectMemo } from './objectMemo.js';
import { parseDiffTreeRaw, type TreeChange } from './overlay.js';

/** What git said of objects named by full ids, per repository: ~200,000 rows. */
const memo = new ObjectMemo(200_000);

/** A commit's tree (`commit` a full id). */
export function commitTree(repo: GitRepo, commit: string): Promise<string> {
  return memo.get(`${repo.path}\0tree\0${commit}`, async () => (await git(repo.path, ['rev-parse', `${commit}^{tree}`])).trim());
}

/** A commit's committer date, ISO 8601 (`commit` a full id); git's failure rejects. */
export function commitDate(repo: GitRepo, commit: string): Promise<string> {
  return memo.get(`${repo.path}\0date\0${commit}`, async () => (await git(repo.path, ['show', '-s', '--format=%cI', commit])).trim());
}

/**
 * The index `git read-tree` writes for a commit (no work tree: no stat data), read once per commit
 * and written into each state's directory after that. Weighs one row per 100 bytes.
 */
export function commitIndex(repo: GitRepo, commit: string, dir: string): Promise<Buffer> {
  return memo.get(
    `${repo.path}\0index\0${commit}`,
    async () => {
      const index = join(dir, 'index.read');
      await git(repo.path, ['read-tree', commit], { env: { GIT_INDEX_FILE: index } });
      return readFile(index);
    },
    (b) => Math.ceil(b.length / 100),
  );
}

/** The empty tree of this repository's hash algorithm. */
export async function emptyTree(repo: GitRepo): Promise<string> {
  return memo.get(`${repo.path}\0empty`, async () => (await git(repo.path, ['hash-object', '-t', 'tree', '--stdin'], { input: '' })).trim());
}

/** Files that differ between two tree-ishes (commits or trees), without rename detection. */
export async function changedFiles(repo: GitRepo, from: string, to: string, env: Record<string, string> = {}): Promise<TreeChange[]> {
  const ask = async () => parseDiffTreeRaw(await git(repo.path, ['diff-tree', '-r', '-z', '--no-renames', '--full-index', from, to], { env }));
  if (!namesOneObject(from) || !namesOneObject(to)) return ask();
  // A copy: callers may sort or extend what they get.
  return (await memo.get(`${repo.path}\0diff\0${from}\0${to}`, ask, (c) => c.length)).slice();
}

export interface TreeEntry {
  path: string;
  /** '100644', '100755', '120000' (symlink) or '160000' (submodule). */
  mode: string;
  type: string;
  id: string;
}

/** Every entry of a tree, recursively (`git ls-tree -r`). */
export async function listTreeEntries(repo: GitRepo, tree: string, env: Record<string, string> = {}): Promise<TreeEntry[]> {
  const ask = async () =>
    (await git(repo.path, ['ls-tree', '-r', '-z', tree], { env }))
      .split('\0')
      .filter(Boolean)
      .map((l) => {
        const tab = l.indexOf('\t');
        const [mode, type, id] = l.slice(0, tab).split(' ') as [string, string, string];
        return { path: l.slice(tab + 1), mode, type, id };
      });
  if (!namesOneObject(tree)) return ask();
  return (await memo.get(`${repo.path}\0ls\0${tree}`, ask, (e) => e.length)).slice();
}

/** Paths of every file (blob or symlink) in a tree. */
export async function listTreeFiles(repo: GitRepo, tree: string, env: Record<string, string> = {}): Promise<string[]> {
  return (await listTreeEntries(repo, tree, env)).filter((e) => e.type === 'blob').map((e) => e.path);
}

/** Paths and blob ids of a tree's files, for hashing manifests. */
export async function listTreeBlobs(repo: GitRepo, tree: string, env: Record<string, string> = {}): Promise<Array<{ path: string; blob: string }>> {
  return (await listTreeEntries(repo, tree, env)).filter((e) => e.type === 'blob').map((e) => ({ path: e.path, blob: e.id }));
}

/**
 * Contents of files in a tree, by path (missing paths are absent from the map). Of a tree named by
 * its id, the answer is kept: a file's content (a row per 100 bytes), or that the tree has no such
 * file, which is only kept once the tree itself was read in the same call (not a tree whose objects
 * this call could not see).
 */
export async function readTreeFiles(repo: GitRepo, tree: string, paths: string[], env: Record<string, string> = {}): Promise<Map<string, Buffer>> {
  const usable = paths.filter((p) => !/\n/.test(p));
  const byId = namesOneObject(tree);
  const read = async (ps: string[]) => {
    const got = new Map<string, Buffer | null>();
    // The tree first: found, its missing paths are missing for good.
    let seen = !byId;
    for await (const b of catFileBatch(repo.path, [...(byId ? [tree] : []), ...ps.map((p) => `${tree}:${p}`)], env)) {
      if (b.spec === tree) seen = !!b.content;
      else if (b.content || seen) got.set(b.spec.slice(tree.length + 1), b.content);
    }
    return got;
  };
  const got = byId ? await memo.many(usable, (p) => `${repo.path}\0file\0${tree}:${p}`, read, (c) => 1 + Math.ceil((c?.length ?? 0) / 100)) : await read(usable);
  return new Map([...got].filter((e): e is [string, Buffer] => !!e[1]));
}

/** Blob sizes by id, git asked once for those it was not asked before; missing ones are absent (and asked again next time). */
export async function sizesOf(repo: GitRepo, ids: string[], env: Record<string, string>): Promise<Map<string, number>> {
  const ask = (some: string[]) => objectSizes(repo.path, some, env);
  const other = ids.filter((id) => !namesOneObject(id));
  const [kept, asked] = await Promise.all([memo.many(ids.filter(namesOneObject), (id) => `${repo.path}\0size\0${id}`, ask), other.length ? ask(other) : new Map<string, number>()]);
  return new Map([...kept, ...asked]);
}
