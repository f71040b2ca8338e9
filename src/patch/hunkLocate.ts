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

/** Where one hunk goes: tried with fuzz 0..maxFuzz, then exactly, ignoring whitespace, ignoring blank lines; placed only where unique. */
export function locate(v: FileView, h: UnifiedHunk, minPos: number, delta: number): Located | { error: string } {
  const { file, keys, nonBlank, nbKeys, maxFuzz } = v;
  const declared = h.oldStart === null ? null : Math.max(0, h.oldStart - 1 + delta);
  const declaredOld = h.oldCount;
  const actualOld = h.lines.filter((l) => l.op !== '+').length;
  const missing = declaredOld !== null ? Math.max(0, declaredOld - actualOld) : 0;
  if (!h.lines.some((l) => l.op !== '+' && !isBlank(l.text)) && actualOld > 0) {
    // Only blank lines as context: they match everywhere; only a consistent header can place it.
    if (declared === null || declaredOld !== actualOld || !wsMatchAt(v, h.lines, declared)) return { error: 'has only blank context lines and its header does not place it; cannot locate it' };
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
