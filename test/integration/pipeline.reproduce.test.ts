/**
 * Every strategy's loop on REAL containers: the real Workbench (host checkout for retrieval and
 * patching, Docker for every run and for the agent's tools), the real openai SDK against the
 * scripted OpenAI-compatible server, then validate() on base + the fix patch.
 */
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { LlmClient, reproduce } from '../../src/generation/index.js';
import type { IssueInput, Reproduction } from '../../src/generation/types.js';
import { prepareContext } from '../../src/pipeline/context.js';
import { validate } from '../../src/pipeline/validate.js';
import { openWorkbench, type OpenWorkbench } from '../../src/pipeline/workbench.js';
import { reproduceIssue } from '../../src/pipeline/reproduce.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';
import { jest } from '@jest/globals';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createLogger } from '../../src/util/logger.js';
import { msg, promptText, startScriptedLlm, toolCall, type ScriptStep, type ScriptedLlm } from '../helpers/scriptedLlm.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';
import { FIXED_PARSE_DURATION, scriptedClient } from '../helpers/pyDurationsOnHost.js';

const quiet = createLogger({ level: 'silent' });
const custom = (file: string, body: string, where = 'EOF') => `Here is the test.\n\`\`\`custom-diff\ndiff\n${file}\ninsert\n${where}\n${body}\nend diff\n\`\`\``;

const PY_GOLDEN = custom('tests/test_parse.py', 'def test_combined_units():\n    assert parse_duration("1h30m") == 5400');
const PY_OWN_IMPORT_ERROR = custom('tests/test_issue_repro.py', 'from durations.parse import parse_durations\n\n\ndef test_combined_units():\n    assert parse_durations("1h30m") == 5400');
const PY_FILE = 'from durations import parse_duration\n\n\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\n';

const llmFor = (server: ScriptedLlm): LlmClient => scriptedClient(server, 'sk-scripted-docker');

describe('reproduce on real containers', () => {
  let sandbox: Sandbox;
  let server: ScriptedLlm | undefined;

  beforeAll(() => {
    sandbox = createDockerSandbox();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => {
    expect(containersOfOursOnceRetired()).toBe('');
  });

  async function withWorkbench<T>(fx: FixtureRepo, f: (wb: OpenWorkbench) => Promise<T>): Promise<T> {
    const ctx = await prepareContext(sandbox, { repo: fx.dir, base: fx.base, image: fx.instance.image, install: fx.instance.install, testCmd: fx.instance.test_cmd });
    const wb = await openWorkbench(sandbox, ctx);
    try {
      return await f(wb);
    } finally {
      await wb.close();
    }
  }

  /** A reproduction must go F→P when the fix is applied: validate on base + the fix patch. */
  async function expectFailToPass(fx: FixtureRepo, rep: Reproduction) {
    expect({ status: rep.status, reason: rep.reason }).toEqual({ status: 'reproduced', reason: rep.reason });
    const v = await validate(sandbox, {
      repo: fx.dir, base: fx.base, fixPatch: fx.instance.patch, testPatch: rep.testPatch,
      image: fx.instance.image, install: fx.instance.install, testCmd: fx.instance.test_cmd,
    });
    expect(v.tests.some((t) => t.transition === 'F2P')).toBe(true);
    expect(v.success).toBe(true);
    return v;
  }

  describe('py-durations (pytest)', () => {
    let fx: FixtureRepo;
    beforeAll(async () => {
      fx = await createFixtureRepo('py-durations');
    });
    afterAll(() => fx.cleanup());

    it('snippet: no LLM, the traceback becomes a test that fails on base and goes F→P', async () => {
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { llm: null, logger: quiet }));
      expect(rep.strategy).toBe('snippet');
      expect(rep.failureExcerpt).toMatch(/ValueError: invalid literal/);
      await expectFailToPass(fx, rep);
    });

    it('zero-shot-plus: a scripted model writing the golden test (custom diff) ends reproduced, then F→P', async () => {
      server = await startScriptedLlm([msg(PY_GOLDEN, { prompt_tokens: 2000, completion_tokens: 80 })]);
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server!), logger: quiet }));
      expect(promptText(server.requests[0])).toContain('durations/parse.py');
      const v = await expectFailToPass(fx, rep);
      expect(v.tests.find((t) => t.id === 'tests/test_parse.py::test_combined_units')?.transition).toBe('F2P');
    });

    it('zero-shot-plus: a test failing with its own ImportError is rejected, not reported as a reproduction', async () => {
      server = await startScriptedLlm([msg(PY_OWN_IMPORT_ERROR)]);
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server!), logger: quiet }));
      expect(rep.status).toBe('not-reproduced');
      expect(rep.reason).toMatch(/ImportError/);
    });

    it('stand-in fix (fix=demote): the model’s fix goes under the test in the sandbox; a test that passes with it is posted, a false reproduction is not', async () => {
      const fix = `\`\`\`custom-diff\ndiff\ndurations/parse.py\nrewrite\n4\n${FIXED_PARSE_DURATION}\nend diff\n\`\`\``;
      const isFix = (q: { body: unknown }) => JSON.stringify(q.body).includes('This test reproduces the issue: it fails on the current code.');
      for (const [test, posted] of [[PY_GOLDEN, 'reproduced'], [custom('tests/test_parse.py', 'def test_combined_units():\n    assert parse_duration("1h30m") == 5401'), 'not-reproduced']] as const) {
        server = await startScriptedLlm((q) => msg(isFix(q) ? fix : test));
        const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'zero-shot-plus', fixCheck: { mode: 'demote' }, llm: llmFor(server!), logger: quiet }));
        expect(rep.status).toBe(posted);
        expect(rep.evidence?.fixCheck?.verdict).toBe(posted === 'reproduced' ? 'flips' : 'fails-on-fix');
        await server.close();
        server = undefined;
      }
    });

    it('libro: 5 samples run on base, the failing ones judged, the shortest matching one wins, then F→P', async () => {
      const samples = [
        custom('tests/test_l0.py', 'from durations import parse_duration\n\n\ndef test_single():\n    assert parse_duration("15m") == 900'),
        custom('tests/test_l1.py', 'from durations import parse_durations\n\n\ndef test_c():\n    assert parse_durations("1h30m") == 5400'),
        custom('tests/test_l2.py', 'from durations import parse_duration\n\n\ndef test_long():\n    assert parse_duration("1h30m") == 5400\n    assert parse_duration("2h15m") == 8100\n    assert parse_duration("1m1s") == 61'),
        custom('tests/test_l3.py', 'from durations import parse_duration\n\n\ndef test_short():\n    assert parse_duration("1h30m") == 5400'),
        custom('tests/test_l4.py', 'from durations import parse_duration\n\n\ndef test_m():\n    assert parse_duration("2m") == 121'),
      ];
      let next = 0;
      server = await startScriptedLlm((req): ScriptStep => {
        const text = promptText(req);
        if (text.includes('Does this failure show the problem the issue describes')) {
          return msg(/test_l4/.test(text) ? 'NO. A wrong expectation about minutes.' : 'YES. The combined-units ValueError.');
        }
        return msg(samples[next++]);
      });
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'libro', llm: llmFor(server!), logger: quiet }));
      expect(rep.testPatch).toContain('tests/test_l3.py');
      await expectFailToPass(fx, rep);
    });

    it('agent: tools run inside a sandbox session; it explores, writes, runs and submits, then F→P', async () => {
      server = await startScriptedLlm([
        toolCall('grep', { pattern: 'def parse_duration', include: '*.py' }),
        toolCall('read_file', { path: 'durations/parse.py', start_line: 1, end_line: 20 }),
        toolCall('write_file', { path: 'tests/test_issue_repro.py', content: PY_FILE }),
        toolCall('run_tests', { files: ['tests/test_issue_repro.py'] }),
        toolCall('submit', {}),
      ]);
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'agent', llm: llmFor(server!), logger: quiet }));
      const toolResults = server.requests.map((r) => JSON.stringify(r.body.messages.at(-1)));
      expect(toolResults[1]).toContain('durations/parse.py:4:def parse_duration');
      expect(toolResults[4]).toMatch(/FAILED tests\/test_issue_repro.py::test_combined_units/);
      await expectFailToPass(fx, rep);
    });

    it('agent: a model that never submits stops at the step budget cleanly, with what it wrote', async () => {
      let n = 0;
      server = await startScriptedLlm(() => (n++ === 0 ? toolCall('write_file', { path: 'tests/test_issue_repro.py', content: PY_FILE }) : toolCall('list_files', {})));
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'agent', llm: llmFor(server!), budget: { steps: 3 }, logger: quiet }));
      expect(server.requests).toHaveLength(3);
      expect(rep.budgetExhausted).toBe('steps');
      expect(rep.testPatch).toContain('tests/test_issue_repro.py');
      expect(containersOfOursOnceRetired()).toBe('');
    });

    it('ensemble: with no snippet to use it goes on to zero-shot-plus, which reproduces', async () => {
      const issue: IssueInput = { title: 'parse_duration rejects "1h30m"', body: 'Combined units such as 1h30m should give 5400 seconds but raise a ValueError.' };
      server = await startScriptedLlm([msg(PY_GOLDEN)]);
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, issue, { strategy: 'ensemble', llm: llmFor(server!), logger: quiet }));
      expect(rep.strategy).toBe('ensemble(zero-shot-plus)');
      await expectFailToPass(fx, rep);
    });
  });

  describe('the environment is built only when a strategy runs a test', () => {
    afterAll(() => cleanupGitRepos());

    it('the snippet strategy on a Go project answers "no test writer" without building an environment; on a Python one it builds it once', async () => {
      const built = jest.spyOn(sandbox, 'ensureEnvironment');
      try {
        const go = createGitRepo({ 'go.mod': 'module example.com/clamp\n\ngo 1.21\n', 'clamp.go': 'package clamp\n\nfunc Clamp(v, lo, hi int) int { return v }\n', 'clamp_test.go': 'package clamp\n\nimport "testing"\n\nfunc TestClamp(t *testing.T) {}\n' });
        const issue = { title: 'Clamp ignores its bounds', body: '`Clamp(5, 0, 3)` returns 5; it should return 3.' };
        const refused = await reproduceIssue(sandbox, { repo: go.path, base: go.sha, issue, generation: { llm: null, logger: quiet } });
        expect({ status: refused.status, reason: refused.reason }).toEqual({ status: 'not-reproduced', reason: expect.stringMatching(/^no reproduction: the snippet strategy has no test writer for go\b/) });
        expect(built).not.toHaveBeenCalled();

        const fx = await createFixtureRepo('py-durations');
        try {
          const rep = await reproduceIssue(sandbox, { repo: fx.dir, base: fx.base, image: fx.instance.image, install: fx.instance.install, testCmd: fx.instance.test_cmd, issue: fx.issue, generation: { llm: null, logger: quiet } });
          expect(rep.status).toBe('reproduced');
          // Built once for the candidate's two runs on base.
          expect(built).toHaveBeenCalledTimes(1);
        } finally {
          fx.cleanup();
        }
      } finally {
        built.mockRestore();
      }
    });
  });

  describe('ts-chunk (vitest, installed with npm in the environment image)', () => {
    let fx: FixtureRepo;
    beforeAll(async () => {
      fx = await createFixtureRepo('ts-chunk');
    });
    afterAll(() => fx.cleanup());

    it('zero-shot-plus: a test inserted into the describe block fails on base in vitest, then F→P', async () => {
      const body = "  it('keeps the remainder as a last group', () => {\n    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);\n  });";
      const answer = `\`\`\`custom-diff\ndiff\nsrc/chunk.spec.ts\ninsert\n8\n${body}\nend diff\n\`\`\``;
      server = await startScriptedLlm([msg(answer)]);
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server!), logger: quiet }));
      const v = await expectFailToPass(fx, rep);
      expect(v.runner).toBe('vitest');
    });

    it('snippet: the shown wrong output becomes a failing vitest assertion, then F→P', async () => {
      const rep = await withWorkbench(fx, (wb) => reproduce(wb, fx.issue, { llm: null, logger: quiet }));
      await expectFailToPass(fx, rep);
    });
  });
});
