/**
 * The techniques a run switches on, from one short spec (the CLI's `--techniques`, bench:generate's
 * `strategy:spec`), pure: `feedback=N` (rounds of execution feedback), `vote=N` or `vote=N@T`
 * (samples and their temperature), `fix=off|demote|confirm|require` (the stand-in fix), `libro=judge|vote`
 * (how LIBRO chooses), `order=snippet+zero-shot-plus` (the ensemble's strategies). Items are separated by `,` or `:`.
 */
import { SwtError } from '../util/errors.js';
import type { StrategyOptions } from './candidate.js';
import { FIX_CHECK_MODES, type FixCheckMode } from './fixCheck.js';

export const TECHNIQUES_HELP = 'feedback=N, vote=N[@temperature], fix=off|demote|confirm|require, libro=judge|vote, order=<strategy>+<strategy>… (comma-separated)';

function bad(item: string, why: string): never {
  throw new SwtError('BAD_INPUT', `techniques: "${item}" ${why}`, { hint: TECHNIQUES_HELP });
}

function count(item: string, v: string, max: number): number {
  if (!/^\d+$/.test(v) || +v > max) bad(item, `needs a whole number from 0 to ${max}`);
  return +v;
}

export function parseTechniques(spec: string | undefined): Pick<StrategyOptions, 'feedback' | 'vote' | 'fixCheck' | 'libro' | 'ensemble'> {
  const out: Pick<StrategyOptions, 'feedback' | 'vote' | 'fixCheck' | 'libro' | 'ensemble'> = {};
  for (const item of (spec ?? '').split(/[,:]/).map((s) => s.trim()).filter(Boolean)) {
    const [key, value = ''] = item.split('=', 2).map((s) => s.trim()) as [string, string?];
    if (key === 'feedback') out.feedback = { rounds: count(item, value, 5) };
    else if (key === 'vote') {
      const [n, t] = value.split('@');
      const temperature = t === undefined ? undefined : Number(t);
      if (temperature !== undefined && !(temperature > 0 && temperature <= 2)) bad(item, 'needs a temperature above 0 and at most 2');
      out.vote = { samples: count(item, n ?? '', 20), ...(temperature !== undefined ? { temperature } : {}) };
    } else if (key === 'fix') {
      if (!FIX_CHECK_MODES.includes(value as FixCheckMode)) bad(item, `is one of ${FIX_CHECK_MODES.map((m) => `fix=${m}`).join(', ')}`);
      out.fixCheck = { mode: value as FixCheckMode };
    } else if (key === 'libro') {
      if (value !== 'judge' && value !== 'vote') bad(item, 'is one of libro=judge, libro=vote');
      out.libro = { select: value };
    } else if (key === 'order') {
      const order = value.split('+').filter(Boolean);
      const known = ['snippet', 'zero-shot-plus', 'libro', 'agent'];
      if (!order.length || order.some((o) => !known.includes(o))) bad(item, `lists the ensemble's strategies joined by +, of ${known.join(', ')}`);
      out.ensemble = { order: order as NonNullable<StrategyOptions['ensemble']>['order'] };
    } else bad(item, 'is not a technique');
  }
  return out;
}
