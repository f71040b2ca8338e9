import { z } from 'zod';
import { SwtError, isSwtError } from '../util/errors.js';
import type { Reproduction } from './types.js';
import { budgetLimits, type BudgetLimits, type Environment } from '../settings/index.js';

export type { BudgetLimits } from '../settings/index.js';

export type BudgetDimension = keyof BudgetLimits;

export const DEFAULT_BUDGET: BudgetLimits = budgetLimits({});

export const budgetLimitsSchema = z.object({
  tokens: z.number().int().positive(),
  usd: z.number().positive(),
  steps: z.number().int().positive(),
  wallMs: z.number().int().positive(),
});

/** The operator's SWT_BUDGET_* (parsed by settings/), with explicit values winning. */
export function budgetLimitsFrom(env?: Environment, overrides: Partial<BudgetLimits> = {}): BudgetLimits {
  const merged: Record<string, unknown> = { ...budgetLimits(env) };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) merged[k] = v;
  const r = budgetLimitsSchema.safeParse(merged);
  if (!r.success) throw new SwtError('BAD_CONFIG', `invalid budget: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}

export class BudgetExhaustedError extends SwtError {
  readonly dimension: BudgetDimension;
  constructor(dimension: BudgetDimension, detail: string) {
    super('BUDGET_EXHAUSTED', `budget exhausted (${dimension}): ${detail}`);
    this.dimension = dimension;
  }
}

export function isBudgetExhausted(e: unknown): e is BudgetExhaustedError {
  return e instanceof BudgetExhaustedError || isSwtError(e, 'BUDGET_EXHAUSTED');
}

/**
 * Tracks what one issue has spent: tokens, dollars, LLM calls and wall time. `check()` throws
 * BUDGET_EXHAUSTED once any dimension is used up; strategies catch it and return what they have.
 * One Budget is shared by all the strategies an ensemble runs for the same issue.
 */
export class Budget {
  readonly limits: BudgetLimits;
  promptTokens = 0;
  completionTokens = 0;
  costUsd = 0;
  steps = 0;
  readonly startedAt: number;
  private readonly now: () => number;
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  /** The first dimension that ran out, once one has. */
  exhaustedBy?: BudgetDimension;

  constructor(limits: Partial<BudgetLimits> = {}, opts: { now?: () => number } = {}) {
    this.limits = { ...DEFAULT_BUDGET, ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) };
    budgetLimitsSchema.parse(this.limits);
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
  }

  get tokens(): number {
    return this.promptTokens + this.completionTokens;
  }

  elapsedMs(): number {
    return this.now() - this.startedAt;
  }

  remainingMs(): number {
    return Math.max(0, this.limits.wallMs - this.elapsedMs());
  }

  /** Aborts when the wall-time budget runs out; pass it to anything long. */
  get signal(): AbortSignal {
    if (!this.timer && !this.controller.signal.aborted) {
      const ms = this.remainingMs();
      if (ms <= 0) this.controller.abort(new BudgetExhaustedError('wallMs', 'wall time is up'));
      else {
        this.timer = setTimeout(() => this.controller.abort(new BudgetExhaustedError('wallMs', 'wall time is up')), ms);
        this.timer.unref();
      }
    }
    return this.controller.signal;
  }

  /** The first exhausted dimension, or undefined. `upcoming` adds an estimate for the next call. */
  exhausted(upcoming: { tokens?: number; usd?: number } = {}): BudgetDimension | undefined {
    if (this.steps >= this.limits.steps) return 'steps';
    if (this.tokens + (upcoming.tokens ?? 0) > this.limits.tokens || this.tokens >= this.limits.tokens) return 'tokens';
    if (this.costUsd + (upcoming.usd ?? 0) > this.limits.usd || this.costUsd >= this.limits.usd) return 'usd';
    if (this.elapsedMs() >= this.limits.wallMs) return 'wallMs';
    return undefined;
  }

  /** Throws BUDGET_EXHAUSTED when a dimension is used up (or would be by the upcoming call). */
  check(upcoming: { tokens?: number; usd?: number } = {}): void {
    const dim = this.exhausted(upcoming);
    if (!dim) return;
    this.exhaustedBy ??= dim;
    const detail: Record<BudgetDimension, string> = {
      steps: `${this.steps}/${this.limits.steps} LLM calls`,
      tokens: `${this.tokens}${upcoming.tokens ? ` (+~${upcoming.tokens} next)` : ''}/${this.limits.tokens} tokens`,
      usd: `$${this.costUsd.toFixed(4)}/$${this.limits.usd}`,
      wallMs: `${this.elapsedMs()}/${this.limits.wallMs} ms`,
    };
    throw new BudgetExhaustedError(dim, detail[dim]);
  }

  /** Only wall time: for work that spends no tokens (running tests). */
  checkWallTime(): void {
    if (this.elapsedMs() >= this.limits.wallMs) {
      this.exhaustedBy ??= 'wallMs';
      throw new BudgetExhaustedError('wallMs', `${this.elapsedMs()}/${this.limits.wallMs} ms`);
    }
  }

  /** Records one completed LLM call. */
  record(call: { promptTokens: number; completionTokens: number; costUsd: number }): void {
    this.steps += 1;
    this.promptTokens += call.promptTokens;
    this.completionTokens += call.completionTokens;
    this.costUsd += call.costUsd;
  }

  usage(): Reproduction['usage'] {
    return {
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      costUsd: Number(this.costUsd.toFixed(6)),
      steps: this.steps,
      wallMs: this.elapsedMs(),
    };
  }

  /** Snapshot for computing what one strategy of an ensemble spent. */
  snapshot(): Reproduction['usage'] {
    return this.usage();
  }

  static diff(after: Reproduction['usage'], before: Reproduction['usage']): Reproduction['usage'] {
    return {
      promptTokens: after.promptTokens - before.promptTokens,
      completionTokens: after.completionTokens - before.completionTokens,
      costUsd: Number((after.costUsd - before.costUsd).toFixed(6)),
      steps: after.steps - before.steps,
      wallMs: after.wallMs - before.wallMs,
    };
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
