/**
 * `libro` (SWT-bench App. B, after Kang et al. 2023): draw k ZeroShotPlus samples at temperature
 * 0.7, run each on base and keep those that fail for the issue's reason, ask the same model
 * whether each failure matches the issue (two clusters), and take the shortest test of the
 * preferred cluster, re-run once to rule out flakiness.
 */
import type { RunResult } from '../../results/types.js';
import { isBudgetExhausted, type BudgetDimension } from '../budget.js';
import { evaluateCandidate, isLlmFailure, toReproduction, type CandidateResult, type StrategyContext } from '../candidate.js';
import { splitDiff } from '../../patch/diffFiles.js';
import { libroJudgePrompt } from '../prompts.js';
import type { Reproduction } from '../types.js';
import { judgeRuns } from '../verify.js';
import { extractPatchText, prepareZeroShotPlus, sampleZeroShotPlus } from './zeroShotPlus.js';

interface Sample {
  index: number;
  candidate?: CandidateResult;
  /** Lines the test patch adds: LIBRO's "shortest". */
  size: number;
  judge?: 'yes' | 'no';
  judgeText?: string;
  duplicateOf?: number;
}

export function parseYesNo(text: string): 'yes' | 'no' | undefined {
  const m = /\b(yes|no)\b/i.exec(text.replace(/\*+/g, ''));
  return m ? (m[1].toLowerCase() as 'yes' | 'no') : undefined;
}

function addedLines(testPatch: string): number {
  return splitDiff(testPatch).reduce((n, f) => n + f.added.filter((l) => l.trim()).length, 0);
}

export async function runLibroStrategy(ctx: StrategyContext): Promise<Reproduction> {
  const { budget, log, llm, issue } = ctx;
  if (!llm) return toReproduction('libro', budget, { reason: 'no LLM endpoint is configured' });
  const k = ctx.options.libro?.samples ?? 5;
  const temperature = ctx.options.libro?.temperature ?? 0.7;
  const prepared = await prepareZeroShotPlus(ctx);
  const stops = new Stops();
  const samples = await drawSamples(ctx, prepared, k, temperature, stops);
  const failing = samples.filter((s) => s.duplicateOf === undefined && s.candidate?.judgement?.status === 'reproduced');
  log.info({ samples: samples.length, failing: failing.length }, 'libro: samples run on base');

  await judgeFailures(ctx, failing, stops);
  for (const s of samples) if (s.duplicateOf !== undefined) s.judge = samples[s.duplicateOf].judge;

  const yes = failing.filter((s) => s.judge === 'yes').sort((a, b) => a.size - b.size || a.index - b.index);
  const other = failing.filter((s) => s.judge !== 'yes').sort((a, b) => a.size - b.size || a.index - b.index);
  const details = libroDetails(samples, yes, other);
  const notes = [`${samples.length}/${k} samples drawn at temperature ${temperature}; ${failing.length} fail on base for the issue's reason; ${yes.length} judged to match the issue`];

  // 3. Shortest of the preferred cluster, re-run for flakiness.
  for (const s of yes) {
    const c = s.candidate!;
    let second: RunResult;
    try {
      budget.checkWallTime();
      second = await ctx.workbench.runTests(c.testPatch);
    } catch (e) {
      stops.stop(e);
      break;
    }
    const files = splitDiff(c.testPatch);
    const j = judgeRuns(issue, files, [c.runs[0], second], { baseline: c.baseline });
    if (j.status === 'reproduced') {
      return toReproduction('libro', budget, {
        status: 'reproduced',
        reason: `${j.reason} (sample ${s.index + 1}, the shortest the model judged to match the issue)`,
        testPatch: c.testPatch,
        failureExcerpt: j.failureExcerpt,
        evidence: { ...c.evidence, runs: j.runs, reproducingTests: j.reproducingTests, notes: [...notes, ...c.evidence.notes], details },
        budgetExhausted: stops.exhausted,
      });
    }
    notes.push(`sample ${s.index + 1} rejected on re-run: ${j.reason}`);
  }
  const fallback = other[0] ?? samples.filter((s) => s.duplicateOf === undefined && s.candidate?.testPatch).sort((a, b) => a.size - b.size)[0];
  const why = failing.length
    ? yes.length
      ? 'no sample the model judged to match the issue survived the re-run'
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

/** What ends LIBRO's loops early: the budget, or the LLM failing (kept as the reason). */
class Stops {
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

/** 1. Sample k tests and run each once on base (a sample the model wrote before counts once). */
async function drawSamples(ctx: StrategyContext, prepared: Awaited<ReturnType<typeof prepareZeroShotPlus>>, k: number, temperature: number, stops: Stops): Promise<Sample[]> {
  const samples: Sample[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < k && !stops.any; i++) {
    try {
      const answer = await sampleZeroShotPlus(ctx, prepared, temperature, `libro sample ${i + 1}/${k}`);
      const text = extractPatchText(answer.content);
      const s: Sample = { index: i, size: 0 };
      samples.push(s);
      const dup = seen.get(text.trim());
      if (dup !== undefined) {
        s.duplicateOf = dup;
        s.candidate = samples[dup].candidate;
        s.size = samples[dup].size;
        continue;
      }
      seen.set(text.trim(), i);
      s.candidate = await evaluateCandidate(ctx, text, { rerun: false });
      s.size = addedLines(s.candidate.testPatch);
      if (s.candidate.budgetExhausted) stops.exhausted ??= s.candidate.budgetExhausted;
    } catch (e) {
      stops.stop(e);
    }
  }
  return samples;
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
