/**
 * Why a validation yielded no test at all (a Maven project whose Surefire ran nothing, uvu's "No
 * test results"): each side's first run, its exit code and the tail of what the runner printed, so
 * the CLI, the eval row and the comment can say more than "no results". Pure.
 */
import type { RunResult } from '../results/types.js';
import { tail } from '../results/formats/common.js';

/** Lines of each side's output kept in the reason. */
const TAIL_LINES = 12;

function lastLines(output: string, n: number): string {
  return tail(output, 1500).trimEnd().split('\n').slice(-n).join('\n');
}

function sideReason(side: 'base' | 'head', run: RunResult | undefined): string {
  if (!run) return `${side}: not run`;
  const how = run.timedOut ? 'timed out' : run.diskLimit ? 'was killed at its disk limit' : `exited with code ${String(run.exitCode)}`;
  const errors = run.fileErrors.length ? `, ${run.fileErrors.length} file(s) did not load` : '';
  const out = lastLines(run.output ?? '', TAIL_LINES);
  return `${side}: the runner ${how} and reported no test${errors}; ${out ? `the end of its output:\n${out}` : 'it printed nothing'}`;
}

/** The reason, when no run of either side reported a test; undefined when one did. */
export function whyNoTests(runs: { base: readonly RunResult[]; head: readonly RunResult[] }): string | undefined {
  if ([...runs.base, ...runs.head].some((r) => r.tests.length > 0)) return undefined;
  const base = sideReason('base', runs.base[0]);
  const head = sideReason('head', runs.head[0]);
  // Both sides saying the same but for timings is the common case (nothing collected): say it once.
  const gist = (r: string) => r.slice(r.indexOf(':')).replace(/\d+(\.\d+)?/g, 'N');
  return gist(base) === gist(head) ? base.replace(/^base: /, 'base and head: ') : `${base}\n${head}`;
}
