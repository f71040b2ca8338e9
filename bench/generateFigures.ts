/** bench:generate's arithmetic over eval rows, pure (test/unit/bench.generate.test.ts). */
import { summarize, type InstanceResult } from '../src/eval/report.js';

/** One strategy's figures over the instances it ran. */
export function strategyFigures(strategy: string, rows: readonly InstanceResult[]) {
  const report = summarize(rows);
  const posted = rows.filter((r) => r.reproduction?.status === 'reproduced');
  // A posted test that fails on the real fix too reproduces nothing the fix changes.
  const falseRepro = posted.filter((r) => r.tests.some((t) => t.head === 'fail' && !t.flaky));
  const n = rows.length || 1;
  const tokens = rows.reduce((a, r) => a + (r.reproduction?.usage ? r.reproduction.usage.promptTokens + r.reproduction.usage.completionTokens : 0), 0);
  const seconds = rows.reduce((a, r) => a + r.durationMs, 0) / 1000;
  const verdicts = (v: string) => rows.filter((r) => r.reproduction?.fixCheck === v).length;
  return {
    strategy,
    instances: rows.length,
    errors: report.errors,
    S: report.S,
    W: report.W,
    F2P: report.F2P,
    posted: posted.length,
    falseReproductions: falseRepro.length,
    falseIds: falseRepro.map((r) => r.instance_id),
    solved: rows.filter((r) => r.success).map((r) => r.instance_id),
    // The stand-in fix's verdicts: fails-on-fix ones were not posted (fix=demote|confirm|require).
    fixCheck: { flips: verdicts('flips'), failsOnFix: verdicts('fails-on-fix'), noFix: verdicts('no-fix') },
    tokensPerInstance: Math.round(tokens / n),
    secondsPerInstance: +(seconds / n).toFixed(1),
  };
}

/** One instance's line of the per-instance table: outcome, S, tokens, seconds and why. */
export function outcomeRow(strategy: string, r: InstanceResult): string {
  const u = r.reproduction?.usage;
  const tokens = u ? `${u.promptTokens} + ${u.completionTokens}` : '—';
  const why = (r.error ?? r.reproduction?.reason ?? '').slice(0, 200).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return `| ${strategy} | ${r.instance_id} | ${r.reproduction?.status ?? '—'} | ${r.success ? 'S' : ''} | ${tokens} | ${(r.durationMs / 1000).toFixed(0)} | ${why} |`;
}
