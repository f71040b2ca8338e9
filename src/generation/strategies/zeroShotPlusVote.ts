/**
 * zero-shot-plus with a vote (`options.vote.samples` > 1): n answers at temperature > 0 with seeds
 * 1…n, each run once on base; the samples that fail for the issue's reason vote with that reason
 * (vote.ts) and the test of the reason most share is kept, re-run to rule out flakiness. A sample
 * that passes on base, or fails by its own error, has no vote and is never kept as a reproduction.
 */
import { toReproduction, type StrategyContext } from '../candidate.js';
import { byVote, drawSamples, firstConfirmed, shortestApplied, Stops } from '../samples.js';
import type { Reproduction } from '../types.js';
import { prepareZeroShotPlus } from './zeroShotPlus.js';

export async function runVotedZeroShotPlus(ctx: StrategyContext): Promise<Reproduction> {
  if (!ctx.llm) return toReproduction('zero-shot-plus', ctx.budget, { reason: 'no LLM endpoint is configured' });
  const prepared = await prepareZeroShotPlus(ctx);
  const details = { retrieved: prepared.retrieval.sources.map((s) => s.path), tests: prepared.retrieval.tests.map((t) => t.path) };
  const n = ctx.options.vote?.samples ?? 3;
  const temperature = ctx.options.vote?.temperature ?? 0.7;
  const stops = new Stops();
  const samples = await drawSamples(ctx, prepared, n, temperature, stops, 'vote');
  const { yes, vote } = byVote(samples);
  const tally = { agree: vote.agree, samples: samples.length };
  const info = { ...details, vote: { ...tally, voters: vote.voters, groups: vote.groups, temperature, seeds: samples.map((s) => s.index + 1) } };
  const notes = [`${samples.length}/${n} samples at temperature ${temperature} (seeds 1…${n}); ${vote.voters} fail on base for the issue's reason; ${vote.agree} share the winning reason (${vote.groups[0]?.reason ?? 'none'})`];
  const end = stops.exhausted ? `; budget exhausted (${stops.exhausted})` : stops.llmFailure ? `; the LLM failed: ${stops.llmFailure}` : '';
  const won = await firstConfirmed(ctx, yes, stops, notes);
  if (won) {
    const { sample: s, result: c } = won;
    const reason = `${c.reason} (sample ${s.index + 1}: its failure reason is shared by ${vote.agree} of ${samples.length} samples)`;
    return toReproduction('zero-shot-plus', ctx.budget, { ...c, reason, evidence: { ...c.evidence, notes: [...notes, ...c.evidence.notes], details: info, vote: tally }, budgetExhausted: stops.exhausted });
  }
  // Nothing to post: keep the shortest test that at least applied, with why.
  const kept = shortestApplied(samples)?.candidate;
  const why = vote.voters ? 'no sample with a vote survived the re-run' : `none of the ${samples.length} sample(s) fails on base for the issue's reason`;
  return toReproduction('zero-shot-plus', ctx.budget, {
    status: 'not-reproduced',
    reason: `${samples.length ? why : 'no sample was drawn'}${end}${kept ? `; the shortest: ${kept.reason}` : ''}`,
    testPatch: kept?.testPatch ?? '',
    failureExcerpt: kept?.failureExcerpt,
    evidence: { ...(kept?.evidence ?? { applied: false, testFiles: [], runs: [], notes: [] }), reproducingTests: [], notes, details: info },
    budgetExhausted: stops.exhausted,
  });
}
