/**
 * Tolerant unified diffs: a forgiving parser (wrong hunk counts, missing leading spaces on blank
 * context lines, prose and fences around it, `@@ @@` without numbers) and an applier that tries the
 * strict application first and then, hunk by hunk, fuzzy ones: ignoring line numbers, comparing
 * lines without regard to whitespace, dropping up to two context lines at either end, and ignoring
 * blank lines. A hunk is placed only where it matches uniquely (or, among equal matches, at the
 * line its header gives, give or take the context it is missing); otherwise it is refused. Every
 * hunk gets a report of what applied and how.
 */
import { detectIndentStyle, indentWidth, isBlank, joinText, leadingWhitespace, renderIndent, splitText, toLf, wsKey, type IndentStyle, type SplitText } from './text.js';
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
  const files: UnifiedFilePatch[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  let cur: UnifiedFilePatch | null = null;
  let gitHeader = false;
  let i = 0;
  const newFile = (): UnifiedFilePatch => ({ oldPath: null, newPath: null, hunks: [], isNew: false, isDelete: false });
  while (i < lines.length) {
    const line = lines[i];
    const git = /^diff --git\s+(\S+)\s+(\S+)\s*$/.exec(line);
    if (git) {
      cur = newFile();
      gitHeader = true;
      cur.oldPath = cleanPath(git[1]);
      cur.newPath = cleanPath(git[2]);
      files.push(cur);
      i++;
      continue;
    }
    if (line.startsWith('--- ') && i + 1 < lines.length && lines[i + 1].startsWith('+++ ')) {
      if (!cur || cur.hunks.length > 0 || !gitHeader) {
        cur = newFile();
        files.push(cur);
      }
      const oldP = cleanPath(line.slice(4));
      const newP = cleanPath(lines[i + 1].slice(4));
      cur.oldPath = oldP;
      cur.newPath = newP;
      if (oldP === null) cur.isNew = true;
      if (newP === null) cur.isDelete = true;
      gitHeader = false;
      i += 2;
      continue;
    }
    if (cur && /^new file mode /.test(line)) {
      cur.isNew = true;
      i++;
      continue;
    }
    if (cur && /^deleted file mode /.test(line)) {
      cur.isDelete = true;
      i++;
      continue;
    }
    const h = HUNK_RE.exec(line);
    if (h) {
      if (!cur) {
        errors.push(`PATCH_MALFORMED: hunk at line ${i + 1} has no file header (--- a/path, +++ b/path)`);
        cur = newFile();
        files.push(cur);
      }
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
      i++;
      const bare: boolean[] = [];
      let endedByProse = false;
      for (; i < lines.length; i++) {
        const l = lines[i];
        if (HUNK_RE.test(l) || /^diff --git /.test(l)) break;
        if (l.startsWith('--- ') && i + 1 < lines.length && lines[i + 1].startsWith('+++ ')) break;
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
      if (hunk.lines.length === 0) warnings.push(`hunk ${hunk.header} is empty`);
      else cur.hunks.push(hunk);
      continue;
    }
    i++;
  }
  for (const f of files) {
    if (f.hunks.length === 0 && !f.isDelete) warnings.push(`${f.newPath ?? f.oldPath}: no hunks`);
  }
  return { files: files.filter((f) => f.hunks.length > 0 || f.isDelete || f.isNew), warnings, errors };
}

export type HunkStatus = 'exact' | 'offset' | 'whitespace' | 'fuzzy' | 'failed';

export interface HunkReport {
  index: number;
  header: string;
  status: HunkStatus;
  /** 1-based line in the original file where the hunk's old lines start. */
  at?: number;
  /** Found position minus declared position. */
  offset?: number;
  /** Context lines dropped to make it fit. */
  fuzz?: number;
  message: string;
}

export interface FileApplyResult {
  ok: boolean;
  /** New content, null when the file is deleted. */
  text: string | null;
  reports: HunkReport[];
  warnings: string[];
  error?: string;
}

type Level = 'exact' | 'ws' | 'blank';

interface Located {
  /** 0-based index of the first file line of the match. */
  start: number;
  /** One past the last matched file line. */
  end: number;
  /** Hunk lines used (after dropping context for fuzz). */
  lines: HunkLine[];
  level: Level;
  fuzz: number;
  note?: string;
}

const eq = {
  exact: (a: string, b: string) => a === b,
  ws: (a: string, b: string) => a === b || wsKey(a) === wsKey(b),
};

/** All positions where `old` matches `file` contiguously under `cmp`, from `from` on. */
function findAll(file: string[], keys: string[] | null, old: string[], cmp: (a: string, b: string) => boolean, from: number): number[] {
  const out: number[] = [];
  if (old.length === 0) return out;
  const first = old[0];
  const firstKey = keys ? wsKey(first) : null;
  for (let p = Math.max(0, from); p + old.length <= file.length; p++) {
    if (keys ? keys[p] !== firstKey : !cmp(file[p], first)) continue;
    let ok = true;
    for (let k = 1; k < old.length; k++) {
      if (keys ? keys[p + k] !== wsKey(old[k]) : !cmp(file[p + k], old[k])) {
        ok = false;
        break;
      }
    }
    if (ok) out.push(p);
  }
  return out;
}

/** Blank-insensitive matches: the hunk's non-blank old lines against the file's non-blank lines. */
function findAllIgnoringBlank(file: string[], nonBlank: number[], nbKeys: string[], old: string[], from: number): { start: number; end: number }[] {
  const want = old.filter((l) => !isBlank(l)).map(wsKey);
  const out: { start: number; end: number }[] = [];
  if (want.length === 0) return out;
  for (let q = 0; q + want.length <= nonBlank.length; q++) {
    if (nonBlank[q] < from) continue;
    let ok = true;
    for (let k = 0; k < want.length; k++) {
      if (nbKeys[q + k] !== want[k]) {
        ok = false;
        break;
      }
    }
    if (ok) out.push({ start: nonBlank[q], end: nonBlank[q + want.length - 1] + 1 });
  }
  void file;
  return out;
}

function dropContext(lines: HunkLine[], top: number, bottom: number): HunkLine[] | null {
  let s = 0;
  let e = lines.length;
  for (let k = 0; k < top; k++) {
    if (s < e && lines[s].op === ' ') s++;
    else return null;
  }
  for (let k = 0; k < bottom; k++) {
    if (e > s && lines[e - 1].op === ' ') e--;
    else return null;
  }
  const out = lines.slice(s, e);
  // Something that is not blank must anchor the hunk.
  if (!out.some((l) => l.op !== '+' && !isBlank(l.text))) return null;
  return out;
}

/**
 * Merges hunk lines into the file region [start, end): context and removed lines are matched to
 * the file's lines (whitespace-insensitively, skipping blank lines on either side that the other
 * lacks); context keeps the file's text; added lines are normalised.
 */
function merge(file: string[], start: number, end: number, lines: HunkLine[], fixAdded: (s: string) => string): string[] | null {
  const out: string[] = [];
  let j = start;
  for (let i = 0; i < lines.length; i++) {
    const h = lines[i];
    if (h.op === '+') {
      out.push(fixAdded(h.text));
      continue;
    }
    // Skip blank file lines the hunk does not have.
    while (j < end && isBlank(file[j]) && !isBlank(h.text)) {
      out.push(file[j]);
      j++;
    }
    if (j >= end) {
      if (isBlank(h.text)) continue; // a blank context line the file lacks
      return null;
    }
    if (isBlank(h.text) && !isBlank(file[j])) continue;
    if (wsKey(file[j]) !== wsKey(h.text)) return null;
    if (h.op === ' ') out.push(file[j]);
    j++;
  }
  while (j < end) {
    out.push(file[j]);
    j++;
  }
  return out;
}

/** Indentation change that maps the hunk's context onto the file, if consistent. */
function indentShift(file: string[], start: number, end: number, lines: HunkLine[], style: IndentStyle): number {
  const deltas = new Map<number, number>();
  let j = start;
  let total = 0;
  for (const h of lines) {
    if (h.op === '+') continue;
    while (j < end && isBlank(file[j]) && !isBlank(h.text)) j++;
    if (j >= end) break;
    if (isBlank(h.text)) {
      if (isBlank(file[j])) j++;
      continue;
    }
    const d = indentWidth(file[j], style.unit) - indentWidth(h.text, style.unit);
    deltas.set(d, (deltas.get(d) ?? 0) + 1);
    total++;
    j++;
  }
  let best = 0;
  let count = 0;
  for (const [d, c] of deltas) if (c > count) [best, count] = [d, c];
  return total > 0 && count >= Math.ceil(total * 0.8) ? best : 0;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * A new file's lines, normalised: trailing whitespace stripped; leading tabs expanded when the rest
 * is indented with spaces; indentation that every line shares (a shifted hunk) removed.
 */
function normalizeNewFile(lines: string[], name: string, warnings: string[]): string[] {
  let out = lines.map((l) => l.replace(/[ \t\r]+$/, ''));
  const spaceIndented = out.filter((l) => /^ +\S/.test(l));
  const tabIndented = out.filter((l) => /^\t/.test(l));
  if (tabIndented.length > 0 && spaceIndented.length > 0) {
    // The spaces' unit when the spaced lines show it (two or more depths), else the language's usual one.
    let unit = 0;
    for (const l of spaceIndented) unit = gcd(unit, leadingWhitespace(l).length);
    const depths = new Set(spaceIndented.map((l) => leadingWhitespace(l).length));
    if (![2, 4, 8].includes(unit) || depths.size < 2) unit = /\.py$/.test(name) ? 4 : 2;
    out = out.map((l) => {
      const ws = leadingWhitespace(l);
      return ws.includes('\t') ? ' '.repeat(indentWidth(l, unit)) + l.slice(ws.length) : l;
    });
    warnings.push(`${name}: converted tabs to spaces in the new file`);
  }
  const nonBlank = out.filter((l) => l !== '');
  const common = nonBlank.length > 0 ? Math.min(...nonBlank.map((l) => (/^ */.exec(l) ?? [''])[0].length)) : 0;
  if (common > 0) {
    out = out.map((l) => l.slice(Math.min(common, l.length)));
    warnings.push(`${name}: every line of the new file was indented by ${common}; removed it`);
  }
  return out;
}

export interface UnifiedApplyOptions {
  /** Maximum context lines dropped at each end. */
  maxFuzz?: number;
}

/** Applies one file's hunks to its original text (null if it does not exist). */
export function applyUnifiedToText(original: string | null, patch: UnifiedFilePatch, opts: UnifiedApplyOptions = {}): FileApplyResult {
  const maxFuzz = opts.maxFuzz ?? 2;
  const reports: HunkReport[] = [];
  const warnings: string[] = [];
  const name = patch.newPath ?? patch.oldPath ?? '?';

  if (patch.isNew || (original === null && patch.hunks.every((h) => h.lines.every((l) => l.op === '+')))) {
    if (original !== null && original !== '') {
      return { ok: false, text: null, reports, warnings, error: `${name} already exists; the patch creates it` };
    }
    const added = normalizeNewFile(
      patch.hunks.flatMap((h) => h.lines.filter((l) => l.op !== '-').map((l) => l.text)),
      name,
      warnings,
    );
    const noNl = patch.hunks.length > 0 && patch.hunks[patch.hunks.length - 1].newNoNewline;
    patch.hunks.forEach((h, k) => reports.push({ index: k + 1, header: h.header, status: 'exact', at: 1, message: 'new file' }));
    return { ok: true, text: joinText({ lines: added, eol: '\n', finalNewline: !noNl }), reports, warnings };
  }
  if (original === null) return { ok: false, text: null, reports, warnings, error: `${name} does not exist` };

  const src: SplitText = splitText(original);
  const file = src.lines;
  if (patch.isDelete) {
    const oldLines = patch.hunks.flatMap((h) => h.lines.filter((l) => l.op !== '+').map((l) => l.text));
    if (oldLines.length > 0 && oldLines.map(wsKey).join('\n') !== file.map(wsKey).join('\n')) {
      return { ok: false, text: null, reports, warnings, error: `${name}: the deletion does not match the file's content` };
    }
    return { ok: true, text: null, reports, warnings };
  }

  const style = detectIndentStyle(file, 4);
  const keys = file.map(wsKey);
  const nonBlank: number[] = [];
  file.forEach((l, k) => {
    if (!isBlank(l)) nonBlank.push(k);
  });
  const nbKeys = nonBlank.map((k) => keys[k]);

  // 1. Strict: every hunk exactly where its header says.
  const strict: Located[] = [];
  let strictOk = true;
  for (const h of patch.hunks) {
    const old = h.lines.filter((l) => l.op !== '+').map((l) => l.text);
    const newLen = h.lines.length - h.lines.filter((l) => l.op === '-').length;
    const countsOk = h.oldCount === old.length && h.newCount === newLen;
    const p = h.oldStart === null || !countsOk ? -1 : old.length === 0 ? h.oldStart : h.oldStart - 1;
    if (p < 0 || p + old.length > file.length || !old.every((l, k) => file[p + k] === l)) {
      strictOk = false;
      break;
    }
    if (strict.length > 0 && p < strict[strict.length - 1].end) {
      strictOk = false;
      break;
    }
    strict.push({ start: p, end: p + old.length, lines: h.lines, level: 'exact', fuzz: 0 });
  }

  let located: (Located | null)[];
  if (strictOk) {
    located = strict;
    patch.hunks.forEach((h, k) => reports.push({ index: k + 1, header: h.header, status: 'exact', at: strict[k].start + 1, offset: 0, message: `applied exactly at line ${strict[k].start + 1}` }));
  } else {
    located = [];
    let minPos = 0;
    let delta = 0;
    for (const [k, h] of patch.hunks.entries()) {
      const r = locate(h, minPos, delta);
      if ('error' in r) {
        located.push(null);
        reports.push({ index: k + 1, header: h.header, status: 'failed', message: r.error });
        continue;
      }
      located.push(r);
      minPos = r.end;
      const declared = h.oldStart === null ? null : h.oldStart - 1;
      if (declared !== null) delta = r.start - declared - leadingDropped(h, r);
      const offset = declared === null ? undefined : r.start - declared;
      const status: HunkStatus = r.level === 'exact' && r.fuzz === 0 ? (offset === 0 ? 'exact' : 'offset') : r.fuzz > 0 ? 'fuzzy' : 'whitespace';
      const how = [
        `at line ${r.start + 1}`,
        offset !== undefined && offset !== 0 ? `offset ${offset > 0 ? '+' : ''}${offset}` : declared === null ? 'no line numbers' : '',
        r.level === 'ws' ? 'ignoring whitespace' : r.level === 'blank' ? 'ignoring whitespace and blank lines' : '',
        r.fuzz > 0 ? `dropping ${r.fuzz} context line${r.fuzz > 1 ? 's' : ''}` : '',
        r.note ?? '',
      ].filter(Boolean);
      reports.push({ index: k + 1, header: h.header, status, at: r.start + 1, offset, fuzz: r.fuzz, message: `applied ${how.join(', ')}` });
    }
  }

  const failed = reports.filter((r) => r.status === 'failed');
  if (failed.length > 0) {
    return { ok: false, text: null, reports, warnings, error: `${name}: ${failed.map((r) => `hunk ${r.index} (${r.header}) ${r.message}`).join('; ')}` };
  }

  // Apply from the bottom up so positions stay valid.
  let strippedWs = 0;
  let fixedTabs = 0;
  const out = file.slice();
  const order = located.map((l, k) => ({ l: l!, k })).sort((a, b) => b.l.start - a.l.start);
  for (const { l, k } of order) {
    const h = patch.hunks[k];
    const shift = l.level === 'exact' ? 0 : indentShift(file, l.start, l.end, l.lines, style);
    const fixAdded = (s: string) => {
      let t = s;
      const trimmed = t.replace(/[ \t]+$/, '');
      if (trimmed !== t) strippedWs++;
      t = trimmed;
      const ws = leadingWhitespace(t);
      if (!style.tabs && ws.includes('\t')) {
        fixedTabs++;
        t = ' '.repeat(indentWidth(t, style.unit)) + t.slice(ws.length);
      }
      if (shift !== 0 && t !== '') {
        const w = Math.max(0, indentWidth(t, style.unit) + shift);
        t = renderIndent(w, style) + t.slice(leadingWhitespace(t).length);
      }
      return t;
    };
    const merged = merge(file, l.start, l.end, l.lines, fixAdded);
    if (!merged) {
      return { ok: false, text: null, reports, warnings, error: `${name}: hunk ${k + 1} (${h.header}) matched but could not be merged` };
    }
    out.splice(l.start, l.end - l.start, ...merged);
    if (shift !== 0) warnings.push(`${name}: hunk ${k + 1}: re-indented added lines by ${shift > 0 ? '+' : ''}${shift} columns to match the file`);
    if (l.end >= file.length) {
      if (h.newNoNewline) src.finalNewline = false;
      else if (h.oldNoNewline) src.finalNewline = true;
    }
  }
  if (strippedWs > 0) warnings.push(`${name}: stripped trailing whitespace from ${strippedWs} added line${strippedWs > 1 ? 's' : ''}`);
  if (fixedTabs > 0) warnings.push(`${name}: converted tabs to spaces in ${fixedTabs} added line${fixedTabs > 1 ? 's' : ''}`);
  if (out.length > 0 && src.lines.length === 0) src.finalNewline = true;
  return { ok: true, text: joinText({ ...src, lines: out }), reports, warnings };

  function wsMatchAt(lines: HunkLine[], at: number): boolean {
    const old = lines.filter((l) => l.op !== '+').map((l) => wsKey(l.text));
    if (at < 0 || at + old.length > file.length) return false;
    return old.every((k, i) => keys[at + i] === k);
  }

  function leadingDropped(h: UnifiedHunk, r: Located): number {
    let n = 0;
    while (n < h.lines.length && h.lines[n] !== r.lines[0]) n++;
    return n;
  }

  function locate(h: UnifiedHunk, minPos: number, delta: number): Located | { error: string } {
    const declared = h.oldStart === null ? null : Math.max(0, h.oldStart - 1 + delta);
    const declaredOld = h.oldCount;
    const actualOld = h.lines.filter((l) => l.op !== '+').length;
    const missing = declaredOld !== null ? Math.max(0, declaredOld - actualOld) : 0;
    if (!h.lines.some((l) => l.op !== '+' && !isBlank(l.text)) && actualOld > 0) {
      // Only blank lines as context: they match everywhere; only a consistent header can place it.
      if (declared === null || declaredOld !== actualOld || !wsMatchAt(h.lines, declared)) return { error: 'has only blank context lines and its header does not place it; cannot locate it' };
      return { start: declared, end: declared + actualOld, lines: h.lines, level: 'ws', fuzz: 0, note: 'placed by its header (blank context only)' };
    }
    if (actualOld === 0) {
      // Pure insertion without context: only its line number can place it.
      if (h.oldStart === null) return { error: 'has no context and no line number' };
      if (h.oldCount !== null && h.oldCount !== 0) return { error: `has no context lines although its header claims ${h.oldCount}; cannot place it` };
      const p = Math.min(file.length, h.oldStart + delta);
      return { start: p, end: p, lines: h.lines, level: 'exact', fuzz: 0, note: 'placed by line number only (no context)' };
    }
    let ambiguous = '';
    for (let fuzz = 0; fuzz <= maxFuzz; fuzz++) {
      const variants: { lines: HunkLine[]; top: number }[] = [];
      for (let top = 0; top <= fuzz; top++) {
        const v = dropContext(h.lines, top, fuzz - top);
        if (v && (fuzz === 0 || v.length < h.lines.length)) variants.push({ lines: v, top });
      }
      if (variants.length === 0) continue;
      for (const level of ['exact', 'ws', 'blank'] as Level[]) {
        const found: { start: number; end: number; lines: HunkLine[]; top: number }[] = [];
        for (const v of variants) {
          const old = v.lines.filter((l) => l.op !== '+').map((l) => l.text);
          if (level === 'blank') {
            for (const m of findAllIgnoringBlank(file, nonBlank, nbKeys, old, minPos)) found.push({ ...m, lines: v.lines, top: v.top });
          } else {
            for (const p of findAll(file, level === 'ws' ? keys : null, old, eq[level], minPos)) found.push({ start: p, end: p + old.length, lines: v.lines, top: v.top });
          }
        }
        // The same place found by two variants counts once.
        const uniq = new Map<number, (typeof found)[number]>();
        for (const f of found) if (!uniq.has(f.start)) uniq.set(f.start, f);
        const all = [...uniq.values()];
        if (all.length === 0) continue;
        if (all.length === 1) {
          const m = all[0];
          if (level === 'blank' && merge(file, m.start, m.end, m.lines, (s) => s) === null) continue;
          // An exact match away from the declared line loses to a whitespace-insensitive match right at it
          // (a hunk whose indentation was shifted can match exactly somewhere else): refuse.
          if (declared !== null && m.start - m.top !== declared && level === 'exact' && wsMatchAt(h.lines, declared)) {
            ambiguous = `matches exactly at line ${m.start + 1} but, ignoring whitespace, also at its declared line ${declared + 1}; refusing to guess`;
            continue;
          }
          return { start: m.start, end: m.end, lines: m.lines, level, fuzz };
        }
        // Several equal exact matches: only the declared line decides, allowing for context lines the
        // hunk lacks (its header counts more old lines than it has, so it may start that much later).
        // Whitespace-insensitive look-alikes (closing braces at other depths) are never told apart this way.
        if (declared !== null && level === 'exact') {
          const near = all.filter((m) => {
            const d = m.start - m.top - declared;
            return d >= 0 && d <= missing;
          });
          if (near.length === 1) {
            const m = near[0];
            return { start: m.start, end: m.end, lines: m.lines, level, fuzz, note: `${all.length} equal matches; chose the one at the declared line` };
          }
        }
        if (!ambiguous) {
          ambiguous = `matches ${all.length} places equally (lines ${all
            .slice(0, 5)
            .map((m) => m.start + 1)
            .join(', ')}${all.length > 5 ? ', ...' : ''}) and its line number does not single one out; refusing to guess`;
        }
      }
    }
    if (ambiguous) return { error: ambiguous };
    return { error: 'does not match the file, even ignoring whitespace and dropping context' };
  }
}
