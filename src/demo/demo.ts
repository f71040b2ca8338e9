import { isLlmConfigured, STRATEGIES } from '../generation/index.js';
import { isLocalModel } from '../generation/local/catalogue.js';
import type { StrategyName } from '../generation/candidate.js';
import type { Reproduction } from '../generation/types.js';
import { appSettings } from '../config/repoConfig.js';
import { fixFilterPasses, gateConclusion } from '../github/decide.js';
import { renderPrComment, renderReproductionResult } from '../github/render.js';
import type { IssueOutcome } from '../github/outcome.js';
import { silentProgress, type Progress } from '../pipeline/progress.js';
import { reproduceIssue } from '../pipeline/reproduce.js';
import { validate, type ValidationResult } from '../pipeline/validate.js';
import type { Sandbox } from '../sandbox/types.js';
import { envValues, type Environment } from '../settings/index.js';
import { SwtError } from '../util/errors.js';
import { createFixtureRepo, FIXTURE_NAMES, type FixtureName } from './fixtureRepos.js';

/** The fix commit's author as the demo shows it: a person, so the gate is informational. */
const DEMO_AUTHOR = 'the fix author';

export interface DemoOptions {
  fixture?: FixtureName;
  strategy?: StrategyName;
  env?: Environment;
}

export interface DemoResult {
  strategy: string;
  strategyNote: string;
  reproduction: Reproduction;
  validation: ValidationResult | null;
  /** What the bot would post: on the issue, then on the fix PR. */
  markdown: string;
}

/**
 * The main job end to end on a bundled repository: reproduce its issue, validate the bundled fix
 * commit with the reproducing test on base and head, and render what the bot would post.
 */
export async function runDemo(sandbox: Sandbox, opts: DemoOptions = {}, progress: Progress = silentProgress): Promise<DemoResult> {
  const name = opts.fixture ?? 'py-durations';
  if (!FIXTURE_NAMES.includes(name)) throw new SwtError('BAD_INPUT', `unknown demo repository "${name}"`, { hint: `one of ${FIXTURE_NAMES.join(', ')}` });
  if (opts.strategy && !STRATEGIES.includes(opts.strategy)) throw new SwtError('BAD_INPUT', `unknown strategy "${opts.strategy}"`, { hint: `one of ${STRATEGIES.join(', ')}` });
  const llm = isLlmConfigured(opts.env);
  const strategy: StrategyName = opts.strategy ?? (llm ? 'ensemble' : 'snippet');
  const model = envValues(opts.env).SWT_LLM_MODEL;
  const strategyNote = llm
    ? isLocalModel(model) ? `local model ${model} (in this process, no API key): strategy ${strategy}` : `LLM endpoint configured: strategy ${strategy}`
    : `no LLM endpoint configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY): strategy ${strategy}, which needs none`;
  progress.step(strategyNote);
  const repo = await createFixtureRepo(name);
  try {
    const env = { repo: repo.dir, image: repo.instance.image, install: repo.instance.install, testCmd: repo.instance.test_cmd };
    progress.step(`issue: ${repo.issue.title}`);
    const reproduction = await reproduceIssue(sandbox, { ...env, base: repo.base, issue: repo.issue, generation: { strategy, llm: llm ? undefined : null } }, progress);
    // Exactly what the App posts: the demo renders with the App's own functions.
    const parts = [`## On the issue: "${repo.issue.title}"`, '', renderReproductionResult(reproduction, { branch: 'main', sha: repo.base })];
    let validation: ValidationResult | null = null;
    if (reproduction.testPatch.trim()) {
      progress.step('validating the fix commit with the reproducing test');
      validation = await validate(sandbox, { ...env, base: repo.base, head: repo.head, testPatch: reproduction.testPatch }, progress);
      const outcome: IssueOutcome = { issue: 1, kind: 'validated', validation, reproduction: { strategy: reproduction.strategy, sha: repo.base, testPatch: reproduction.testPatch } };
      const gate = gateConclusion(DEMO_AUTHOR, fixFilterPasses([outcome]), appSettings({}).gate);
      parts.push('', `## On the fix pull request (head ${repo.head.slice(0, 7)})`, '', renderPrComment({ ...gate, author: DEMO_AUTHOR, issues: [outcome] }));
    }
    return { strategy, strategyNote, reproduction, validation, markdown: parts.join('\n') };
  } finally {
    await repo.cleanup();
  }
}
