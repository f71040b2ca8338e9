import type { Workbench } from '../generation/types.js';
import { filesTouchedByPatch, runTests } from '../harness/runTests.js';
import { applyModelPatch } from '../patch/applyModelPatch.js';
import { materialize } from '../repo/git.js';
import type { ResourceLimits, Sandbox } from '../sandbox/types.js';
import { SwtError } from '../util/errors.js';
import type { RepoContext, RepoPlan } from './context.js';
import { testTargetsAt } from './testTargets.js';

export interface OpenWorkbench extends Workbench {
  close(): Promise<void>;
}

/** A plan whose environment is built when first asked for (reproduce.ts: a strategy may never run a test). */
export interface LazyRepoContext extends RepoPlan {
  environment(): Promise<RepoContext>;
}

/**
 * The real Workbench: a read-only host checkout of base for retrieval and patch application,
 * and the sandbox for every execution. Close it to remove the checkout.
 */
export async function openWorkbench(sandbox: Sandbox, ctx: RepoContext | LazyRepoContext, limits?: Partial<ResourceLimits>, signal?: AbortSignal): Promise<OpenWorkbench> {
  const built = 'environment' in ctx ? ctx.environment : async () => ctx;
  const checkout = await materialize(ctx.repo, { rev: ctx.base, patches: [] });
  const baseState = { rev: ctx.base, patches: [] as string[] };
  return {
    repoDir: checkout.dir,
    testCommand: ctx.runner.template,
    applyPatch: (text) => applyModelPatch(checkout.dir, text),
    async runTests(testPatch, only, opts) {
      const state = { rev: ctx.base, patches: opts?.fixPatch ? [opts.fixPatch, testPatch] : [testPatch] };
      // Snapshots and fixtures (touched or asked for) run the test files that own them, never themselves.
      const { files } = await testTargetsAt(ctx.repo, state, only ?? filesTouchedByPatch(testPatch, () => true));
      if (files.length === 0) throw new SwtError('NO_TEST_FILES', 'the patch adds or changes no test file');
      const { env } = await built();
      return runTests(sandbox, { env, repo: ctx.repo, state, runner: ctx.runner, files, limits, ...(signal ? { signal } : {}) });
    },
    openSession: async () => sandbox.openSession({ env: (await built()).env, repo: ctx.repo, state: baseState, limits }),
    close: () => checkout.cleanup(),
  };
}
