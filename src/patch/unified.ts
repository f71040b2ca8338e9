/**
 * Tolerant unified diffs: a forgiving parser (wrong hunk counts, missing leading spaces on blank
 * context lines, prose and fences around it, `@@ @@` without numbers) and an applier that tries the
 * strict application first and then, hunk by hunk, fuzzy ones: ignoring line numbers, comparing
 * lines without regard to whitespace, dropping up to two context lines at either end, and ignoring
 * blank lines. A hunk is placed only where it matches uniquely (or, among equal matches, at the
 * line its header gives, give or take the context it is missing); otherwise it is refused. Every
 * hunk gets a report of what applied and how.
 */
import { detectIndentStyle, indentWidth, isBlank, joinText, leadingWhitespace, renderIndent, splitText, wsKey, type IndentStyle, type SplitText } from './text.js';
import type { HunkLine, UnifiedFilePatch } from './unifiedParse.js';
import { fileView, leadingDropped, locate, merge, type FileView, type Located } from './hunkLocate.js';

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
  const reports: HunkReport[] = [];
  const warnings: string[] = [];
  const name = patch.newPath ?? patch.oldPath ?? '?';
  const whole = createOrDelete(original, patch, name);
  if (whole) return whole;
  const src: SplitText = splitText(original!);
  const file = src.lines;
  const strict = placeStrictly(patch, file);
  let located: (Located | null)[];
  if (strict) {
    located = strict;
    patch.hunks.forEach((h, k) => reports.push({ index: k + 1, header: h.header, status: 'exact', at: strict[k].start + 1, offset: 0, message: `applied exactly at line ${strict[k].start + 1}` }));
  } else {
    located = placeLoosely(fileView(file, opts.maxFuzz ?? 2), patch, reports);
  }
  const failed = reports.filter((r) => r.status === 'failed');
  if (failed.length > 0) {
    return { ok: false, text: null, reports, warnings, error: `${name}: ${failed.map((r) => `hunk ${r.index} (${r.header}) ${r.message}`).join('; ')}` };
  }
  const out = spliceHunks(src, patch, located as Located[], name, warnings);
  if ('error' in out) return { ok: false, text: null, reports, warnings, error: out.error };
  return { ok: true, text: joinText({ ...src, lines: out.lines }), reports, warnings };
}

/** A patch that creates or deletes the whole file: its result, or undefined for one that edits it. */
function createOrDelete(original: string | null, patch: UnifiedFilePatch, name: string): FileApplyResult | undefined {
  const reports: HunkReport[] = [];
  const warnings: string[] = [];
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

  if (patch.isDelete) {
    const file = splitText(original).lines;
    const oldLines = patch.hunks.flatMap((h) => h.lines.filter((l) => l.op !== '+').map((l) => l.text));
    if (oldLines.length > 0 && oldLines.map(wsKey).join('\n') !== file.map(wsKey).join('\n')) {
      return { ok: false, text: null, reports, warnings, error: `${name}: the deletion does not match the file's content` };
    }
    return { ok: true, text: null, reports, warnings };
  }
  return undefined;
}

/** Every hunk exactly where its header says, in order; null when one is not. */
function placeStrictly(patch: UnifiedFilePatch, file: string[]): Located[] | null {
  const strict: Located[] = [];
  for (const h of patch.hunks) {
    const old = h.lines.filter((l) => l.op !== '+').map((l) => l.text);
    const newLen = h.lines.length - h.lines.filter((l) => l.op === '-').length;
    const countsOk = h.oldCount === old.length && h.newCount === newLen;
    const p = h.oldStart === null || !countsOk ? -1 : old.length === 0 ? h.oldStart : h.oldStart - 1;
    if (p < 0 || p + old.length > file.length || !old.every((l, k) => file[p + k] === l)) return null;
    if (strict.length > 0 && p < strict[strict.length - 1].end) return null;
    strict.push({ start: p, end: p + old.length, lines: h.lines, level: 'exact', fuzz: 0 });
  }
  return strict;
}

/** Hunk by hunk, each after the one before, where it matches uniquely (reports say how); null where it does not. */
function placeLoosely(v: FileView, patch: UnifiedFilePatch, reports: HunkReport[]): (Located | null)[] {
  const located: (Located | null)[] = [];
  let minPos = 0;
  let delta = 0;
  for (const [k, h] of patch.hunks.entries()) {
    const r = locate(v, h, minPos, delta);
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
  return located;
}

/** The placed hunks merged in, from the bottom up so positions stay valid; added lines fitted to the file's indentation. */
function spliceHunks(src: SplitText, patch: UnifiedFilePatch, located: Located[], name: string, warnings: string[]): { lines: string[] } | { error: string } {
  let strippedWs = 0;
  let fixedTabs = 0;
  const file = src.lines;
  const style = detectIndentStyle(file, 4);
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
      return { error: `${name}: hunk ${k + 1} (${h.header}) matched but could not be merged` };
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
  return { lines: out };
}
