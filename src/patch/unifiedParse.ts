/**
 * The forgiving parser of unified diffs (wrong hunk counts, missing leading spaces on blank context
 * lines, prose and fences around it, `@@ @@` without numbers); unified.ts applies what it reads.
 */
import { toLf } from './text.js';
import { diffPath } from './fileNames.js';

export type HunkOp = ' ' | '-' | '+';

export interface HunkLine {
  op: HunkOp;
  text: string;
}

export interface UnifiedHunk {
  /** 1-based start in the old file as declared, null when the header had no numbers. */
  oldStart: number | null;
  oldCount: number | null;
  newStart: number | null;
  newCount: number | null;
  lines: HunkLine[];
  /** The old side has no newline at end of file. */
  oldNoNewline: boolean;
  newNoNewline: boolean;
  header: string;
}

export interface UnifiedFilePatch {
  oldPath: string | null;
  newPath: string | null;
  hunks: UnifiedHunk[];
  /** Declared with `new file mode` or `--- /dev/null`. */
  isNew: boolean;
  isDelete: boolean;
}

export interface UnifiedParse {
  files: UnifiedFilePatch[];
  warnings: string[];
  errors: string[];
}

const HUNK_RE = /^@@+\s*(?:-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?)?\s*@@+.*$/;
const FENCE_RE = /^\s*(```+|~~~+)\s*[\w+-]*\s*$/;

export function looksLikeUnified(text: string): boolean {
  const t = toLf(text);
  return /^(diff --git |--- \S|\+\+\+ \S|@@+ ?-\d|@@ ?@@)/m.test(t) && (/^@@/m.test(t) || /^\+\+\+ /m.test(t));
}

function cleanPath(raw: string): string | null {
  let p = raw.replace(/\t.*$/, '').trim();
  // `--- a/x.py 2024-01-01 10:00:00` style timestamps
  p = p.replace(/\s+\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?: [+-]\d{4})?$/, '');
  p = p.replace(/^["'`]|["'`]$/g, '');
  if (p === 'dev/null') return null;
  return diffPath(p) ?? null;
}

export function parseUnifiedDiff(text: string): UnifiedParse {
  const lines = toLf(text).split('\n');
  // The text's final newline ends the last line; it does not start an empty one.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const p: Parsing = { lines, files: [], warnings: [], errors: [], cur: null, gitHeader: false };
  for (let i = 0; i < lines.length; ) i = readLine(p, i);
  for (const f of p.files) {
    if (f.hunks.length === 0 && !f.isDelete) p.warnings.push(`${f.newPath ?? f.oldPath}: no hunks`);
  }
  return { files: p.files.filter((f) => f.hunks.length > 0 || f.isDelete || f.isNew), warnings: p.warnings, errors: p.errors };
}

interface Parsing extends UnifiedParse {
  lines: string[];
  /** The file the lines read belong to. */
  cur: UnifiedFilePatch | null;
  /** `cur` began with `diff --git` and has had no `---`/`+++` pair yet. */
  gitHeader: boolean;
}

/** A `---` line followed by a `+++` line: a file's header. */
function fileHeaderAt(lines: string[], i: number): boolean {
  return lines[i]!.startsWith('--- ') && i + 1 < lines.length && lines[i + 1]!.startsWith('+++ ');
}

function startFile(p: Parsing): UnifiedFilePatch {
  p.cur = { oldPath: null, newPath: null, hunks: [], isNew: false, isDelete: false };
  p.files.push(p.cur);
  return p.cur;
}

/** Reads the header or hunk at line `i` (anything else is passed over); returns the next line to read. */
function readLine(p: Parsing, i: number): number {
  const line = p.lines[i]!;
  const git = /^diff --git\s+(\S+)\s+(\S+)\s*$/.exec(line);
  if (git) {
    const cur = startFile(p);
    p.gitHeader = true;
    cur.oldPath = cleanPath(git[1]!);
    cur.newPath = cleanPath(git[2]!);
    return i + 1;
  }
  if (fileHeaderAt(p.lines, i)) {
    const cur = !p.cur || p.cur.hunks.length > 0 || !p.gitHeader ? startFile(p) : p.cur;
    cur.oldPath = cleanPath(line.slice(4));
    cur.newPath = cleanPath(p.lines[i + 1]!.slice(4));
    if (cur.oldPath === null) cur.isNew = true;
    if (cur.newPath === null) cur.isDelete = true;
    p.gitHeader = false;
    return i + 2;
  }
  if (p.cur && /^new file mode /.test(line)) p.cur.isNew = true;
  if (p.cur && /^deleted file mode /.test(line)) p.cur.isDelete = true;
  const h = HUNK_RE.exec(line);
  if (!h) return i + 1;
  if (!p.cur) p.errors.push(`PATCH_MALFORMED: hunk at line ${i + 1} has no file header (--- a/path, +++ b/path)`);
  const cur = p.cur ?? startFile(p);
  const { hunk, next } = readHunk(p.lines, i, h, line);
  if (hunk.lines.length === 0) p.warnings.push(`hunk ${hunk.header} is empty`);
  else cur.hunks.push(hunk);
  return next;
}

/** One hunk from its header line `start` on: its lines up to the next header, hunk, fence or prose; and where reading stopped. */
function readHunk(lines: string[], start: number, h: RegExpExecArray, line: string): { hunk: UnifiedHunk; next: number } {
  const hunk: UnifiedHunk = {
    oldStart: h[1] !== undefined ? Number(h[1]) : null,
    oldCount: h[1] !== undefined ? (h[2] !== undefined ? Number(h[2]) : 1) : null,
    newStart: h[3] !== undefined ? Number(h[3]) : null,
    newCount: h[3] !== undefined ? (h[4] !== undefined ? Number(h[4]) : 1) : null,
    lines: [],
    oldNoNewline: false,
    newNoNewline: false,
    header: line.trim(),
  };
  let i = start + 1;
  const bare: boolean[] = [];
  let endedByProse = false;
  for (; i < lines.length; i++) {
    const l = lines[i];
    if (HUNK_RE.test(l) || /^diff --git /.test(l)) break;
    if (fileHeaderAt(lines, i)) break;
    if (FENCE_RE.test(l)) {
      endedByProse = true;
      break;
    }
    if (l.startsWith('\\')) {
      const last = hunk.lines[hunk.lines.length - 1];
      if (last?.op === '-') hunk.oldNoNewline = true;
      else if (last?.op === '+') hunk.newNoNewline = true;
      else if (last) {
        hunk.oldNoNewline = true;
        hunk.newNoNewline = true;
      }
      continue;
    }
    const c = l[0];
    if (c === ' ' || c === '-' || c === '+') {
      hunk.lines.push({ op: c, text: l.slice(1) });
      bare.push(false);
    } else if (l === '' || /^\s+$/.test(l)) {
      hunk.lines.push({ op: ' ', text: '' });
      bare.push(true);
    } else {
      endedByProse = true;
      break;
    }
  }
  // Trailing bare blank lines are usually separators, not context, unless the counts need them.
  if (bare.length > 0 && bare[bare.length - 1]) {
    const oldN = hunk.lines.filter((x) => x.op !== '+').length;
    const newN = hunk.lines.filter((x) => x.op !== '-').length;
    // Blank lines before prose or a fence separate the diff from it; otherwise keep them if the counts do.
    const countsNeedThem = !endedByProse && hunk.oldCount === oldN && hunk.newCount === newN;
    while (!countsNeedThem && bare.length > 0 && bare[bare.length - 1]) {
      hunk.lines.pop();
      bare.pop();
    }
  }
  return { hunk, next: i };
}
