/**
 * Whether an evaluation's F→P tests are exactly a benchmark's FAIL_TO_PASS. SWE-bench names a
 * pytest test by its node id, or (sympy's own runner) by the test's name alone. Pure.
 */
import type { InstanceResult } from './report.js';

/** A benchmark id names swt's test when equal, or as the test's own name where the benchmark drops the file. */
export function sameTest(swt: string, benchmark: string): boolean {
  return swt === benchmark || swt.endsWith(`::${benchmark}`);
}

/** The tests the test patch made F→P (not those already there). */
export function newF2P(r: InstanceResult): string[] {
  return r.tests.filter((t) => t.transition === 'F2P' && !t.preexisting).map((t) => t.id);
}

/** Each benchmark id matched, and nothing more seen. */
export function sameF2P(seen: readonly string[], wanted: readonly string[]): boolean {
  return seen.length === wanted.length && wanted.every((w) => seen.some((s) => sameTest(s, w))) && seen.every((s) => wanted.some((w) => sameTest(s, w)));
}
