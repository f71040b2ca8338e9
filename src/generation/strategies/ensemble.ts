/**
 * `ensemble`: strategies in order of cost (default snippet → zero-shot-plus → agent), sharing one
 * budget. Mode 'first' stops at the first verified reproduction (with the stand-in fix on, the
 * first that survives it); mode 'best' runs them all (while the budget lasts) and picks by evidence.
 */
import { Budget, isBudgetExhausted } from '../budget.js';
import { toReproduction, type StrategyContext, type StrategyName } from '../candidate.js';
import type { Reproduction } from '../types.js';

export const DEFAULT_ENSEMBLE_ORDER: Exclude<StrategyName, 'ensemble'>[] = ['snippet', 'zero-shot-plus', 'agent'];

/**
 * Higher is better: reproduced; passes with the model's stand-in fix; carries the issue's
 * exception; its failure reason shared by more samples; fewer test lines. A test not posted (it
 * passes on base, or fails on the stand-in fix too) never outranks one that is.
 */
export function evidenceScore(r: Reproduction): number {
  if (r.status !== 'reproduced') return r.testPatch ? 1 : 0;
  let s = 100;
  if (r.evidence?.fixCheck?.verdict === 'flips') s += 40;
  const vote = r.evidence?.vote;
  if (vote && vote.samples > 1) s += Math.round((5 * vote.agree) / vote.samples);
  const failures = r.evidence?.runs?.[0]?.failures ?? [];
  if (failures.some((f) => f.kind === 'issue-exception' || (f.kind === 'assertion' && f.exception))) s += 20;
  if (failures.some((f) => f.kind === 'assertion')) s += 10;
  const lines = r.testPatch.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length;
  return s - Math.min(9, Math.floor(lines / 20));
}

export async function runEnsembleStrategy(
  ctx: StrategyContext,
  run: (name: Exclude<StrategyName, 'ensemble'>, ctx: StrategyContext) => Promise<Reproduction>,
): Promise<Reproduction> {
  const order = ctx.options.ensemble?.order ?? DEFAULT_ENSEMBLE_ORDER;
  const mode = ctx.options.ensemble?.mode ?? 'first';
  const attempts: Reproduction[] = [];
  for (const name of order) {
    if (name !== 'snippet' && !ctx.llm) {
      attempts.push(toReproduction(name, ctx.budget, { reason: 'skipped: no LLM endpoint is configured' }));
      continue;
    }
    const exhausted = ctx.budget.exhausted();
    if (exhausted && name !== 'snippet') {
      attempts.push({ ...toReproduction(name, ctx.budget, { reason: `skipped: budget exhausted (${exhausted})` }), budgetExhausted: exhausted });
      continue;
    }
    const before = ctx.budget.snapshot();
    let r: Reproduction;
    try {
      r = await run(name, ctx);
    } catch (e) {
      if (!isBudgetExhausted(e)) throw e;
      r = toReproduction(name, ctx.budget, { reason: (e as Error).message, budgetExhausted: (e as { dimension?: Reproduction['budgetExhausted'] }).dimension });
    }
    r = { ...r, usage: Budget.diff(ctx.budget.snapshot(), before) };
    attempts.push(r);
    ctx.log.info({ strategy: name, status: r.status, reason: r.reason }, 'ensemble: strategy finished');
    if (mode === 'first' && r.status === 'reproduced') break;
  }
  const ranked = attempts.map((a, i) => ({ a, i, s: evidenceScore(a) })).sort((x, y) => y.s - x.s || x.i - y.i);
  const best = ranked[0]?.a;
  if (!best) return toReproduction('ensemble', ctx.budget, { reason: 'no strategy to run' }, { attempts });
  const chosen = best.status === 'reproduced' ? best : attempts.find((a) => a.testPatch && a.status === best.status && evidenceScore(a) === evidenceScore(best)) ?? best;
  const summary = attempts.map((a) => `${a.strategy}: ${a.status}`).join(', ');
  return {
    ...chosen,
    strategy: `ensemble(${chosen.strategy})`,
    reason: chosen.status === 'reproduced' ? chosen.reason : `no strategy reproduced the issue (${summary}); best: ${chosen.reason}`,
    usage: ctx.budget.usage(),
    budgetExhausted: ctx.budget.exhaustedBy ?? chosen.budgetExhausted,
    attempts,
  };
}
