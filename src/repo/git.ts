import { createHash } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import tarStream from 'tar-stream';
import { SwtError } from '../util/errors.js';
import type { RepoState } from './state.js';
import { describeApplyFailure, patchLabel } from './applyErrors.js';
import { catFileObjects, git, runGit } from './gitExec.js';
import { gitModeToTar, planOverlay, type OverlayPlan } from './overlay.js';
import { makeTempDir, removeTempDir } from '../util/tempDirs.js';
import { sharedState } from './stateCache.js';
import { describeTags } from './describeTags.js';
import { changedFiles, commitDate, commitIndex, commitTree, emptyTree, listTreeFiles, readTreeFiles, sizesOf } from './objects.js';

/**
 * Workspaces from git, without ever writing into the user's repository: a repository state
 * (commit + patches) becomes a tree in a temporary object directory that borrows the
 * repository's objects as alternates.
 */

export interface GitRepo {
  /** Where git commands run: the top of the working tree, or the git directory of a bare repository. */
  path: string;
  gitDir: string;
  objectsDir: string;
  bare: boolean;
}

/** Owner of the files the sandbox writes into /testbed. */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/**
 * Repositories opened before, by path, and full commit ids resolved before, by repository: a
 * validation asks both a dozen times, each a git process. A repository is asked again once its
 * object directory is not the same directory (removed, or made again); a commit id stays a commit.
 */
const opened = new Map<string, { repo: GitRepo; objects: string }>();
const commits = new WeakMap<GitRepo, Set<string>>();
const CACHED_MAX = 1000;

/** The object directory's identity (inode, birth time), or undefined when it is gone. */
async function objectsIdentity(dir: string): Promise<string | undefined> {
  return stat(dir).then((s) => (s.isDirectory() ? `${s.dev}:${s.ino}:${s.birthtimeMs}` : undefined), () => undefined);
}

export async function openRepo(path: string): Promise<GitRepo> {
  const abs = resolve(path);
  const known = opened.get(abs);
  if (known && (await objectsIdentity(known.repo.objectsDir)) === known.objects) return known.repo;
  const repo = await openRepoUncached(path, abs);
  const objects = await objectsIdentity(repo.objectsDir);
  if (objects) {
    if (opened.size >= CACHED_MAX) opened.delete(opened.keys().next().value!);
    opened.set(abs, { repo, objects });
  }
  return repo;
}

async function openRepoUncached(path: string, abs: string): Promise<GitRepo> {
  const notARepo = () => new SwtError('NOT_A_REPO', `${path} is not a git repository`);
  try {
    if (!(await stat(abs)).isDirectory()) throw notARepo();
  } catch (e) {
    if (e instanceof SwtError) throw e;
    throw notARepo();
  }
  const r = await runGit(abs, ['rev-parse', '--is-bare-repository', '--absolute-git-dir', '--git-path', 'objects']);
  if (r.code !== 0) throw notARepo();
  const [bareLine, gitDir, objects] = r.stdout.toString('utf8').trim().split('\n');
  if (!gitDir || !objects) throw notARepo();
  const bare = bareLine === 'true';
  let top = gitDir;
  if (!bare) {
    const t = await runGit(abs, ['rev-parse', '--show-toplevel']);
    if (t.code !== 0) throw notARepo();
    top = t.stdout.toString('utf8').trim();
  }
  return { path: top, gitDir, objectsDir: isAbsolute(objects) ? objects : resolve(abs, objects), bare };
}

async function asRepo(repo: GitRepo | string): Promise<GitRepo> {
  return typeof repo === 'string' ? openRepo(repo) : repo;
}

export async function resolveRev(repoOrPath: GitRepo | string, rev: string): Promise<string> {
  const repo = await asRepo(repoOrPath);
  const unknown = () => new SwtError('UNKNOWN_REVISION', `unknown revision '${rev}' in ${repo.path}`);
  if (!rev || rev.startsWith('-') || /[\0\n]/.test(rev)) throw unknown();
  if (commits.get(repo)?.has(rev)) return rev;
  const r = await runGit(repo.path, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  if (r.code !== 0) throw unknown();
  const commit = r.stdout.toString('utf8').trim();
  // A full id that names a commit names that commit for good; a branch or tag does not.
  if (commit === rev) {
    const set = commits.get(repo) ?? new Set<string>();
    if (set.size < CACHED_MAX) set.add(commit);
    commits.set(repo, set);
  }
  return commit;
}

/** A repository state as a git tree. Dispose it when done: it may own a temporary object directory. */
export interface StateTree {
  repo: GitRepo;
  commit: string;
  tree: string;
  /** Environment for git commands that must see the state's objects. */
  env: Record<string, string>;
  /** Indexes of patches left out because the state already contained them. */
  contained: number[];
  dispose(): Promise<void>;
}

export async function openState(repoOrPath: GitRepo | string, state: RepoState): Promise<StateTree> {
  const repo = await asRepo(repoOrPath);
  const commit = await resolveRev(repo, state.rev);
  const patches = state.patches.filter((p) => p.trim() !== '');
  if (patches.length === 0) {
    const tree = await commitTree(repo, commit);
    return { repo, commit, tree, env: {}, contained: [], dispose: async () => {} };
  }
  // Every patch, empty ones too: `contained` counts their places.
  const key = createHash('sha256').update(`${repo.objectsDir}\0${commit}\0${JSON.stringify(state.patches)}`).digest('hex');
  return sharedState(key, () => buildState(repo, commit, state));
}

/** A temporary object directory and index holding `commit` with the state's patches applied. */
async function buildState(repo: GitRepo, commit: string, state: RepoState): Promise<StateTree> {
  const dir = await makeTempDir('state');
  try {
    const env = {
      GIT_INDEX_FILE: join(dir, 'index'),
      GIT_OBJECT_DIRECTORY: join(dir, 'objects'),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: repo.objectsDir,
    };
    const files: Array<[number, string]> = [];
    for (let i = 0; i < state.patches.length; i++) if (state.patches[i]!.trim() !== '') files.push([i, join(dir, `patch-${files.length}.diff`)]);
    // The directory's files written side by side: each is a trip to the thread pool before git can start.
    const [index] = await Promise.all([
      commitIndex(repo, commit, dir).then(async (b) => (await writeFile(env.GIT_INDEX_FILE, b), b)),
      mkdir(env.GIT_OBJECT_DIRECTORY),
      ...files.map(([i, file]) => {
        const patch = state.patches[i]!;
        return writeFile(file, patch.endsWith('\n') ? patch : patch + '\n');
      }),
    ]);
    // Several patches: first all in one apply, in order (git applies a later one to what the
    // earlier ones made, and writes the index only when all applied). When one does not, each alone.
    const together = files.length > 1 && (await runGit(repo.path, ['apply', '--cached', '--whitespace=nowarn', ...files.map(([, f]) => f)], { env })).code === 0;
    if (files.length > 1 && !together) await writeFile(env.GIT_INDEX_FILE, index);
    const contained: number[] = [];
    for (const [i, file] of together ? [] : files) {
      const patch = state.patches[i]!;
      const r = await runGit(repo.path, ['apply', '--cached', '--whitespace=nowarn', file], { env });
      // A head that already holds the patch (a PR that adds these very tests) is the state wanted.
      if (r.code !== 0 && (await runGit(repo.path, ['apply', '--cached', '--reverse', '--check', file], { env })).code === 0) {
        contained.push(i);
        continue;
      }
      if (r.code !== 0) {
        const f = describeApplyFailure(patchLabel(i, state.patches.length, state.patchNames), patch, r.stderr);
        throw new SwtError(f.code, f.message);
      }
    }
    const tree = (await git(repo.path, ['write-tree'], { env })).trim();
    return { repo, commit, tree, env, contained, dispose: () => removeTempDir(dir) };
  } catch (e) {
    await removeTempDir(dir);
    throw e;
  }
}

export async function withState<T>(repo: GitRepo | string, state: RepoState, fn: (t: StateTree) => Promise<T>): Promise<T> {
  const t = await openState(repo, state);
  try {
    return await fn(t);
  } finally {
    await t.dispose();
  }
}

/** Paths of every file at a revision (for repository facts). */
export async function listFiles(repoOrPath: GitRepo | string, rev: string): Promise<string[]> {
  const repo = await asRepo(repoOrPath);
  return listTreeFiles(repo, `${await resolveRev(repo, rev)}^{tree}`);
}

/**
 * A commit's committer date (ISO 8601) and the nearest tag it descends from (`git describe --tags`
 * output), each absent when git cannot say (a history without tags).
 */
export async function commitDateAndTag(repoOrPath: GitRepo | string, rev: string): Promise<{ date?: string; describe?: string }> {
  const repo = await asRepo(repoOrPath);
  const commit = await resolveRev(repo, rev);
  // The date is the commit's own; the nearest tag is kept while the tags stay as they were.
  const [date, describe] = await Promise.all([commitDate(repo, commit).catch(() => ''), describeTags(repo, commit)]);
  return { ...(date ? { date } : {}), ...(describe ? { describe } : {}) };
}

/** Text of one file at a revision; BAD_INPUT when the file is not there. */
export async function readFileAt(repoOrPath: GitRepo | string, rev: string, path: string): Promise<string> {
  const repo = await asRepo(repoOrPath);
  const commit = await resolveRev(repo, rev);
  const files = await readTreeFiles(repo, `${commit}^{tree}`, [path.replace(/^\.\//, '')]);
  const content = files.values().next().value;
  if (!content) throw new SwtError('BAD_INPUT', `${path} does not exist at ${rev}`);
  return content.toString('utf8');
}

export interface OverlayTarOptions {
  /** Modification time of the written files; the default is a little in the past. */
  mtime?: Date;
  env?: Record<string, string>;
  /** A directory (created too) every path goes under, e.g. a staging directory. */
  prefix?: string;
}

/** The most a symlink's target may hold (Linux's PATH_MAX): it is read whole. */
const SYMLINK_MAX = 4096;

/**
 * A tar stream (for putArchive into /testbed) of the plan's directories and files, owned by the
 * sandbox user. Blobs are read with one cat-file process and streamed into the archive chunk by
 * chunk (a blob is never held whole); destroying the stream kills git.
 */
export function overlayTar(repo: GitRepo, plan: OverlayPlan, opts: OverlayTarOptions = {}): Readable {
  const pack = tarStream.pack();
  const stop = new AbortController();
  pack.on('close', () => stop.abort(new Error('the archive was closed')));
  const mtime = opts.mtime ?? new Date(Date.now() - 60_000);
  const owner = { uid: SANDBOX_UID, gid: SANDBOX_GID, uname: 'swt', gname: 'swt', mtime };
  const add = (header: Partial<tarStream.Header> & { name: string }, body?: AsyncGenerator<Buffer>) =>
    new Promise<void>((res, rej) => {
      const sink = pack.entry(header, (err?: Error | null) => (err ? rej(err) : res()));
      // Its failure comes through the callback (and the archive's own error).
      sink.on('error', () => undefined);
      if (body) void pour(body, sink).catch((e: Error) => sink.destroy(e));
    });
  const at = (p: string) => (opts.prefix ? `${opts.prefix}/${p}` : p);
  void (async () => {
    try {
      if (opts.prefix) await add({ ...owner, name: opts.prefix, type: 'directory', mode: 0o755 });
      for (const d of plan.dirs) await add({ ...owner, name: at(d), type: 'directory', mode: 0o755 });
      let i = 0;
      for await (const o of catFileObjects(repo.path, plan.write.map((w) => w.blob), opts.env ?? {}, stop.signal)) {
        const w = plan.write[i++]!;
        if (!o.found) throw new Error(`object ${w.blob} (${w.path}) is missing`);
        const t = gitModeToTar(w.mode);
        if (t.type === 'symlink') {
          if (o.size > SYMLINK_MAX) throw new Error(`symlink ${w.path} points at a path of ${o.size} bytes`);
          const parts: Buffer[] = [];
          for await (const c of o.body()) parts.push(c);
          await add({ ...owner, name: at(w.path), type: 'symlink', mode: t.mode, linkname: Buffer.concat(parts).toString('utf8') });
        } else await add({ ...owner, name: at(w.path), type: 'file', mode: t.mode, size: o.size }, o.body());
      }
      pack.finalize();
    } catch (e) {
      pack.destroy(e as Error);
    }
  })();
  return pack as unknown as Readable;
}

/** Writes a body into a tar entry as the archive is read (its back-pressure respected), then ends it. */
async function pour(body: AsyncGenerator<Buffer>, sink: ReturnType<tarStream.Pack['entry']>): Promise<void> {
  for await (const chunk of body) {
    if (!sink.write(chunk)) {
      await new Promise<void>((res) => {
        const done = () => {
          sink.off('drain', done);
          sink.off('close', done);
          res();
        };
        sink.on('drain', done);
        sink.on('close', done);
      });
    }
    if (sink.destroyed) throw new Error('the archive was closed');
  }
  sink.end(() => undefined);
}

/** What a plan puts into a container: bytes of its files, and the files, links and directories it creates. */
export interface PlanSize {
  bytes: number;
  files: number;
}

/** The size of a plan from git's object sizes (`cat-file --batch-check`), nothing read or checked out. */
export async function planSize(repo: GitRepo, plan: OverlayPlan, env: Record<string, string> = {}): Promise<PlanSize> {
  const sizes = await sizesOf(repo, [...new Set(plan.write.map((w) => w.blob))], env);
  let bytes = 0;
  for (const w of plan.write) bytes += sizes.get(w.blob) ?? 0;
  return { bytes, files: plan.write.length + plan.dirs.length };
}

/** What to put into and delete from /testbed so an image holding `fromRev` holds the state instead. */
export async function planStateOverlay(st: StateTree, fromRev: string): Promise<OverlayPlan> {
  const from = fromRev ? `${fromRev}^{tree}` : await emptyTree(st.repo);
  return planOverlay(await changedFiles(st.repo, from, st.tree, st.env));
}

/** A full throwaway checkout of a state in a temporary directory, for tools that need files on disk. */
export async function materialize(repoOrPath: GitRepo | string, state: RepoState): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const root = await makeTempDir('checkout');
  try {
    await withState(repoOrPath, state, async (st) => {
      const dir = join(root, 'tree');
      await mkdir(dir);
      const env = { ...st.env, GIT_INDEX_FILE: join(root, 'index') };
      await git(st.repo.path, ['read-tree', st.tree], { env });
      await git(st.repo.path, [`--work-tree=${dir}`, 'checkout-index', '--all', '--force'], { env });
    });
  } catch (e) {
    await removeTempDir(root);
    throw e;
  }
  return { dir: join(root, 'tree'), cleanup: () => removeTempDir(root) };
}

/** Paths that differ between a revision and a state (commit + patches). */
export async function changedPathsSince(repoOrPath: GitRepo | string, rev: string, state: RepoState): Promise<string[]> {
  const repo = await asRepo(repoOrPath);
  const from = `${await resolveRev(repo, rev)}^{tree}`;
  return withState(repo, state, async (st) => (await changedFiles(repo, from, st.tree, st.env)).map((c) => c.path));
}

/**
 * A patch as it landed on `rev` in state `st` (`rev` plus that patch): the diff from `rev`'s tree
 * at `paths`, its hunks where `git apply` put them (an offset taken when `rev` moved their lines).
 */
export async function landedPatch(st: StateTree, rev: string, paths: readonly string[]): Promise<string> {
  const from = `${await resolveRev(st.repo, rev)}^{tree}`;
  return paths.length ? git(st.repo.path, ['diff-tree', '-p', '--no-renames', from, st.tree, '--', ...paths.map((p) => `:(literal)${p}`)], { env: st.env }) : '';
}

/**
 * A patch that, applied to the state, gives `paths` as they are at `rev` (a path `rev` lacks is
 * deleted): binary-safe, full blob ids. Empty when they already are.
 */
export async function patchToRevAt(repoOrPath: GitRepo | string, state: RepoState, rev: string, paths: readonly string[]): Promise<string> {
  const repo = await asRepo(repoOrPath);
  const to = `${await resolveRev(repo, rev)}^{tree}`;
  return withState(repo, state, async (st) => {
    const parts: string[] = [];
    // In batches: a vendored tree can name thousands of paths, past one command line.
    for (let i = 0; i < paths.length; i += 500) {
      parts.push(await git(repo.path, ['diff-tree', '-p', '--binary', '--full-index', '--no-renames', st.tree, to, '--', ...paths.slice(i, i + 500).map((p) => `:(literal)${p}`)], { env: st.env }));
    }
    return parts.join('');
  });
}
