/**
 * Canonical unified git diff of in-memory changes: what gets stored, posted and shown, and what
 * `git apply` accepts on the original tree.
 */
import { structuredPatch } from 'diff';

export interface CanonicalChange {
  path: string;
  /** Null for a new file. */
  before: string | null;
  /** Null for a deleted file. */
  after: string | null;
  /** Git mode of a created file (default 100644). */
  mode?: string;
  /** Git mode of a deleted file (default 100644). */
  oldMode?: string;
}

function hunkRange(start: number, count: number): string {
  // git writes an empty range as `start,0` where start is the line before.
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** One file's `diff --git` section; empty when nothing changed. */
export function fileDiff(change: CanonicalChange, context = 3): string {
  const { path, before, after } = change;
  if (before === after) return '';
  const header: string[] = [`diff --git a/${path} b/${path}`];
  if (before === null) header.push(`new file mode ${change.mode ?? '100644'}`);
  if (after === null) header.push(`deleted file mode ${change.oldMode ?? '100644'}`);
  // An empty file created or deleted has no hunk: git writes the header alone.
  if ((before === null && after === '') || (after === null && before === '')) return header.join('\n') + '\n';
  header.push(before === null ? '--- /dev/null' : `--- a/${path}`);
  header.push(after === null ? '+++ /dev/null' : `+++ b/${path}`);
  const p = structuredPatch(`a/${path}`, `b/${path}`, before ?? '', after ?? '', undefined, undefined, { context });
  const body: string[] = [];
  for (const h of p.hunks) {
    // jsdiff numbers an empty side from the line before, like git, except it uses 1 for an empty file.
    const oldStart = h.oldLines === 0 ? h.oldStart - (before === null || before === '' ? 1 : 0) : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - (after === null || after === '' ? 1 : 0) : h.newStart;
    body.push(`@@ -${hunkRange(Math.max(0, oldStart), h.oldLines)} +${hunkRange(Math.max(0, newStart), h.newLines)} @@`);
    for (const l of h.lines) body.push(l);
  }
  if (body.length === 0) return '';
  return header.concat(body).join('\n') + '\n';
}

/** The canonical diff of several changes, files in the order given. */
export function canonicalDiff(changes: CanonicalChange[]): string {
  return changes.map((c) => fileDiff(c)).join('');
}
