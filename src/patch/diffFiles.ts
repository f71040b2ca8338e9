/**
 * A unified diff cut into its files (git's `diff --git` sections, or plain `---`/`+++` ones): the one
 * place that scans a diff's headers, with fileNames.ts reading the names in them. Pure.
 */
import { diffPath } from './fileNames.js';

export interface DiffFile {
  /** Path after the change (before it, for a deletion). */
  path: string;
  oldPath?: string;
  isNew: boolean;
  isDeleted: boolean;
  /** The file's whole section of the diff, from its `diff --git` line. */
  text: string;
  /** From the first hunk header on: `@@` lines and the hunks' own lines (what readers of a file's changes walk). */
  hunks: string[];
  /** Added lines, without the leading '+'. */
  added: string[];
  removed: string[];
}

/** Splits a unified diff into files. Accepts git diffs and plain `---/+++` diffs. */
export function splitDiff(diff: string): DiffFile[] {
  const lines = diff.replace(/\r\n/g, '\n').split('\n');
  const starts: number[] = [];
  const git = lines.some((l) => l.startsWith('diff --git '));
  for (let i = 0; i < lines.length; i++) {
    if (git ? lines[i].startsWith('diff --git ') : lines[i].startsWith('--- ') && lines[i + 1]?.startsWith('+++ ') && lines[i + 2]?.startsWith('@@')) starts.push(i);
  }
  const files: DiffFile[] = [];
  for (let k = 0; k < starts.length; k++) {
    const body = lines.slice(starts[k], k + 1 < starts.length ? starts[k + 1] : lines.length);
    let oldP: string | undefined;
    let newP: string | undefined;
    let isNew = false;
    let isDeleted = false;
    const added: string[] = [];
    const removed: string[] = [];
    const hunks: string[] = [];
    let inHunk = false;
    for (const l of body) {
      if (inHunk || l.startsWith('@@')) hunks.push(l);
      if (!inHunk && l.startsWith('diff --git ')) {
        const m = /^diff --git (\S+|"[^"]+") (\S+|"[^"]+")$/.exec(l);
        if (m) {
          oldP = diffPath(m[1]);
          newP = diffPath(m[2]);
        }
      } else if (!inHunk && l.startsWith('new file mode')) isNew = true;
      else if (!inHunk && l.startsWith('deleted file mode')) isDeleted = true;
      else if (!inHunk && l.startsWith('--- ')) {
        const p = diffPath(l.slice(4));
        if (p === undefined) isNew = true;
        else oldP = p;
      } else if (!inHunk && l.startsWith('+++ ')) {
        const p = diffPath(l.slice(4));
        if (p === undefined) isDeleted = true;
        else newP = p;
      } else if (l.startsWith('@@')) inHunk = true;
      else if (inHunk && l.startsWith('+')) added.push(l.slice(1));
      else if (inHunk && l.startsWith('-')) removed.push(l.slice(1));
    }
    const path = (isDeleted ? oldP : newP) ?? oldP ?? '';
    let text = body.join('\n');
    if (!text.endsWith('\n')) text += '\n';
    files.push({ path, oldPath: oldP !== path ? oldP : undefined, isNew, isDeleted, text, hunks, added, removed });
  }
  return files.filter((f) => f.path);
}

export function joinDiff(files: readonly DiffFile[]): string {
  return files.map((f) => f.text).join('');
}
