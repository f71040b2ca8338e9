/** `snippet`: no LLM. What the issue states about its own code, turned into a short test and verified. */
import { evaluateCandidate, toReproduction, type StrategyContext } from '../candidate.js';
import { repoInfo } from '../repoFiles.js';
import { planSnippetTest } from '../snippet/index.js';
import type { Reproduction } from '../types.js';

export async function runSnippetStrategy(ctx: StrategyContext): Promise<Reproduction> {
  const { workbench, issue, budget, log } = ctx;
  const info = await repoInfo(workbench.repoDir, workbench.testCommand);
  const plan = await planSnippetTest(issue, info);
  if (!plan.ok) {
    log.info({ reason: plan.reason }, 'snippet: nothing to build a test from');
    return toReproduction('snippet', budget, {
      reason: `no reproduction: ${plan.reason}`,
      evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [`language: ${info.language}, runner: ${info.runner}`] },
    });
  }
  const t = plan.test;
  log.info({ path: t.path, kind: t.kind }, 'snippet: built a test from the issue');
  const c = await evaluateCandidate(ctx, t.diff);
  return toReproduction('snippet', budget, {
    ...c,
    evidence: { ...c.evidence, notes: [...t.notes, ...c.evidence.notes], details: { kind: t.kind, language: t.language, path: t.path, shape: t.claim.shape } },
  });
}
