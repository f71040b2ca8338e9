/** Line coverage as the change-coverage metric (ΔC, SWT-bench §3.3) sees it. */

/** Execution counts per repository-relative file and 1-based line; absent = never executed. */
export type LineCounts = Record<string, Record<number, number>>;

/** One line of one file, on the side of the fix it belongs to. */
export interface LineRef {
  file: string;
  line: number;
}

/** The lines a code patch changes: removed ones numbered at base, added ones at the fixed state. */
export interface ChangedLines {
  removed: LineRef[];
  added: LineRef[];
}

/** Counts of one set of tests on both sides of the fix. */
export interface SideCounts {
  base: LineCounts;
  head: LineCounts;
}
