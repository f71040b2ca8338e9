/**
 * The file names in a diff's headers (`diff --git`, `---`, `+++`, or jsdiff's
 * oldFileName/newFileName) as paths: the one definition every diff reader uses; and a diff's
 * files, parsed by jsdiff, named by it. Pure.
 */
import { parsePatch, type StructuredPatch } from 'diff';
import { SwtError } from '../util/errors.js';

function unquoted(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let name = raw.split('\t')[0]!.trim(); // after a tab: GNU diff's timestamp
  if (name.length > 1 && name.startsWith('"') && name.endsWith('"')) {
    try {
      name = JSON.parse(name) as string; // git quotes names with special characters
    } catch {
      name = name.slice(1, -1);
    }
  }
  return name === '' || name === '/dev/null' ? undefined : name;
}

/**
 * One header's name as a path, its `a/` or `b/` prefix stripped (unless `prefixed` is false);
 * undefined for `/dev/null` (the absent side of an added or deleted file) and for nothing.
 */
export function diffPath(raw: string | undefined, prefixed = true): string | undefined {
  const name = unquoted(raw);
  return name !== undefined && prefixed ? name.replace(/^[ab]\//, '') : name;
}

/**
 * A file's old and new names. git's diffs (`git`, or names `a/…` before and `b/…` after) lose
 * their prefixes; a plain `diff -u` keeps a directory that happens to be called a/ or b/.
 */
export function diffPaths(oldRaw: string | undefined, newRaw: string | undefined, git = false): { oldPath?: string; newPath?: string } {
  const o = unquoted(oldRaw);
  const n = unquoted(newRaw);
  const prefixed = git || ((o === undefined || o.startsWith('a/')) && (n === undefined || n.startsWith('b/')));
  return { oldPath: diffPath(o, prefixed), newPath: diffPath(n, prefixed) };
}

/** A file of a parsed diff with its paths as diffPaths reads them. */
export type PatchFile = StructuredPatch & { oldPath?: string; newPath?: string; isDelete?: boolean };

/** The files of a unified diff (jsdiff); one jsdiff cannot parse is PATCH_MALFORMED. */
export function patchFiles(unifiedDiff: string): PatchFile[] {
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(unifiedDiff);
  } catch (e) {
    throw new SwtError('PATCH_MALFORMED', `Cannot parse the patch: ${(e as Error).message}`, { cause: e });
  }
  // jsdiff marks git's headers (isGit): their a/ and b/ are prefixes whatever the names look like.
  return patches.map((p) => ({ ...p, ...diffPaths(p.oldFileName, p.newFileName, (p as { isGit?: boolean }).isGit) }));
}
