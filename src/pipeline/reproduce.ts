import { reproduce, type ReproduceOptions } from '../generation/index.js';
import type { IssueInput, Reproduction } from '../generation/types.js';
import type { ResourceLimits, Sandbox } from '../sandbox/types.js';
import { decideLimits, prepareContext, type CappedNote, type ContextInput } from './context.js';
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
  const ctx = await prepareContext(sandbox, input, progress);
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
