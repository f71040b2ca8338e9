/**
 * Change coverage ΔC, SWT-bench §3.3. Pure arithmetic over line counts.
 *
 * X = the fix's changed lines: Xr removed (counted at base R), Xa added (counted at the fixed R∘X).
 * Executable lines: those some reference run executes, C^{T_R}(l) + C^{T*}(l) > 0, on their side.
 * ΔC = |{l ∈ X* : C^{T_R ∪ T}(l) > C^{T_R}(l)}| / |X*|, and undefined (null) when X* is empty.
 */
import type { ChangedLines, LineCounts, LineRef, SideCounts } from './types.js';

export interface DeltaCInput {
  changed: ChangedLines;
  /** T_R: the repository's own tests that the predicted tests touch, as they are without them. */
  original: SideCounts;
  /** T_R ∪ T: the same files with the predicted tests. Null when no tests applied. */
  withTests: SideCounts | null;
  /** T*: the golden tests. Null: every changed code line counts as executable (no reference to ask). */
  reference: SideCounts | null;
  /** Whether a line is code at all (not blank, a comment or an import); default: every line. */
  isCode?: (side: 'base' | 'head', ref: LineRef) => boolean;
}

export interface DeltaC {
  /** X*: the changed lines that count. */
  executable: ChangedLines;
  /** The lines of X* whose count rises with the predicted tests. */
  covered: ChangedLines;
  /** |covered| / |X*|, 0–1; null when X* is empty (the instance is left out of ΔC). */
  dC: number | null;
  /** The golden tests' own ΔC on the same lines (against the same T_R); null without a reference. */
  referenceDC: number | null;
}

export function countOf(counts: LineCounts, ref: LineRef): number {
  return counts[ref.file]?.[ref.line] ?? 0;
}

export function deltaC(input: DeltaCInput): DeltaC {
  const isCode = input.isCode ?? (() => true);
  const executableOn = (side: 'base' | 'head', lines: LineRef[]) =>
    lines.filter((l) => {
      if (!isCode(side, l)) return false;
      if (!input.reference) return true;
      return countOf(input.original[side], l) + countOf(input.reference[side], l) > 0;
    });
  const executable: ChangedLines = { removed: executableOn('base', input.changed.removed), added: executableOn('head', input.changed.added) };
  const n = executable.removed.length + executable.added.length;
  const rises = (tests: SideCounts | null): ChangedLines => {
    if (!tests) return { removed: [], added: [] };
    const up = (side: 'base' | 'head') => (l: LineRef) => countOf(tests[side], l) > countOf(input.original[side], l);
    return { removed: executable.removed.filter(up('base')), added: executable.added.filter(up('head')) };
  };
  const covered = rises(input.withTests);
  const ratio = (c: ChangedLines) => (n === 0 ? null : (c.removed.length + c.added.length) / n);
  return { executable, covered, dC: ratio(covered), referenceDC: input.reference ? ratio(rises(input.reference)) : null };
}

/** Sums counts line by line (several processes, or several scripts of one file). */
export function mergeCounts(...all: LineCounts[]): LineCounts {
  const out: LineCounts = {};
  for (const counts of all) {
    for (const [file, lines] of Object.entries(counts)) {
      const into = (out[file] ??= {});
      for (const [line, n] of Object.entries(lines)) into[Number(line)] = (into[Number(line)] ?? 0) + n;
    }
  }
  return out;
}
