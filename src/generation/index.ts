/**
 * The generation layer: write a test that reproduces an issue on base, and verify it.
 *
 *   reproduce(workbench, issue, { strategy, llm, budget }) → Reproduction
 *
 * Strategies: `snippet` (no LLM), `zero-shot-plus`, `libro`, `agent`, `ensemble`. Without an LLM
 * endpoint the default is `snippet`; with one, `ensemble` (snippet → zero-shot-plus → agent).
 */
import { logger as defaultLogger, type Logger } from '../util/logger.js';
import { redact, secretValues } from '../util/secrets.js';
import { errorLine, SwtError } from '../util/errors.js';
import { Budget, budgetLimitsFrom, isBudgetExhausted, type BudgetLimits } from './budget.js';
import { toReproduction, type StrategyContext, type StrategyName, type StrategyOptions } from './candidate.js';
import { RecordingModel } from './answers.js';
import { createLlmFromEnv, type LlmSettingsInput } from './llmClient.js';
import type { ChatModel } from './llmTypes.js';
import { runAgentStrategy } from './strategies/agent.js';
import { runEnsembleStrategy } from './strategies/ensemble.js';
import { withFixCheck } from './fixCheck.js';
import { runLibroStrategy } from './strategies/libro.js';
import { runSnippetStrategy } from './strategies/snippet.js';
import { runZeroShotPlusStrategy } from './strategies/zeroShotPlus.js';
import { runVotedZeroShotPlus } from './strategies/zeroShotPlusVote.js';
import type { IssueInput, Reproduction, Workbench } from './types.js';

export const STRATEGIES: readonly StrategyName[] = ['snippet', 'zero-shot-plus', 'libro', 'agent', 'ensemble'];

export interface ReproduceOptions extends StrategyOptions {
  /** Default: `ensemble` when an LLM is available, else `snippet`. */
  strategy?: StrategyName;
  /**
   * The model. Undefined: built from the environment (OPENAI_API_KEY / OPENAI_BASE_URL …) when
   * configured; null: no LLM (only `snippet` can run). Settings are accepted too.
   */
  llm?: ChatModel | Partial<LlmSettingsInput> | null;
  /** A shared Budget, or limits for a new one (defaults from SWT_BUDGET_* and DEFAULT_BUDGET). */
  budget?: Budget | Partial<BudgetLimits>;
  logger?: Logger;
}

/** Every string in a JSON-like value, scrubbed of the given secrets. */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
  if (!secrets.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redact(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

function isChatModel(x: unknown): x is ChatModel {
  return typeof x === 'object' && x !== null && typeof (x as ChatModel).chat === 'function';
}

export function resolveLlm(llm: ReproduceOptions['llm'], logger?: Logger): ChatModel | null {
  if (llm === null) return null;
  if (isChatModel(llm)) return llm;
  return createLlmFromEnv(undefined, llm ?? {}, { logger });
}

const RUNNERS: Record<Exclude<StrategyName, 'ensemble'>, (ctx: StrategyContext) => Promise<Reproduction>> = {
  snippet: runSnippetStrategy,
  'zero-shot-plus': (ctx) => ((ctx.options.vote?.samples ?? 1) > 1 ? runVotedZeroShotPlus(ctx) : runZeroShotPlusStrategy(ctx)),
  libro: runLibroStrategy,
  agent: runAgentStrategy,
};

/** Runs one strategy (or the ensemble) for one issue, within one budget, and returns a verified result. */
export async function reproduce(workbench: Workbench, issue: IssueInput, opts: ReproduceOptions = {}): Promise<Reproduction> {
  const log = (opts.logger ?? defaultLogger).child({ component: 'generation' });
  const resolved = resolveLlm(opts.llm, opts.logger);
  const llm = resolved ? new RecordingModel(resolved) : null;
  const strategy: StrategyName = opts.strategy ?? (llm ? 'ensemble' : 'snippet');
  if (!STRATEGIES.includes(strategy)) throw new SwtError('BAD_INPUT', `unknown strategy "${strategy}"`, { hint: `one of ${STRATEGIES.join(', ')}` });
  const budget = opts.budget instanceof Budget ? opts.budget : new Budget(budgetLimitsFrom(undefined, opts.budget ?? {}));
  const ctx: StrategyContext = { workbench, issue, budget, llm, log, options: opts };
  log.info({ strategy, model: llm?.model ?? null, budget: budget.limits }, 'reproducing the issue');
  let result: Reproduction;
  try {
    // Each strategy's own result meets the stand-in fix (when asked), so the ensemble chooses with it.
    const run = async (name: Exclude<StrategyName, 'ensemble'>, c: StrategyContext) => withFixCheck(c, await RUNNERS[name](c));
    if (strategy === 'ensemble') result = await runEnsembleStrategy(ctx, run);
    else if (strategy !== 'snippet' && !llm) result = toReproduction(strategy, budget, { reason: `the ${strategy} strategy needs an LLM endpoint (set OPENAI_API_KEY or OPENAI_BASE_URL, or SWT_LLM_MODEL=local:<model> for one run here)` });
    else result = await run(strategy, ctx);
  } catch (e) {
    if (!isBudgetExhausted(e)) throw e;
    result = toReproduction(strategy, budget, { reason: errorLine(e, 1000), budgetExhausted: (e as { dimension?: Reproduction['budgetExhausted'] }).dimension });
  } finally {
    if (!(opts.budget instanceof Budget)) budget.dispose();
  }
  if (llm) {
    const evidence = result.evidence ?? { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [] };
    result = { ...result, model: { name: llm.model, local: Boolean(llm.local) }, evidence: { ...evidence, answers: llm.answers } };
  }
  // Everything in the result (evidence, failure messages, transcripts) leaves the process: scrub it all.
  result = redactDeep(result, secretValues());
  log.info({ strategy: result.strategy, status: result.status, reason: result.reason, usage: result.usage }, 'reproduction finished');
  return result;
}

export { Budget, BudgetExhaustedError, DEFAULT_BUDGET, budgetLimitsFrom, isBudgetExhausted } from './budget.js';
export type { BudgetDimension, BudgetLimits } from './budget.js';
export { LlmClient, createLlmFromEnv, describeSettings, isLlmConfigured, llmSettingsFrom, llmSettingsSchema } from './llmClient.js';
export type { LlmSettings, LlmSettingsInput, ToolMode } from './llmClient.js';
export type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall, ToolSpec } from './llmTypes.js';
export { DEFAULT_PRICES, buildPriceTable, costOf, priceFor } from './prices.js';
export type { ModelPrice, PriceTable } from './prices.js';
export { judgeRuns, classifyFailure, reportedFailure } from './verify.js';
export type { Judgement } from './verify.js';
export { planSnippetTest } from './snippet/index.js';
export type { SnippetPlan, SnippetTest } from './snippet/index.js';
export { evaluateCandidate } from './candidate.js';
export type { StrategyName, StrategyOptions, StrategyContext, CandidateResult } from './candidate.js';
export { DEFAULT_ENSEMBLE_ORDER } from './strategies/ensemble.js';
export type { RawAnswer } from './answers.js';
export type { IssueInput, Reproduction, ReproductionEvidence, FailureEvidence, Workbench, PatchApplication, ReproductionStatus } from './types.js';
