/**
 * What strangers can make the App spend: the operator's per-installation daily budget (tokens,
 * dollars, container minutes), the per-author rate of new runs, and how many linked issues one
 * pull request gets checked against. The limits are settings (settings/index.ts); the decisions
 * here are pure, the counters live in the Store.
 */
import { repoSlug, type Target } from '../github/types.js';
import type { Spend } from '../settings/index.js';

export type { Spend, SpendLimits } from '../settings/index.js';


export const NO_SPEND: Spend = { tokens: 0, usd: 0, containerMs: 0 };

/** Whose budget a job spends: its installation's (the CLI, with none, its repository's). */
export function spendScope(t: Target): string {
  return t.installationId ? `installation:${t.installationId}` : `repo:${repoSlug(t)}`;
}

/** The UTC day a budget counts in. */
export function utcDay(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 10);
}

export type SpendDimension = keyof Spend;

/** The first dimension of the daily budget used up, or undefined. */
export function budgetReached(spent: Spend, limits: Spend): SpendDimension | undefined {
  return (['tokens', 'usd', 'containerMs'] as const).find((d) => spent[d] >= limits[d]);
}

/** What is left of the day's budget (never below 0). */
export function remaining(spent: Spend, limits: Spend): Spend {
  return { tokens: Math.max(0, limits.tokens - spent.tokens), usd: Math.max(0, limits.usd - spent.usd), containerMs: Math.max(0, limits.containerMs - spent.containerMs) };
}

/** The linked issues a check covers: the first `max`, in number order, and how many are left out. */
export function capLinks(links: readonly number[], max: number): { checked: number[]; left: number[] } {
  return { checked: links.slice(0, max), left: links.slice(max) };
}

export const AUTHOR_WINDOW_MS = 3600_000;
