/** The installation's day as the Store counts it: what is spent, what is left, who may start more. */
import type { Target } from '../github/types.js';
import type { LimitHit } from '../github/render.js';
import type { JobDeps } from './deps.js';
import { AUTHOR_WINDOW_MS, budgetReached, remaining, spendScope, utcDay, type Spend } from './limits.js';

/** The installation's daily budget, when it is used up. */
export async function budgetHit(d: JobDeps, t: Target): Promise<LimitHit | undefined> {
  const spent = await d.store.spendOf(spendScope(t), utcDay());
  const dim = budgetReached(spent, d.limits.daily);
  return dim ? { kind: 'daily-budget', dimension: dim, spent: spent[dim], limit: d.limits.daily[dim] } : undefined;
}

/**
 * Before new work is queued: the daily budget, then the rate of whoever caused it (counted
 * here). A maintainer's command or re-run is not rate-limited.
 */
export async function limitHit(d: JobDeps, t: Target, sender: string | undefined, forced: boolean): Promise<LimitHit | undefined> {
  const over = await budgetHit(d, t);
  if (over || forced || !sender) return over;
  if (await d.store.takeAuthorRun(spendScope(t), sender, Date.now(), AUTHOR_WINDOW_MS, d.limits.authorStartsPerHour)) return undefined;
  return { kind: 'author-rate', login: sender, perHour: d.limits.authorStartsPerHour };
}

export const addSpend = (d: JobDeps, t: Target, x: Spend) => (x.tokens || x.usd || x.containerMs ? d.store.addSpend(spendScope(t), utcDay(), x) : Promise.resolve());

export const leftToday = async (d: JobDeps, t: Target): Promise<Spend> => remaining(await d.store.spendOf(spendScope(t), utcDay()), d.limits.daily);
