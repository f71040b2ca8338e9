import { judgedTests, reproduces } from '../harness/classify.js';
import type { TestTransition } from '../harness/types.js';

/** One row of results.jsonl. */
export interface InstanceResult {
  instance_id: string;
  /** The predicted tests applied (W). */
  applied: boolean;
  success: boolean;
  likelyCorrect: boolean;
  tests: Pick<TestTransition, 'id' | 'base' | 'head' | 'transition' | 'flaky' | 'preexisting'>[];
  /** Set when the instance could not be evaluated (unresolvable repo, missing commit, failed install…). */
  error?: string;
  warnings?: string[];
  testPatch?: string;
  /** Generation evidence when predictions were generated. */
  reproduction?: { strategy: string; status: string; reason: string };
  durationMs: number;
}

export interface EvalReport {
  instances: number;
  errors: number;
  /** Percentages over all instances, 0–100, one decimal. */
  W: number;
  S: number;
  F2X: number;
  F2P: number;
  P2P: number;
}

const pct = (n: number, d: number): number => (d === 0 ? 0 : Math.round((1000 * n) / d) / 10);

/** SWT-bench's summary metrics (§3.1): each a share of all instances, errors counting as misses. */
export function summarize(results: readonly InstanceResult[]): EvalReport {
  const n = results.length;
  const ok = results.filter((r) => !r.error);
  const count = (pred: (r: InstanceResult) => boolean) => ok.filter(pred).length;
  // Pre-existing transitions (the same without the predicted tests) say nothing about the prediction.
  const judged = (r: InstanceResult) => judgedTests(r);
  return {
    instances: n,
    errors: n - ok.length,
    W: pct(count((r) => r.applied), n),
    S: pct(count((r) => r.success), n),
    F2X: pct(count((r) => judged(r).some((t) => t.base === 'fail')), n),
    F2P: pct(count((r) => judged(r).some(reproduces)), n),
    P2P: pct(count((r) => judged(r).some((t) => t.transition === 'P2P')), n),
  };
}
