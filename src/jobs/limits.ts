/**
 * What strangers can make the App spend: the operator's per-installation daily budget (tokens,
 * dollars, container minutes), the per-author rate of new runs, and how many linked issues one
 * pull request gets checked against. Settings from the environment; the decisions are pure, the
 * counters live in the Store.
 */
import type { Spend } from '../store/types.js';
import { SwtError } from '../util/errors.js';

export type { Spend };
import { repoSlug, type Target } from '../github/types.js';


export const NO_SPEND: Spend = { tokens: 0, usd: 0, containerMs: 0 };

export interface SpendLimits {
  /** Per installation and UTC day. */
  daily: Spend;
  /** New reproductions and checks one author may cause per hour (a maintainer's command is not counted). */
  authorStartsPerHour: number;
  /** Linked issues one pull request is checked against; the rest are named and left out. */
  maxLinkedIssues: number;
}

/**
 * SWT_DAILY_TOKENS (2 000 000), SWT_DAILY_USD (10), SWT_DAILY_CONTAINER_MINUTES (600),
 * SWT_AUTHOR_RUNS_PER_HOUR (10), SWT_MAX_LINKED_ISSUES (5).
 */
export function spendLimitsFrom(env: NodeJS.ProcessEnv = process.env): SpendLimits {
  const num = (name: string, dflt: number) => {
    const raw = env[name]?.trim();
    if (!raw) return dflt;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new SwtError('BAD_CONFIG', `${name} must be a number ≥ 0, got ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    daily: { tokens: num('SWT_DAILY_TOKENS', 2_000_000), usd: num('SWT_DAILY_USD', 10), containerMs: num('SWT_DAILY_CONTAINER_MINUTES', 600) * 60_000 },
    authorStartsPerHour: Math.floor(num('SWT_AUTHOR_RUNS_PER_HOUR', 10)),
    maxLinkedIssues: Math.max(1, Math.floor(num('SWT_MAX_LINKED_ISSUES', 5))),
  };
}

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
