/**
 * rank(issue): competing fix PRs of one issue, best first, from their stored verdicts. Pure.
 * Order: likely correct, does not fix, breaks the reproduction, error; ties go to the smaller
 * diff, then the faster run, then the older PR.
 */
import { judgedTests } from '../harness/classify.js';
import type { Verdict } from '../results/types.js';

export type CandidateVerdict = 'likely-correct' | 'own-set-up' | 'does-not-fix' | 'breaks-reproduction' | 'error';

export interface Candidate {
  pr: number;
  title: string;
  author: string;
  headSha: string;
  verdict: CandidateVerdict;
  f2p: number;
  /** Tests failing after the fix. */
  failing: number;
  durationMs: number;
  /** Lines added plus lines deleted. */
  diffSize: number;
}

const ORDER: CandidateVerdict[] = ['likely-correct', 'own-set-up', 'does-not-fix', 'breaks-reproduction', 'error'];

export const CANDIDATE_VERDICT_TEXT: Record<CandidateVerdict, string> = {
  'likely-correct': 'likely correct',
  'own-set-up': 'passes only with its own test set-up (not trusted)',
  'does-not-fix': 'does not fix',
  'breaks-reproduction': 'breaks the reproduction',
  error: 'error',
};

/**
 * A validation's place in the ranking: the fix filter passes; or a test that passed before fails
 * after, or the reproducing test cannot even run on the fixed code; or it simply does not fix.
 * A head whose tests ran with its own changed test machinery is never likely correct: it passes
 * the fix filter's tests only with its own set-up (`own-set-up`), ranked below.
 */
export function candidateVerdict(v: Verdict & { machinery?: { used: 'base' | 'head' } }): CandidateVerdict {
  const judged = judgedTests(v);
  if (v.machinery?.used === 'head') {
    if (judged.some((t) => t.transition === 'F2P') && judged.every((t) => t.head === 'pass')) return 'own-set-up';
  } else if (v.likelyCorrect) return 'likely-correct';
  // Still failing, but no longer the way it did: the test cannot be collected or found, or now hangs.
  const unrunnable = (t: (typeof judged)[number]) =>
    t.transition === 'F2F' && ['collection', 'missing', 'timeout'].includes(t.headFailure?.kind ?? '') && t.headFailure?.kind !== t.baseFailure?.kind;
  if (judged.some((t) => t.transition === 'P2F' || unrunnable(t))) return 'breaks-reproduction';
  return 'does-not-fix';
}

export function rank(candidates: readonly Candidate[]): Candidate[] {
  return [...candidates].sort(
    (a, b) => ORDER.indexOf(a.verdict) - ORDER.indexOf(b.verdict) || a.diffSize - b.diffSize || a.durationMs - b.durationMs || a.pr - b.pr,
  );
}
