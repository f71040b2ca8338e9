/**
 * Overlay planning: what to copy into /testbed and what to delete there so that a container made
 * from an environment image (files of snapshotRev) holds a given repository state. Pure.
 */
import { shellQuote } from '../util/shell.js';

export interface TreeChange {
  status: 'A' | 'M' | 'D' | 'T';
  path: string;
  /** Git mode of the new side ('100644', '100755', '120000', '160000'), or '000000' when deleted. */
  mode: string;
  /** Blob id of the new side (all zeros when deleted). */
  blob: string;
}

export interface OverlayFile {
  path: string;
  mode: string;
  blob: string;
}

export interface OverlayPlan {
  /** Files (and symlinks) to write, sorted by path. */
  write: OverlayFile[];
  /** Paths to delete, sorted. */
  delete: string[];
  /** Directories to create (owned by the sandbox user) before writing, parents first. */
  dirs: string[];
  /** Gitlinks (submodules) that cannot be materialised from this repository. */
  skipped: string[];
}

/** Parses `git diff-tree -r -z --no-renames` raw output. */
export function parseDiffTreeRaw(raw: string): TreeChange[] {
  const parts = raw.split('\0');
  const out: TreeChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i]!;
    const path = parts[i + 1]!;
    const m = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([AMDT])\d*$/.exec(meta.replace(/^\n/, ''));
    if (!m) throw new Error(`unexpected git diff-tree output: ${JSON.stringify(meta)}`);
    out.push({ status: m[5] as TreeChange['status'], path, mode: m[2]!, blob: m[4]! });
  }
  return out;
}

export function parentDirs(path: string): string[] {
  const segs = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segs.length; i++) out.push(segs.slice(0, i).join('/'));
  return out;
}

export function planOverlay(changes: TreeChange[]): OverlayPlan {
  const write: OverlayFile[] = [];
  const del: string[] = [];
  const skipped: string[] = [];
  for (const c of changes) {
    if (c.status === 'D') del.push(c.path);
    else if (c.mode === '160000') skipped.push(c.path);
    else write.push({ path: c.path, mode: c.mode, blob: c.blob });
  }
  const dirs = new Set<string>();
  for (const w of write) for (const d of parentDirs(w.path)) dirs.add(d);
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return {
    write: write.sort(byPath),
    delete: del.sort(),
    // Shorter paths first puts every parent before its children.
    dirs: [...dirs].sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0)),
    skipped: skipped.sort(),
  };
}

/**
 * Shell lines that delete the plan's removed paths in /testbed (run as the sandbox user before
 * the command). Batched so a large deletion never hits the argument-length limit.
 */
export function deletionScript(paths: string[], root = '/testbed', batch = 200): string {
  const lines: string[] = [];
  for (let i = 0; i < paths.length; i += batch) {
    const chunk = paths.slice(i, i + batch).map((p) => shellQuote(`${root}/${p}`));
    lines.push(`rm -f -- ${chunk.join(' ')} 2>/dev/null || true`);
  }
  return lines.join('\n');
}

export function gitModeToTar(mode: string): { type: 'file' | 'symlink'; mode: number } {
  if (mode === '120000') return { type: 'symlink', mode: 0o777 };
  if (mode === '100755') return { type: 'file', mode: 0o755 };
  return { type: 'file', mode: 0o644 };
}
