/**
 * `zero-shot-plus` (SWT-bench §4.3, App. E Figs. 12–13): BM25-retrieved source files plus their
 * existing tests, one prompt, the answer in the custom diff format, then verification.
 */
import { isBudgetExhausted, type BudgetDimension } from '../budget.js';
import { evaluateCandidate, isLlmFailure, toReproduction, type CandidateResult, type StrategyContext } from '../candidate.js';
import { usableAnswer } from '../answers.js';
import { withFeedback } from '../feedback.js';
import { AFTER_CUT_NOTE, zeroShotPlusPrompt, issueText } from '../prompts.js';
import { repoInfo } from '../repoFiles.js';
import { projectFiles, retrieve, type RetrievalResult } from '../retrieval.js';
import type { ChatResponse } from '../llmTypes.js';
import type { Reproduction } from '../types.js';
import { fileHead, filePreamble } from '../filePreview.js';

/** The patch text in a model's answer: its custom-diff (or diff) fenced blocks, else the whole answer. */
export function extractPatchText(answer: string): string {
  const fenced = (lang: RegExp) => [...answer.matchAll(/```([\w-]*)[^\n]*\n([\s\S]*?)```/g)].filter((m) => lang.test(m[1])).map((m) => m[2]);
  const custom = fenced(/^(custom-diff|custom_diff|customdiff)$/i);
  if (custom.length) return custom.join('\n');
  const unified = fenced(/^(diff|patch|udiff)$/i);
  if (unified.length) return unified.join('\n');
  const any = fenced(/^$/).filter((b) => /^diff\s*$/m.test(b) && /^end diff\s*$/m.test(b));
  if (any.length) return any.join('\n');
  return answer;
}

/** Instructions, the issue and the answer, in tokens: what a small context keeps free of retrieved code. */
const PROMPT_OVERHEAD_TOKENS = 2000;

/** Retrieved code the prompt may hold: the option (default 60 000 characters), within a small model's context (~3 characters a token). */
export function retrievalChars(ctx: Pick<StrategyContext, 'llm' | 'options'>): number | undefined {
  const limit = ctx.llm?.contextLimit;
  const asked = ctx.options.retrieval?.maxChars;
  if (!limit) return asked;
  return Math.min(asked ?? 60_000, Math.max(2000, (limit - PROMPT_OVERHEAD_TOKENS) * 3));
}

export interface ZeroShotPlusPrepared {
  prompt: string;
  /**
   * Asked afresh after an answer cut at the answer limit: the existing tests shown by their first
   * lines only (a small model's prompt shows no more than their imports anyway). At T 0 the 1.5B, told
   * in the same conversation that it had copied a test file, copied it again token for token
   * (devalue, camelcase in bench:generate).
   */
  afterCut: string;
  retrieval: RetrievalResult;
}

/** Lines of each existing test file the prompt after a cut shows: the imports and the first tests. */
const TEST_HEAD_LINES = 30;

export async function prepareZeroShotPlus(ctx: StrategyContext): Promise<ZeroShotPlusPrepared> {
  const info = await repoInfo(ctx.workbench.repoDir, ctx.workbench.testCommand);
  const retrieval = await retrieve(ctx.workbench.repoDir, issueText(ctx.issue), {
    maxChars: retrievalChars(ctx),
    maxFiles: ctx.options.retrieval?.maxFiles,
  });
  const answerFormat = ctx.options.answerFormat ?? (ctx.llm?.local ? 'whole-file' : 'custom-diff');
  // A small model (whole-file answers) sees the tests by their imports (shown whole, it copies them),
  // and the file naming the project: the 1.5B imported Masterminds/semver without go.mod's /v3.
  const small = answerFormat === 'whole-file';
  const tests = small ? retrieval.tests.map((t) => filePreamble(t)) : retrieval.tests;
  const sources = small ? [...(await projectFiles(ctx.workbench.repoDir, [...retrieval.sources, ...retrieval.tests])), ...retrieval.sources] : retrieval.sources;
  const input = { issue: ctx.issue, sources, tests, testCommand: ctx.workbench.testCommand, language: info.language, answerFormat };
  const afterCut = `${zeroShotPlusPrompt({ ...input, tests: tests.map((t) => fileHead(t, TEST_HEAD_LINES)) })}\n\n${AFTER_CUT_NOTE}`;
  return { prompt: zeroShotPlusPrompt(input), afterCut, retrieval };
}

/** One sample: the model's answer to the prompt (throws BUDGET_EXHAUSTED when the budget is spent). */
export async function sampleZeroShotPlus(ctx: StrategyContext, prepared: ZeroShotPlusPrepared, temperature: number, purpose: string, seed?: number): Promise<ChatResponse> {
  if (!ctx.llm) throw new Error('zero-shot-plus needs an LLM');
  return ctx.llm.chat({ messages: [{ role: 'user', content: prepared.prompt }], temperature, purpose, ...(seed !== undefined ? { seed } : {}) }, { budget: ctx.budget });
}

export async function runZeroShotPlusStrategy(ctx: StrategyContext): Promise<Reproduction> {
  const { budget, log } = ctx;
  if (!ctx.llm) return toReproduction('zero-shot-plus', budget, { reason: 'no LLM endpoint is configured' });
  const prepared = await prepareZeroShotPlus(ctx);
  const details = { retrieved: prepared.retrieval.sources.map((s) => s.path), tests: prepared.retrieval.tests.map((t) => t.path) };
  log.info(details, 'zero-shot-plus: retrieved context');
  let answer: ChatResponse;
  try {
    answer = await sampleZeroShotPlus(ctx, prepared, ctx.llm.temperature, 'zero-shot-plus');
  } catch (e) {
    if (isLlmFailure(e)) {
      return toReproduction('zero-shot-plus', budget, {
        reason: `the LLM failed: ${e.message}`,
        evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [], details },
      });
    }
    if (!isBudgetExhausted(e)) throw e;
    const dim = (e as { dimension?: BudgetDimension }).dimension;
    return toReproduction('zero-shot-plus', budget, {
      reason: `stopped before an answer: ${(e as Error).message}`,
      budgetExhausted: dim,
      evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [], details },
    });
  }
  const usable = usableAnswer(answer);
  const first: CandidateResult = await evaluateCandidate(ctx, extractPatchText(usable.text), { note: usable.note });
  const c = await withFeedback(ctx, [{ role: 'user', content: prepared.prompt }, { role: 'assistant', content: answer.content }], first, extractPatchText, { firstCut: answer.finishReason === 'length', afterCut: prepared.afterCut });
  return toReproduction('zero-shot-plus', budget, { ...c, evidence: { ...c.evidence, details: { ...details, feedbackRounds: c.feedbackRounds } } });
}
