import { parsePatch, type StructuredPatch } from 'diff';
import type { SwtErrorCode } from '../util/errors.js';
import { diffPath } from '../patch/fileNames.js';
import { splitDiff } from '../patch/diffFiles.js';

/**
 * Turns `git apply` stderr into a one-line message that names the file and the hunk, e.g.
 * `test patch does not apply: tests/test_x.py, hunk 2 (@@ -40,6 +40,12 @@)`. Pure.
 */

export interface ApplyFailure {
  code: Extract<SwtErrorCode, 'PATCH_DOES_NOT_APPLY' | 'PATCH_MALFORMED'>;
  message: string;
}

interface HunkRef {
  file: string;
  /** 1-based position among the file's hunks. */
  index: number;
  header: string;
}

function hunkHeader(h: { oldStart: number; oldLines: number; newStart: number; newLines: number }): string {
  // parsePatch stores 0-length ranges one higher than the header says; undo it.
  const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
  const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
  return `@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`;
}

/** Files and hunks of a patch; where parsePatch rejects it (wrong counts), from splitDiff's sections. */
export function listHunks(patch: string): Array<{ file: string; hunks: Array<{ oldStart: number; header: string }> }> {
  let parsed: StructuredPatch[] | undefined;
  try {
    parsed = parsePatch(patch);
  } catch {
    parsed = undefined;
  }
  if (parsed) {
    return parsed
      .map((p) => ({
        file: diffPath(p.newFileName) ?? diffPath(p.oldFileName) ?? '',
        hunks: p.hunks.map((h) => ({ oldStart: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart, header: hunkHeader(h) })),
      }))
      .filter((f) => f.file !== '');
  }
  return splitDiff(patch).map((f) => ({
    file: f.path,
    hunks: f.hunks.flatMap((line) => {
      const h = /^(@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@)/.exec(line);
      return h ? [{ oldStart: Number(h[2]), header: h[1]! }] : [];
    }),
  }));
}

/** The hunk git meant by `patch failed: <file>:<line>` (line = the hunk's old start). */
export function findHunk(patch: string, file: string, line: number): HunkRef | undefined {
  const files = listHunks(patch).filter((f) => f.file === file);
  for (const f of files) {
    const i = f.hunks.findIndex((h) => h.oldStart === line);
    if (i >= 0) return { file, index: i + 1, header: f.hunks[i]!.header };
  }
  // Not exact (e.g. git counted differently): take the nearest hunk at or before the line.
  for (const f of files) {
    let best = -1;
    f.hunks.forEach((h, i) => {
      if (h.oldStart <= line) best = i;
    });
    if (best >= 0) return { file, index: best + 1, header: f.hunks[best]!.header };
  }
  return undefined;
}

/** A readable label for patch number `i` (0-based) of `n`. */
export function patchLabel(i: number, n: number, names?: string[]): string {
  const name = names?.[i]?.trim();
  if (name) return name;
  return n > 1 ? `patch ${i + 1} of ${n}` : 'patch';
}

export function describeApplyFailure(label: string, patch: string, stderr: string): ApplyFailure {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const failed = lines.map((l) => /^error: patch failed: (.+):(\d+)$/.exec(l)).find(Boolean);
  if (failed) {
    const file = failed[1]!;
    const hunk = findHunk(patch, file, Number(failed[2]));
    const where = hunk ? `${file}, hunk ${hunk.index} (${hunk.header})` : `${file}, at line ${failed[2]}`;
    return { code: 'PATCH_DOES_NOT_APPLY', message: `${label} does not apply: ${where}` };
  }
  const missing = lines.map((l) => /^error: (.+): (does not exist in index|No such file or directory)$/.exec(l)).find(Boolean);
  if (missing) {
    return { code: 'PATCH_DOES_NOT_APPLY', message: `${label} does not apply: ${missing[1]}, the file does not exist` };
  }
  const exists = lines.map((l) => /^error: (.+): already exists in (index|working directory)$/.exec(l)).find(Boolean);
  if (exists) {
    return { code: 'PATCH_DOES_NOT_APPLY', message: `${label} does not apply: ${exists[1]} already exists` };
  }
  const malformed = lines.find((l) =>
    /corrupt patch|No valid patches|lacks filename|unrecognized input|patch fragment without header|unexpected end|garbage/i.test(l),
  );
  if (malformed) {
    return { code: 'PATCH_MALFORMED', message: `${label} is not a valid unified diff: ${malformed.replace(/^(error|fatal): /, '')}` };
  }
  const first = lines.find((l) => /^(error|fatal):/.test(l)) ?? lines[0] ?? 'git apply failed';
  return { code: 'PATCH_DOES_NOT_APPLY', message: `${label} does not apply: ${first.replace(/^(error|fatal): /, '')}` };
}
