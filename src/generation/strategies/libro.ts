/**
 * `libro` (SWT-bench App. B, after Kang et al. 2023): draw k ZeroShotPlus samples at temperature
 * 0.7, run each on base and keep those that fail for the issue's reason, ask the same model
 * whether each failure matches the issue (two clusters), and take the shortest test of the
 * preferred cluster, re-run once to rule out flakiness. With `libro.select: 'vote'` the judge is
 * replaced by a vote on the failure reason (vote.ts); with execution feedback on, a sample that does
 * not fail on base is revised once before it counts.
 */
import { toReproduction, type StrategyContext } from '../candidate.js';
import { libroJudgePrompt } from '../prompts.js';
import type { Reproduction } from '../types.js';
import { byVote, drawSamples, failsOnBase, firstConfirmed, shortestApplied, Stops, type Sample } from '../samples.js';
import { prepareZeroShotPlus } from './zeroShotPlus.js';

export function parseYesNo(text: string): 'yes' | 'no' | undefined {
  const m = /\b(yes|no)\b/i.exec(text.replace(/\*+/g, ''));
  return m ? (m[1].toLowerCase() as 'yes' | 'no') : undefined;
}

export async function runLibroStrategy(ctx: StrategyContext): Promise<Reproduction> {
  const { budget, log, llm } = ctx;
  if (!llm) return toReproduction('libro', budget, { reason: 'no LLM endpoint is configured' });
  const k = ctx.options.libro?.samples ?? 5;
  const temperature = ctx.options.libro?.temperature ?? 0.7;
  const select = ctx.options.libro?.select ?? 'judge';
  const prepared = await prepareZeroShotPlus(ctx);
  const stops = new Stops();
  const samples = await drawSamples(ctx, prepared, k, temperature, stops, 'libro');
  const failing = samples.filter((s) => s.duplicateOf === undefined && failsOnBase(s));
  log.info({ samples: samples.length, failing: failing.length }, 'libro: samples run on base');

  const { yes, other, vote } = select === 'vote' ? byVote(samples) : await byJudge(ctx, samples, failing, stops);
  const details = { ...libroDetails(samples, yes, other), select, ...(vote ? { vote } : {}) };
  const chosenBy = select === 'vote' ? `of the failure reason ${vote!.agree} of ${vote!.voters} failing sample(s) share` : 'the shortest the model judged to match the issue';
  const notes = [`${samples.length}/${k} samples drawn at temperature ${temperature}; ${failing.length} fail on base for the issue's reason; ${select === 'vote' ? `${vote!.agree} share the winning reason` : `${yes.length} judged to match the issue`}`];

  // 3. The preferred sample first, re-run for flakiness.
  const won = await firstConfirmed(ctx, yes, stops, notes);
  if (won) {
    const { sample: s, result: c } = won;
    return toReproduction('libro', budget, {
      ...c,
      reason: `${c.reason} (sample ${s.index + 1}, ${chosenBy})`,
      evidence: { ...c.evidence, notes: [...notes, ...c.evidence.notes], details, ...(vote ? { vote: { agree: vote.agree, samples: samples.length } } : {}) },
      budgetExhausted: stops.exhausted,
    });
  }
  const fallback = other[0] ?? shortestApplied(samples);
  const why = failing.length
    ? yes.length
      ? `no sample ${select === 'vote' ? 'with a vote' : 'the model judged to match the issue'} survived the re-run`
      : 'tests fail on base, but the model judged none of the failures to match the issue'
    : samples.length
      ? `none of the ${samples.length} sample(s) fails on base for the issue's reason`
      : 'no sample was drawn';
  return toReproduction('libro', budget, {
    status: 'not-reproduced',
    reason: stops.exhausted ? `${why}; budget exhausted (${stops.exhausted})` : stops.llmFailure ? `${why}; the LLM failed: ${stops.llmFailure}` : why,
    testPatch: fallback ? fallback.candidate!.testPatch : '',
    failureExcerpt: fallback?.candidate?.failureExcerpt,
    evidence: { ...(fallback?.candidate?.evidence ?? { applied: false, testFiles: [], runs: [], reproducingTests: [] }), reproducingTests: [], notes, details },
    budgetExhausted: stops.exhausted,
  });
}

const shortestFirst = (a: Sample, b: Sample) => a.size - b.size || a.index - b.index;

/** LIBRO's own choice: the model judges each failure; the matching cluster, shortest first. */
async function byJudge(ctx: StrategyContext, samples: Sample[], failing: Sample[], stops: Stops) {
  await judgeFailures(ctx, failing, stops);
  for (const s of samples) if (s.duplicateOf !== undefined) s.judge = samples[s.duplicateOf]!.judge;
  return { yes: failing.filter((s) => s.judge === 'yes').sort(shortestFirst), other: failing.filter((s) => s.judge !== 'yes').sort(shortestFirst), vote: undefined };
}

/** 2. Cluster by the model's judgement of each failure. */
async function judgeFailures(ctx: StrategyContext, failing: Sample[], stops: Stops): Promise<void> {
  const { llm, issue, budget } = ctx;
  for (const s of failing) {
    if (stops.any) break;
    const c = s.candidate!;
    const failure = c.failureExcerpt ?? c.runs[0]?.output.slice(-2000) ?? '';
    try {
      const r = await llm!.chat({ messages: [{ role: 'user', content: libroJudgePrompt(issue, c.testPatch, failure) }], temperature: 0, maxTokens: 200, purpose: 'libro judge' }, { budget });
      s.judge = parseYesNo(r.content);
      s.judgeText = r.content.slice(0, 300);
    } catch (e) {
      stops.stop(e);
    }
  }
}

function libroDetails(samples: Sample[], yes: Sample[], other: Sample[]) {
  return {
    samples: samples.map((s) => ({
      index: s.index,
      status: s.candidate?.status ?? 'no answer',
      failsOnBase: s.candidate?.judgement?.status === 'reproduced',
      reason: s.candidate?.reason,
      judge: s.judge,
      addedLines: s.size,
      duplicateOf: s.duplicateOf,
    })),
    clusters: { matching: yes.map((s) => s.index), other: other.map((s) => s.index) },
  };
}
