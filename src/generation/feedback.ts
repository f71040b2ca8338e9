/**
 * Execution feedback: a candidate that did not reproduce the issue (it did not apply, did not
 * compile, failed for another reason or passed on base) goes back to the model with what the run
 * said, in the same conversation (so a local model reuses the evaluated prompt), within the budget.
 * Default: one round for a local model (small models often slip: an unused import, a wrong path),
 * none for a remote one (the strategies as the paper runs them); `options.feedback.rounds` sets it.
 * zero-shot-plus revises its answer, LIBRO each sample that does not fail on base, the agent the
 * test it submitted or left once its loop has ended. An answer cut at the answer limit is followed
 * by the strategy's prompt asked afresh (`afterCut`), when it has one. A revision that repeats the
 * answer it revises word for word is drawn once more from the first prompt, told what went wrong,
 * at REDRAW_TEMPERATURE.
 */
import { isBudgetExhausted } from './budget.js';
import { evaluateCandidate, isLlmFailure, type CandidateResult, type StrategyContext } from './candidate.js';
import type { ChatMessage } from './llmTypes.js';
import { usableAnswer } from './answers.js';
import type { ClosedAnswer } from '../patch/cutAnswer.js';

const EXCERPT_CHARS = 3000;
/** A feedback answer that repeats the one before is drawn again at this temperature. */
export const REDRAW_TEMPERATURE = 0.7;

export function feedbackRounds(ctx: Pick<StrategyContext, 'llm' | 'options'>): number {
  return ctx.options.feedback?.rounds ?? (ctx.llm?.local ? 1 : 0);
}

/** What a re-drawn answer's prompt adds: why the earlier answer failed, and what its run printed. */
export function redrawNote(c: CandidateResult): string {
  const out = [`An earlier answer to this did not reproduce the issue: ${c.reason}`];
  if (passedOnBase(c)) out.push(FLIP_HINT.replace(/^Your test/, 'Its test').replace(/what it asserts/, 'what it asserted'));
  if (c.failureExcerpt) out.push('What its test run printed:', '```text', c.failureExcerpt.slice(-EXCERPT_CHARS / 2), '```');
  out.push('Write a different test that avoids that.');
  return out.join('\n');
}

/** Every new test ran and passed on base. */
export function passedOnBase(c: CandidateResult): boolean {
  const run = c.evidence.runs[0];
  return Boolean(run && run.passed > 0 && !run.failures.length);
}

// The last sentence: the 1.5B also checks an input the issue says already works (Masterminds ee95afb).
// Offered as one of two readings ("either … or"), it left its test as it was on three instances of three.
export const FLIP_HINT =
  'Your test PASSES on the current, buggy code: what it asserts is the wrong behaviour the issue complains about. Turn it around: assert what the issue says should happen (the correct result, or no error), so that the test fails now and passes once the bug is fixed. Use an input the issue says goes wrong, not one it says already works.';

export const CUT_HINT =
  'Your answer was cut off at the answer limit, so the file is incomplete (a copy of the tests already in the repository, or the same check written again and again). Write a new file holding only the new test, with its imports and one or two checks of what the issue reports, and nothing else.';

/** What the model is told about its candidate; `cut`: the answer that gave it ran into the answer limit. */
export function feedbackPrompt(c: CandidateResult, opts: { cut?: boolean } = {}): string {
  const out = [`Your test did not reproduce the issue: ${c.reason}`];
  // A small model that copies whole test files, or loops on one assert, runs out of answer tokens, and with the same start (T = 0) does so again.
  if (opts.cut) out.push('', CUT_HINT);
  if (c.evidence.applyErrors?.length) {
    out.push('', `Your answer could not be turned into a test file (${c.evidence.applyErrors.join('; ').slice(0, 600)}). Give the whole test file in one fenced code block, with its path on the line before the block.`);
  }
  if (passedOnBase(c)) {
    // Small models often assert the bug itself (`pytest.raises` around the failing call): say so, and ask for the flip.
    out.push('', FLIP_HINT);
  }
  if (c.failureExcerpt) out.push('', 'What the test run printed:', '```text', c.failureExcerpt.slice(-EXCERPT_CHARS), '```');
  out.push('', 'Correct the test. It must fail on the current code for the reason the issue gives (an assertion or the exception the issue reports, not an import error, an unused import or a syntax error) and pass once the issue is fixed. Answer with the corrected test file only.');
  return out.join('\n');
}

/**
 * Up to `rounds` more turns after `first`: the conversation so far (ending with the model's answer
 * that gave `first`) and what went wrong. Returns the last candidate (or the first one when the
 * model or the budget gave out). `rerun: false` keeps each revision to one run (LIBRO's samples).
 */
export async function withFeedback(
  ctx: StrategyContext,
  conversation: ChatMessage[],
  first: CandidateResult,
  extract: (answer: string) => string,
  opts: { rounds?: number; rerun?: boolean; done?: (c: CandidateResult) => boolean; firstCut?: boolean; afterCut?: string } = {},
): Promise<CandidateResult & { feedbackRounds: number }> {
  const rounds = opts.rounds ?? feedbackRounds(ctx);
  const done = opts.done ?? ((x: CandidateResult) => x.status === 'reproduced');
  let c = first;
  let n = 0;
  let messages = conversation;
  let cut = !!opts.firstCut;
  const asked = conversation.find((m) => m.role === 'user');
  while (ctx.llm && !done(c) && !c.budgetExhausted && n < rounds) {
    // After a cut, asked afresh when the strategy has such a prompt: at T 0 the same conversation gives the same copy again.
    messages = cut && opts.afterCut ? [{ role: 'user', content: opts.afterCut }] : [...messages, { role: 'user', content: feedbackPrompt(c, { cut }) }];
    let answer: string;
    let usable: ClosedAnswer;
    try {
      let r = await ctx.llm.chat({ messages, purpose: `feedback ${n + 1}` }, { budget: ctx.budget });
      // The same answer again (the 1.5B at T 0 repeated its test word for word after a compile error): drawn once more, with a seed of its own.
      const before = messages.at(-2);
      if (before?.role === 'assistant' && asked && r.content.trim() === before.content.trim()) {
        // Asked again with its own answer in view, at T 0.7, it copied that answer once more (b1bb761):
        // the first prompt afresh, with what went wrong but not the answer.
        messages = [{ role: 'user', content: `${asked.content}\n\n${redrawNote(c)}` }];
        r = await ctx.llm.chat({ messages, purpose: `feedback ${n + 1} (re-drawn)`, temperature: REDRAW_TEMPERATURE, seed: n + 2 }, { budget: ctx.budget });
      }
      answer = r.content;
      usable = usableAnswer(r);
      cut = r.finishReason === 'length';
    } catch (e) {
      if (isLlmFailure(e) || isBudgetExhausted(e)) break;
      throw e;
    }
    n += 1;
    messages = [...messages, { role: 'assistant', content: answer }];
    const next = await evaluateCandidate(ctx, extract(usable.text), { rerun: opts.rerun, note: usable.note });
    next.evidence.notes.push(`feedback round ${n}: the first candidate ${first.status === 'reproduced' ? 'reproduced' : `did not reproduce (${first.reason.slice(0, 200)})`}`);
    // A round that produced nothing usable does not replace a candidate that at least ran.
    c = next.testPatch || !c.testPatch ? next : c;
  }
  return { ...c, feedbackRounds: n };
}
