import { reproduce, type ReproduceOptions } from '../generation/index.js';
import type { IssueInput, Reproduction } from '../generation/types.js';
import type { ResourceLimits, Sandbox } from '../sandbox/types.js';
import { buildEnvironment, decideLimits, planContext, type CappedNote, type ContextInput, type RepoContext } from './context.js';
import { silentProgress, type Progress } from './progress.js';
import { openWorkbench } from './workbench.js';

export interface ReproduceInput extends ContextInput {
  issue: IssueInput;
  generation?: ReproduceOptions;
  limits?: Partial<ResourceLimits>;
  /** Stops the test runs when aborted (SwtError('CANCELLED')). */
  signal?: AbortSignal;
}

/** reproduce(issue): a verified test patch that fails on `base` for the issue's reason, or why not. */
export async function reproduceIssue(sandbox: Sandbox, input: ReproduceInput, progress: Progress = silentProgress): Promise<Reproduction & { limitsCapped: CappedNote[] }> {
  // The environment is built when a strategy first runs a test: one that writes nothing for this
  // repository (the snippet strategy on a Go project) answers without minutes of install.
  const plan = await planContext(input, progress);
  let built: Promise<RepoContext> | undefined;
  const ctx = { ...plan, environment: () => (built ??= buildEnvironment(sandbox, plan, progress)) };
  const decided = decideLimits(ctx.config, input.limits, sandbox.ceilings);
  const workbench = await openWorkbench(sandbox, ctx, decided.limits, input.signal);
  const generation = { ...input.generation, strategy: input.generation?.strategy ?? ctx.config.generation?.strategy };
  if (ctx.config.generation?.model && generation.llm === undefined) generation.llm = { model: ctx.config.generation.model };
  try {
    progress.step(`writing a reproducing test (${generation.strategy ?? 'default strategy'})`);
    return { ...(await reproduce(workbench, input.issue, generation)), limitsCapped: decided.capped };
  } finally {
    await workbench.close();
  }
}
