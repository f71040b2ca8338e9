/**
 * A vote on the failure reason, pure: of several sampled tests, the ones that fail on base for the
 * issue's reason are grouped by why they fail (the kind of failure and the exception, then the
 * message with paths, line numbers and addresses taken out); the test of the reason most samples
 * share wins. A sample that passes on base, or fails by its own error, has no vote and never wins.
 */
import type { FailureEvidence, ReproductionEvidence } from './types.js';

export interface Ballot {
  /** The sample's position (0-based) among those drawn. */
  index: number;
  /** Did the sample fail on base for the reason (verification's provisional verdict)? */
  failsOnBase: boolean;
  /** Its runs on base and the tests counted as failing for the reason. */
  evidence: Pick<ReproductionEvidence, 'runs' | 'reproducingTests'>;
  /** Lines the test adds: the shorter wins a tie. */
  size: number;
}

export interface FailureReason {
  /** Kind and exception: `assertion:AssertionError`, `issue-exception:ValueError`. */
  coarse: string;
  /** The coarse reason plus the normalised message. */
  fine: string;
}

export interface VoteResult {
  /** Indices of the samples with a vote, best first: the order to try them in. */
  order: number[];
  /** Each reason and the samples that share it, largest first. */
  groups: Array<{ reason: string; samples: number[] }>;
  /** Samples that share the winner's reason, and samples with a vote at all. */
  agree: number;
  voters: number;
}

const KIND_RANK: Record<FailureEvidence['kind'], number> = {
  'issue-exception': 3,
  'issue-symptom': 2,
  assertion: 1,
  timeout: 0,
  'other-exception': 0,
  'nothing-checked': 0,
  'own-error': -1,
  collection: -1,
};

/** What a message says once the parts that differ between equal failures are gone. */
export function normaliseMessage(message: string): string {
  return message
    .split('\n')[0]!
    .replace(/0x[0-9a-f]+/gi, '0x?')
    .replace(/(?:[\w.-]*\/)+[\w.-]+(?::\d+)*/g, '<path>')
    .replace(/\bline \d+/gi, 'line ?')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .slice(0, 200);
}

/** Why one sample fails on base: its first reproducing failure (the strongest kind first). */
export function failureReason(evidence: Ballot['evidence']): FailureReason | undefined {
  const failures = (evidence.runs[0]?.failures ?? []).filter((f) => !evidence.reproducingTests.length || evidence.reproducingTests.includes(f.id));
  const best = [...failures].sort((a, b) => KIND_RANK[b.kind] - KIND_RANK[a.kind])[0];
  if (!best) return undefined;
  const coarse = `${best.kind}:${best.exception ?? ''}`;
  return { coarse, fine: `${coarse}:${normaliseMessage(best.message ?? '')}` };
}

/** The vote: groups by coarse reason, the largest first (ties: the stronger kind, then the earlier sample). */
export function voteOnFailures(ballots: readonly Ballot[]): VoteResult {
  const voters = ballots.map((b) => ({ b, r: b.failsOnBase ? failureReason(b.evidence) : undefined })).filter((x): x is { b: Ballot; r: FailureReason } => !!x.r);
  const count = (key: (r: FailureReason) => string) => {
    const m = new Map<string, number>();
    for (const v of voters) m.set(key(v.r), (m.get(key(v.r)) ?? 0) + 1);
    return m;
  };
  const coarse = count((r) => r.coarse);
  const fine = count((r) => r.fine);
  const kind = (r: FailureReason) => KIND_RANK[r.coarse.split(':')[0] as FailureEvidence['kind']] ?? 0;
  const firstOf = new Map<string, number>();
  for (const v of voters) if (!firstOf.has(v.r.coarse)) firstOf.set(v.r.coarse, v.b.index);
  const ranked = [...voters].sort(
    (x, y) =>
      coarse.get(y.r.coarse)! - coarse.get(x.r.coarse)! ||
      kind(y.r) - kind(x.r) ||
      firstOf.get(x.r.coarse)! - firstOf.get(y.r.coarse)! ||
      fine.get(y.r.fine)! - fine.get(x.r.fine)! ||
      x.b.size - y.b.size ||
      x.b.index - y.b.index,
  );
  const groups = [...new Set(ranked.map((v) => v.r.coarse))].map((reason) => ({ reason, samples: voters.filter((v) => v.r.coarse === reason).map((v) => v.b.index) }));
  return { order: ranked.map((v) => v.b.index), groups, agree: groups[0]?.samples.length ?? 0, voters: voters.length };
}
