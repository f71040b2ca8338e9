/**
 * `--predictions generate`: a strategy writes each instance's tests as the App would, from the
 * issue text on the base commit, proven failing there before it counts; what it spent is kept.
 */
import type { ReproduceOptions } from '../generation/index.js';
import { parseIssueMarkdown } from '../generation/issueText.js';
import type { Progress } from '../pipeline/progress.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import type { Sandbox } from '../sandbox/types.js';
import type { TestSource } from './runEval.js';

export function generatedTests(sandbox: Sandbox, generation: ReproduceOptions, progress: Progress): TestSource {
  return {
    kind: 'generate',
    label: generation.strategy ?? 'default',
    generate: async (inst, repoPath) => {
      const rep = await reproduceIssue(
        sandbox,
        { repo: repoPath, base: inst.base_commit, image: inst.image, install: inst.install, testCmd: inst.test_cmd, issue: parseIssueMarkdown(inst.problem_statement), generation },
        { step: (m) => progress.step(`${inst.instance_id}: ${m}`) },
      );
      return {
        modelPatch: rep.testPatch,
        reproduction: {
          strategy: rep.strategy,
          status: rep.status,
          reason: rep.reason,
          model: rep.model?.name,
          usage: rep.usage,
          answers: rep.evidence?.answers ?? [],
          ...(rep.evidence?.fixCheck ? { fixCheck: rep.evidence.fixCheck.verdict } : {}),
          ...(rep.evidence?.vote ? { vote: rep.evidence.vote } : {}),
        },
      };
    },
  };
}
