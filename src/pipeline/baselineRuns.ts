import type { RunResult } from '../results/types.js';

/**
 * The base revision's own run of the touched test files (no patch at all) is the same for every
 * validation against that base: each push to a pull request, and the pull requests that compete
 * to fix one issue. Kept per process by everything it depends on (environment image, revision,
 * files, runner and its environment, limits), the newest 200; a run that timed out or was killed
 * is never kept.
 */
const kept = new Map<string, Promise<RunResult>>();
const MAX_KEPT = 200;

export function baselineKey(image: string, rev: string, files: readonly string[], runner: unknown, limits: unknown): string {
  return JSON.stringify([image, rev, files, runner, limits ?? {}]);
}

/** Whether a run of this key is kept (or under way): its container need not be started ahead. */
export function hasBaseline(key: string): boolean {
  return kept.has(key);
}

export function baselineAtBase(k: string, run: () => Promise<RunResult>): Promise<RunResult> {
  const hit = kept.get(k);
  if (hit) return hit;
  const made = run();
  kept.set(k, made);
  if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
  made.then(
    (r) => {
      // Cut short (time, disk, a kill or the memory limit): no answer to keep.
      if (r.timedOut || r.diskLimit || r.exitCode === null || r.exitCode === 137 || r.exitCode === 143) kept.delete(k);
    },
    () => kept.delete(k),
  );
  return made;
}
