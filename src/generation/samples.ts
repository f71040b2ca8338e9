/**
 * Several answers to one zero-shot-plus prompt, each run once on base (LIBRO, and zero-shot-plus's
 * vote): sample i is drawn with seed i + 1, so a run at temperature > 0 repeats; an answer the
 * model gave before counts as that sample again; a sample that does not fail on base goes back to
 * the model with what its run said (execution feedback), within the budget.
 */
import { isBudgetExhausted, type BudgetDimension } from './budget.js';
import { confirmCandidate, evaluateCandidate, isLlmFailure, type CandidateResult, type StrategyContext } from './candidate.js';
import { splitDiff } from '../patch/diffFiles.js';
import { feedbackRounds, withFeedback } from './feedback.js';
import { voteOnFailures } from './vote.js';
import { usableAnswer } from './answers.js';
import { extractPatchText, sampleZeroShotPlus, type ZeroShotPlusPrepared } from './strategies/zeroShotPlus.js';

export interface Sample {
  index: number;
  candidate?: CandidateResult;
  /** Lines the test patch adds: LIBRO's "shortest". */
  size: number;
  judge?: 'yes' | 'no';
  judgeText?: string;
  duplicateOf?: number;
  /** Feedback rounds this sample took. */
  feedbackRounds?: number;
}

export function addedLines(testPatch: string): number {
  return splitDiff(testPatch).reduce((n, f) => n + f.added.filter((l) => l.trim()).length, 0);
}

/** What ends the sampling loops early: the budget, or the LLM failing (kept as the reason). */
export class Stops {
  exhausted: BudgetDimension | undefined;
  llmFailure: string | undefined;
  get any(): boolean {
    return !!this.exhausted || !!this.llmFailure;
  }
  stop(e: unknown): void {
    if (isLlmFailure(e)) {
      this.llmFailure ??= e.message;
      return;
    }
    if (!isBudgetExhausted(e)) throw e;
    this.exhausted ??= (e as { dimension?: BudgetDimension }).dimension ?? 'steps';
  }
}

/** Draws k samples at `temperature` and runs each once on base. */
export async function drawSamples(ctx: StrategyContext, prepared: ZeroShotPlusPrepared, k: number, temperature: number, stops: Stops, label: string): Promise<Sample[]> {
  const samples: Sample[] = [];
  const seen = new Map<string, number>();
  const rounds = feedbackRounds(ctx);
  for (let i = 0; i < k && !stops.any; i++) {
    try {
      const answer = await sampleZeroShotPlus(ctx, prepared, temperature, `${label} sample ${i + 1}/${k}`, i + 1);
      const usable = usableAnswer(answer);
      const text = extractPatchText(usable.text);
      const s: Sample = { index: i, size: 0 };
      samples.push(s);
      const dup = seen.get(text.trim());
      if (dup !== undefined) {
        Object.assign(s, { duplicateOf: dup, candidate: samples[dup]!.candidate, size: samples[dup]!.size });
        continue;
      }
      seen.set(text.trim(), i);
      const first = await evaluateCandidate(ctx, text, { rerun: false, note: usable.note });
      const revised = await withFeedback(ctx, [{ role: 'user', content: prepared.prompt }, { role: 'assistant', content: answer.content }], first, extractPatchText, { rounds, rerun: false, firstCut: answer.finishReason === 'length', afterCut: prepared.afterCut });
      s.candidate = revised;
      s.feedbackRounds = revised.feedbackRounds;
      s.size = addedLines(s.candidate.testPatch);
      if (s.candidate.budgetExhausted) stops.exhausted ??= s.candidate.budgetExhausted;
    } catch (e) {
      stops.stop(e);
    }
  }
  return samples;
}

/** Failing on base for the reason on its one run: a sample that may win. */
export const failsOnBase = (s: Sample): boolean => s.candidate?.judgement?.status === 'reproduced';

/** The vote on the failure reason (vote.ts): every sample (a repeated answer too) votes; the samples to try, best first. */
export function byVote(samples: Sample[]) {
  const v = voteOnFailures(samples.filter((s) => s.candidate).map((s) => ({ index: s.index, failsOnBase: failsOnBase(s), evidence: s.candidate!.evidence, size: s.size })));
  const first = (i: number) => samples[samples[i]!.duplicateOf ?? i]!;
  const yes = [...new Set(v.order.map(first))];
  return { yes, other: [] as Sample[], vote: v };
}

/** The first chosen sample that reproduces again when re-run (flakiness ruled out); each one rejected is noted. */
export async function firstConfirmed(ctx: StrategyContext, chosen: Sample[], stops: Stops, notes: string[]): Promise<{ sample: Sample; result: CandidateResult } | undefined> {
  for (const sample of chosen) {
    let result: CandidateResult;
    try {
      result = await confirmCandidate(ctx, sample.candidate!);
    } catch (e) {
      stops.stop(e);
      return undefined;
    }
    if (result.status === 'reproduced') return { sample, result };
    notes.push(`sample ${sample.index + 1} rejected on re-run: ${result.reason}`);
  }
  return undefined;
}

/** What is kept when nothing reproduced: the shortest distinct sample whose test applied. */
export const shortestApplied = (samples: Sample[]): Sample | undefined =>
  samples.filter((s) => s.duplicateOf === undefined && s.candidate?.testPatch).sort((a, b) => a.size - b.size)[0];
