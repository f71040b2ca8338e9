/**
 * Where a hunk of a unified diff goes in a file: exactly, ignoring whitespace, ignoring blank lines,
 * dropping up to maxFuzz context lines; placed only where it matches uniquely (or, among equal
 * matches, at its declared line). Pure; unified.ts applies what it places.
 */
import { isBlank, wsKey } from './text.js';
import type { HunkLine, UnifiedHunk } from './unifiedParse.js';

export type Level = 'exact' | 'ws' | 'blank';

export interface Located {
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

/** Positions where `needle` occurs in `hay` contiguously, from `from` on. */
function findAll(hay: readonly string[], needle: readonly string[], from: number): number[] {
  const out: number[] = [];
  if (needle.length === 0) return out;
  for (let p = Math.max(0, from); p + needle.length <= hay.length; p++) if (needle.every((x, k) => hay[p + k] === x)) out.push(p);
  return out;
}

/** Where the old lines match the file at `level`, from `from` on: exactly, by whitespace-insensitive keys, or those keys of the non-blank lines only. */
function spans(v: FileView, old: string[], level: Level, from: number): { start: number; end: number }[] {
  if (level !== 'blank') {
    const [hay, needle] = level === 'exact' ? [v.file, old] : [v.keys, old.map(wsKey)];
    return findAll(hay, needle, from).map((p) => ({ start: p, end: p + old.length }));
  }
  const want = old.filter((l) => !isBlank(l)).map(wsKey);
  const first = v.nonBlank.findIndex((k) => k >= from);
  return findAll(v.nbKeys, want, first < 0 ? v.nonBlank.length : first).map((q) => ({ start: v.nonBlank[q], end: v.nonBlank[q + want.length - 1] + 1 }));
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
export function merge(file: string[], start: number, end: number, lines: HunkLine[], fixAdded: (s: string) => string): string[] | null {
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

/** The file as the locator compares it: whitespace-insensitive keys, and its non-blank lines. */
export interface FileView {
  file: string[];
  keys: string[];
  nonBlank: number[];
  nbKeys: string[];
  maxFuzz: number;
}

export function fileView(file: string[], maxFuzz: number): FileView {
  const keys = file.map(wsKey);
  const nonBlank: number[] = [];
  file.forEach((l, k) => {
    if (!isBlank(l)) nonBlank.push(k);
  });
  return { file, keys, nonBlank, nbKeys: nonBlank.map((k) => keys[k]), maxFuzz };
}

function wsMatchAt(v: FileView, lines: HunkLine[], at: number): boolean {
  const { file, keys } = v;
  const old = lines.filter((l) => l.op !== '+').map((l) => wsKey(l.text));
  if (at < 0 || at + old.length > file.length) return false;
  return old.every((k, i) => keys[at + i] === k);
}

export function leadingDropped(h: UnifiedHunk, r: Located): number {
  let n = 0;
  while (n < h.lines.length && h.lines[n] !== r.lines[0]) n++;
  return n;
}

/** A hunk with no context to match, or only blank context: placed by its header, or not at all; undefined for other hunks. */
function placedByHeader(v: FileView, h: UnifiedHunk, delta: number): Located | { error: string } | undefined {
  const declared = h.oldStart === null ? null : Math.max(0, h.oldStart - 1 + delta);
  const actualOld = h.lines.filter((l) => l.op !== '+').length;
  if (!h.lines.some((l) => l.op !== '+' && !isBlank(l.text)) && actualOld > 0) {
    // Only blank lines as context: they match everywhere; only a consistent header can place it.
    if (declared === null || h.oldCount !== actualOld || !wsMatchAt(v, h.lines, declared)) return { error: 'has only blank context lines and its header does not place it; cannot locate it' };
    return { start: declared, end: declared + actualOld, lines: h.lines, level: 'ws', fuzz: 0, note: 'placed by its header (blank context only)' };
  }
  if (actualOld > 0) return undefined;
  // Pure insertion without context: only its line number can place it.
  if (h.oldStart === null) return { error: 'has no context and no line number' };
  if (h.oldCount !== null && h.oldCount !== 0) return { error: `has no context lines although its header claims ${h.oldCount}; cannot place it` };
  const p = Math.min(v.file.length, h.oldStart + delta);
  return { start: p, end: p, lines: h.lines, level: 'exact', fuzz: 0, note: 'placed by line number only (no context)' };
}

/** The hunk with `fuzz` context lines dropped, split every way between top and bottom; `top` is how many came off the top. */
function contextVariants(lines: HunkLine[], fuzz: number): { lines: HunkLine[]; top: number }[] {
  const variants: { lines: HunkLine[]; top: number }[] = [];
  for (let top = 0; top <= fuzz; top++) {
    const v = dropContext(lines, top, fuzz - top);
    if (v && (fuzz === 0 || v.length < lines.length)) variants.push({ lines: v, top });
  }
  return variants;
}

/** Where any of the variants matches at `level`; the same place found by two variants counts once. */
function matchesOf(v: FileView, variants: { lines: HunkLine[]; top: number }[], level: Level, minPos: number): { start: number; end: number; lines: HunkLine[]; top: number }[] {
  const uniq = new Map<number, { start: number; end: number; lines: HunkLine[]; top: number }>();
  for (const variant of variants) {
    const old = variant.lines.filter((l) => l.op !== '+').map((l) => l.text);
    for (const m of spans(v, old, level, minPos)) if (!uniq.has(m.start)) uniq.set(m.start, { ...m, ...variant });
  }
  return [...uniq.values()];
}

/** Where one hunk goes: tried with fuzz 0..maxFuzz, then exactly, ignoring whitespace, ignoring blank lines; placed only where unique. */
export function locate(v: FileView, h: UnifiedHunk, minPos: number, delta: number): Located | { error: string } {
  const byHeader = placedByHeader(v, h, delta);
  if (byHeader) return byHeader;
  const declared = h.oldStart === null ? null : Math.max(0, h.oldStart - 1 + delta);
  const missing = h.oldCount !== null ? Math.max(0, h.oldCount - h.lines.filter((l) => l.op !== '+').length) : 0;
  let ambiguous = '';
  for (let fuzz = 0; fuzz <= v.maxFuzz; fuzz++) {
    const variants = contextVariants(h.lines, fuzz);
    if (variants.length === 0) continue;
    for (const level of ['exact', 'ws', 'blank'] as Level[]) {
      const all = matchesOf(v, variants, level, minPos);
      if (all.length === 0) continue;
      if (all.length === 1) {
        const m = all[0];
        if (level === 'blank' && merge(v.file, m.start, m.end, m.lines, (s) => s) === null) continue;
        // An exact match away from the declared line loses to a whitespace-insensitive match right at it
        // (a hunk whose indentation was shifted can match exactly somewhere else): refuse.
        if (declared !== null && m.start - m.top !== declared && level === 'exact' && wsMatchAt(v, h.lines, declared)) {
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
