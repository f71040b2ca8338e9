/**
 * Generation on the real example instances, on real containers: a scripted model that writes the
 * instance's golden test ends `reproduced` under each LLM strategy, and validating that test on
 * base + the gold patch gives F→P.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseIssueMarkdown } from '../../src/generation/issueText.js';
import { resolveRepoPath } from '../../src/eval/repos.js';
import { LlmClient, llmSettingsFrom, reproduce, type StrategyName } from '../../src/generation/index.js';
import type { Reproduction } from '../../src/generation/types.js';
import { filesTouchedByPatch } from '../../src/harness/runTests.js';
import { prepareContext } from '../../src/pipeline/context.js';
import { validate } from '../../src/pipeline/validate.js';
import { openWorkbench } from '../../src/pipeline/workbench.js';
import { materialize } from '../../src/repo/git.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createLogger } from '../../src/util/logger.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';
import { examplesDir, loadExampleInstances } from '../helpers/examples.js';
import { msg, promptText, startScriptedLlm, toolCall, type ScriptStep, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const quiet = createLogger({ level: 'silent' });
const instances = loadExampleInstances();
const repos = join(examplesDir(), 'repos');
/** The instance LIBRO runs on: pytest's, the quickest to run. */
const LIBRO_INSTANCE = (instances.find((i) => i.instance_id.startsWith('andialbrecht__sqlparse')) ?? instances[0])?.instance_id;

function llmFor(server: ScriptedLlm): LlmClient {
  return new LlmClient(llmSettingsFrom({}, { baseURL: server.baseURL, apiKey: 'sk-scripted-examples', model: 'gpt-4o-mini', retryBaseDelayMs: 5 }), { logger: quiet });
}

/** The golden test file as it reads after the test patch: what an agent would write. */
async function goldenFile(repo: string, base: string, testPatch: string): Promise<{ path: string; content: string }> {
  const path = filesTouchedByPatch(testPatch)[0];
  const co = await materialize(repo, { rev: base, patches: [testPatch] });
  try {
    return { path, content: await readFile(join(co.dir, path), 'utf8') };
  } finally {
    await co.cleanup();
  }
}

describe.each(instances.map((i) => [i.instance_id, i] as const))('%s: scripted models writing the golden test (real containers)', (_id, inst) => {
  let sandbox: Sandbox;
  let repo: string;
  let server: ScriptedLlm | undefined;
  const issue = parseIssueMarkdown(inst.problem_statement);
  const answer = `The test below reproduces the issue.\n\`\`\`diff\n${inst.test_patch}\`\`\``;

  beforeAll(async () => {
    sandbox = createDockerSandbox();
    repo = await resolveRepoPath(repos, inst.repo);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => {
    expect(containersOfOursOnceRetired()).toBe('');
  });

  async function run(strategy: StrategyName, script: ScriptStep[] | ((r: never) => ScriptStep)): Promise<Reproduction> {
    server = await startScriptedLlm(script as ScriptStep[]);
    const ctx = await prepareContext(sandbox, { repo, base: inst.base_commit, image: inst.image, install: inst.install, testCmd: inst.test_cmd });
    const wb = await openWorkbench(sandbox, ctx);
    try {
      return await reproduce(wb, issue, { strategy, llm: llmFor(server), logger: quiet });
    } finally {
      await wb.close();
    }
  }

  // The strategies write the same golden test: its validation against the gold patch runs once per distinct test patch.
  const verdicts = new Map<string, ReturnType<typeof validate>>();

  async function expectFailToPass(rep: Reproduction) {
    expect({ status: rep.status, reason: rep.reason }).toEqual({ status: 'reproduced', reason: rep.reason });
    const { testPatch } = rep;
    if (!verdicts.has(testPatch)) {
      verdicts.set(testPatch, validate(sandbox, { repo, base: inst.base_commit, fixPatch: inst.patch, testPatch, image: inst.image, install: inst.install, testCmd: inst.test_cmd }));
    }
    const v = await verdicts.get(testPatch)!;
    const f2p = v.tests.filter((t) => t.transition === 'F2P').map((t) => t.id);
    expect(f2p.length).toBeGreaterThanOrEqual(inst.FAIL_TO_PASS.length);
    expect(v.success).toBe(true);
  }

  it('zero-shot-plus', async () => {
    const rep = await run('zero-shot-plus', [msg(answer)]);
    await expectFailToPass(rep);
  });

  // LIBRO's samples and judge do not depend on the runner (zero-shot-plus and the agent cover each
  // instance's runner): one instance, the cheapest, is enough here; generation.strategies has the rest.
  if (inst.instance_id === LIBRO_INSTANCE) {
    it('libro: five samples, judged, the matching one taken', async () => {
      const rep = await run('libro', ((req: Parameters<typeof promptText>[0]) =>
        promptText(req).includes('Does this failure show the problem the issue describes') ? msg('YES. It fails the way the issue says.') : msg(answer)) as never);
      await expectFailToPass(rep);
    });
  }

  it('agent: writes the golden test file in the sandbox, runs it, submits', async () => {
    const golden = await goldenFile(repo, inst.base_commit, inst.test_patch);
    const rep = await run('agent', [
      toolCall('read_file', { path: golden.path, start_line: 1, end_line: 30 }),
      toolCall('write_file', { path: golden.path, content: golden.content }),
      toolCall('run_tests', { files: [golden.path] }),
      toolCall('submit', {}),
    ]);
    await expectFailToPass(rep);
  });
});
