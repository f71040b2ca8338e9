/**
 * `git describe --tags` of a commit, kept per process while the repository's tags stay as they
 * were: the answer depends on the commit (fixed) and on the tags, which a fetch moves. Whether
 * they moved is read from the files git keeps them in (packed-refs, every directory under
 * refs/tags, a reftable's list; a shallow clone's boundary and replacements change the history
 * describe walks), by stat alone: no git process. An answer is kept only once those files have
 * been still for SETTLED_MS, so that a change within their timestamps' grain cannot hide.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { runGit } from './gitExec.js';

const KEPT_MAX = 1000;
/** Tag files changed this recently may change again within their timestamps' grain (as git's racy index): not kept yet. */
const SETTLED_MS = 2000;
const kept = new Map<string, { tags: string; describe: string }>();

/** `git describe --tags commit`, or '' when no tag describes it. */
export async function describeTags(repo: { path: string; objectsDir: string }, commit: string): Promise<string> {
  const key = `${repo.objectsDir}\0${commit}`;
  const tags = await tagsSeen(repo.objectsDir);
  const hit = kept.get(key);
  if (tags && hit?.tags === tags.seen) return hit.describe;
  const r = await runGit(repo.path, ['describe', '--tags', commit]);
  const describe = r.code === 0 ? r.stdout.toString('utf8').trim() : '';
  // An answer, or "no tag": another failure is asked again. Tags that moved while git answered too.
  const answered = r.code === 0 || /No names found|cannot describe|No tags can describe/i.test(r.stderr);
  if (tags && answered && tags.newestMs < Date.now() - SETTLED_MS && (await tagsSeen(repo.objectsDir))?.seen === tags.seen) {
    kept.delete(key);
    if (kept.size >= KEPT_MAX) kept.delete(kept.keys().next().value!);
    kept.set(key, { tags: tags.seen, describe });
  }
  return describe;
}

/** What the tag files are now (inode, size, times of each) and the newest change among them; undefined when the objects are not in a git directory of their own. */
async function tagsSeen(objectsDir: string): Promise<{ seen: string; newestMs: number } | undefined> {
  if (basename(objectsDir) !== 'objects') return undefined;
  const common = dirname(objectsDir);
  const seen = await Promise.all(['packed-refs', 'reftable/tables.list', 'shallow', 'refs/replace'].map((f) => statOf(join(common, f))));
  await directories(join(common, 'refs', 'tags'), seen);
  return { seen: seen.map((s) => s.line).join('\n'), newestMs: Math.max(0, ...seen.map((s) => s.mtimeMs)) };
}

async function statOf(path: string): Promise<{ line: string; mtimeMs: number }> {
  try {
    const s = await stat(path, { bigint: true });
    return { line: `${path} ${s.ino} ${s.size} ${s.mtimeNs} ${s.ctimeNs}`, mtimeMs: Number(s.mtimeMs) };
  } catch {
    return { line: `${path} -`, mtimeMs: 0 };
  }
}

/** Every directory under `dir`, itself included: a tag written or removed changes its directory's times. */
async function directories(dir: string, seen: Array<{ line: string; mtimeMs: number }>): Promise<void> {
  seen.push(await statOf(dir));
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await directories(join(dir, e.name), seen);
}
