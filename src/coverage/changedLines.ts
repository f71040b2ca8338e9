/** The lines a unified diff removes and adds, per file. Pure. */
import { parsePatch } from 'diff';
import { SwtError } from '../util/errors.js';
import type { ChangedLines, LineRef } from './types.js';
import { diffPath } from '../patch/fileNames.js';

/**
 * Removed lines by their number in the old file, added lines by their number in the new one
 * (a modified line is both), as SWT-bench's extract_changed_lines_from_patch counts them.
 * `keep` selects files (e.g. not tests).
 */
export function changedLines(unifiedDiff: string, keep: (path: string) => boolean = () => true): ChangedLines {
  const out: ChangedLines = { removed: [], added: [] };
  if (!unifiedDiff.trim()) return out;
  let patches;
  try {
    patches = parsePatch(unifiedDiff);
  } catch (e) {
    throw new SwtError('PATCH_MALFORMED', `Cannot parse the code patch: ${(e as Error).message}`, { cause: e });
  }
  for (const p of patches) {
    const oldName = diffPath(p.oldFileName);
    const newName = diffPath(p.newFileName);
    for (const h of p.hunks) {
      let oldLine = h.oldStart;
      let newLine = h.newStart;
      for (const l of h.lines) {
        const mark = l[0];
        if (mark === '-') {
          if (oldName && keep(oldName)) out.removed.push({ file: oldName, line: oldLine });
          oldLine++;
        } else if (mark === '+') {
          if (newName && keep(newName)) out.added.push({ file: newName, line: newLine });
          newLine++;
        } else if (mark === ' ') {
          oldLine++;
          newLine++;
        }
      }
    }
  }
  return out;
}

/** The files a change touches on either side, sorted. */
export function changedFilesOf(changed: ChangedLines): string[] {
  return [...new Set([...changed.removed, ...changed.added].map((l: LineRef) => l.file))].sort();
}
