/**
 * Every strategy end to end: the real openai SDK against the scripted OpenAI-compatible server
 * over HTTP, the local host workbench (git apply / the patch layer, real pytest and node --test
 * processes, JUnit parsed by src/harness), on the py-durations fixture and small repos made here.
 */
import { execFileSync } from 'node:child_process';
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { reproduce, LlmClient, Budget } from '../../src/generation/index.js';
import type { Reproduction } from '../../src/generation/types.js';
import { createLogger } from '../../src/util/logger.js';
import { pyDurationsOnHost, scriptedClient } from '../helpers/pyDurationsOnHost.js';
import { createLocalWorkbench, writeRepo, type LocalWorkbench } from '../helpers/localWorkbench.js';
import { lastMessage, msg, promptText, startScriptedLlm, toolCall, type RecordedRequest, type ScriptStep, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const quietLog = createLogger({ level: 'silent' });

const GOLDEN_CUSTOM = `I will add a test for combined units.
\`\`\`custom-diff
diff
tests/test_parse.py
insert
EOF
def test_combined_units():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("1d2h3m4s") == 93784
end diff
\`\`\``;

const OWN_IMPORT_ERROR_CUSTOM = `\`\`\`custom-diff
diff
tests/test_issue_repro.py
insert
EOF
from durations.parse import parse_durations


def test_combined_units():
    assert parse_durations("1h30m") == 5400
end diff
\`\`\``;

const GOLDEN_FILE = `from durations import parse_duration


def test_combined_units():
    assert parse_duration("1h30m") == 5400
`;

const llmFor = (server: ScriptedLlm, extra: Record<string, unknown> = {}): LlmClient => scriptedClient(server, 'sk-scripted-strategies', extra);

function sh(cwd: string, cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8' });
}

/** Runs the test patch on base plus the code fix: a reproduction must pass there. */
function passesAfterFix(fx: FixtureRepo, testPatch: string): { passed: boolean; output: string } {
  try {
    execFileSync('git', ['apply', '-'], { cwd: fx.dir, input: fx.instance.patch });
    execFileSync('git', ['apply', '-'], { cwd: fx.dir, input: testPatch });
    const files = [...testPatch.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]);
    const out = execFileSync('python3', ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', ...files], { cwd: fx.dir, encoding: 'utf8' });
    return { passed: true, output: out };
  } catch (e) {
    return { passed: false, output: String((e as { stdout?: string }).stdout ?? e) };
  } finally {
    sh(fx.dir, 'git', ['reset', '-q', '--hard']);
    sh(fx.dir, 'git', ['clean', '-qfd']);
  }
}

describe('generation strategies end to end (py-durations, pytest on the host)', () => {
  const host = pyDurationsOnHost();
  let server: ScriptedLlm;

  describe('snippet (no LLM)', () => {
    it('turns the traceback issue into a test that fails on base with the reported ValueError and passes after the fix', async () => {
      const r = await reproduce(host.wb, host.fx.issue, { llm: null, logger: quietLog });
      expect(r.strategy).toBe('snippet');
      expect(r.status).toBe('reproduced');
      expect(r.usage).toMatchObject({ steps: 0, promptTokens: 0, costUsd: 0 });
      expect(r.testPatch).toContain('+++ b/tests/test_parse_duration_crashes_on_combined_units.py');
      expect(r.testPatch).toContain('+    assert parse_duration("1h30m") == 5400');
      expect(r.failureExcerpt).toContain("ValueError: invalid literal for int() with base 10: '1h30'");
      expect(r.evidence?.runs).toHaveLength(2);
      expect(r.evidence?.reproducingTests).toEqual(['tests/test_parse_duration_crashes_on_combined_units.py::test_parse_duration_crashes_on_combined_units_like']);
      const after = passesAfterFix(host.fx, r.testPatch);
      expect(after).toMatchObject({ passed: true });
    });

    it('says why when the issue has nothing to build on', async () => {
      const r = await reproduce(host.wb, { title: 'Durations are confusing', body: 'Please document the units better.' }, { strategy: 'snippet', llm: null, logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toBe('no reproduction: the issue shows no code');
      expect(r.testPatch).toBe('');
    });
  });

  describe('zero-shot-plus', () => {
    it('a scripted model that writes the golden test (custom diff) ends reproduced; the prompt holds the BM25 context', async () => {
      server = await host.serve([msg(GOLDEN_CUSTOM, { prompt_tokens: 3000, completion_tokens: 120 })]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      expect(r.reason).toMatch(/ValueError/);
      expect(r.testPatch).toContain('+def test_combined_units():');
      expect(r.usage).toMatchObject({ promptTokens: 3000, completionTokens: 120, steps: 1 });
      expect(r.usage.costUsd).toBeCloseTo((3000 * 0.15 + 120 * 0.6) / 1e6, 9);
      const prompt = server.requests[0].body.messages[0].content as string;
      expect(prompt).toContain('[start of durations/parse.py]');
      expect(prompt).toContain('[start of tests/test_parse.py]');
      expect(prompt).toContain('custom-diff');
      expect(prompt).toContain('parse_duration crashes on combined units');
      expect(server.requests[0].body.temperature).toBe(0);
      expect(passesAfterFix(host.fx, r.testPatch).passed).toBe(true);
    });

    it('a test that fails with its own ImportError is rejected, not reported as a reproduction', async () => {
      server = await host.serve([msg(OWN_IMPORT_ERROR_CUSTOM)]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/its own error.*ImportError/);
      expect(r.testPatch).toContain('parse_durations');
      expect(r.evidence?.reproducingTests).toEqual([]);
    });

    it('running out of budget stops cleanly, before any request', async () => {
      server = await host.serve([msg(GOLDEN_CUSTOM)]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), budget: { tokens: 500 }, logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.budgetExhausted).toBe('tokens');
      expect(r.reason).toMatch(/budget exhausted \(tokens\)/);
      expect(server.requests).toHaveLength(0);
    });

    it('an answer that is not a patch is reported as such', async () => {
      server = await host.serve([msg('I think the bug is in parse.py.')]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/does not apply/);
    });
  });

  describe('libro', () => {
    const sample = (file: string, body: string) => `\`\`\`custom-diff\ndiff\n${file}\ninsert\nEOF\n${body}\nend diff\n\`\`\``;
    const SAMPLES = [
      // 0: passes on base
      sample('tests/test_libro0.py', 'from durations import parse_duration\n\n\ndef test_single():\n    assert parse_duration("15m") == 900'),
      // 1: its own ImportError
      sample('tests/test_libro1.py', 'from durations import parse_durations\n\n\ndef test_combined():\n    assert parse_durations("1h30m") == 5400'),
      // 2: fails for the issue, long
      sample('tests/test_libro2.py', 'from durations import parse_duration\n\n\ndef test_combined_long():\n    assert parse_duration("1h30m") == 5400\n    assert parse_duration("2h15m") == 8100\n    assert parse_duration("1d2h3m4s") == 93784\n    assert parse_duration("1m1s") == 61'),
      // 3: fails for the issue, short
      sample('tests/test_libro3.py', 'from durations import parse_duration\n\n\ndef test_combined_short():\n    # the issue\'s example\n    assert parse_duration("1h30m") == 5400'),
      // 4: fails (a wrong expectation), shortest, judged unrelated
      sample('tests/test_libro4.py', 'from durations import parse_duration\n\n\ndef test_minutes():\n    assert parse_duration("2m") == 121'),
    ];
    const isJudge = (r: RecordedRequest) => promptText(r).includes('Does this failure show the problem the issue describes');

    it('samples 5 at T=0.7, keeps the failing ones, clusters by the judge and takes the shortest of the matching cluster', async () => {
      const judged: string[] = [];
      let next = 0;
      server = await host.serve((req): ScriptStep => {
        if (isJudge(req)) {
          const text = promptText(req);
          const which = /test_libro(\d)/.exec(text)?.[1] ?? '?';
          judged.push(which);
          return msg(which === '4' ? 'NO. It asserts a wrong value for minutes.' : 'YES. It is the combined-units ValueError.');
        }
        return msg(SAMPLES[next++]);
      });
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'libro', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      expect(r.testPatch).toContain('tests/test_libro3.py');
      expect(r.reason).toMatch(/sample 4, the shortest the model judged to match/);
      const samples = server.requests.filter((q) => !isJudge(q));
      expect(samples).toHaveLength(5);
      expect(samples.every((q) => q.body.temperature === 0.7)).toBe(true);
      expect(judged.sort()).toEqual(['2', '3', '4']);
      expect(server.requests.filter(isJudge).every((q) => q.body.temperature === 0)).toBe(true);
      const details = r.evidence?.details as { samples: Array<{ index: number; failsOnBase: boolean; judge?: string }>; clusters: { matching: number[]; other: number[] } };
      expect(details.samples.map((s) => s.failsOnBase)).toEqual([false, false, true, true, true]);
      expect(details.clusters).toEqual({ matching: [3, 2], other: [4] });
      expect(r.evidence?.runs).toHaveLength(2);
      expect(r.usage.steps).toBe(8);
    });

    it('running out of steps while sampling stops cleanly with what it has', async () => {
      let next = 0;
      server = await host.serve(() => msg(SAMPLES[next++ % SAMPLES.length]));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'libro', llm: llmFor(server), budget: { steps: 2 }, logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.budgetExhausted).toBe('steps');
      expect(server.requests).toHaveLength(2);
      expect(r.reason).toMatch(/budget exhausted \(steps\)/);
      expect((r.evidence?.details as { samples: unknown[] }).samples).toHaveLength(2);
    });
  });

  describe('agent', () => {
    const goldenConversation = (): ScriptStep[] => [
      toolCall('list_files', {}),
      toolCall('grep', { pattern: 'def parse_duration', include: '*.py' }),
      toolCall('read_file', { path: 'durations/parse.py', start_line: 1, end_line: 20 }),
      toolCall('write_file', { path: 'tests/test_issue_repro.py', content: GOLDEN_FILE }),
      toolCall('run_tests', { files: ['tests/test_issue_repro.py'] }),
      toolCall('submit', {}),
    ];

    it('a scripted model that explores, writes the golden test, runs it and submits ends reproduced', async () => {
      server = await host.serve(goldenConversation());
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      expect(r.testPatch).toContain('+++ b/tests/test_issue_repro.py');
      expect(r.usage.steps).toBe(6);
      const results = server.requests.map((q) => lastMessage(q).content);
      expect(results[1]).toContain('durations/parse.py');
      expect(results[2]).toContain('durations/parse.py:4:def parse_duration');
      expect(results[3]).toContain('14     return int(text[:-1]) * UNITS[unit]');
      expect(results[4]).toContain('wrote tests/test_issue_repro.py');
      expect(results[5]).toMatch(/FAILED tests\/test_issue_repro.py::test_combined_units \[raises ValueError, an exception the issue reports: counts as reproducing\]/);
      expect(server.requests[0].body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual([
        'list_files', 'find_files', 'grep', 'read_file', 'write_file', 'edit_file', 'apply_custom_diff', 'run_tests', 'submit',
      ]);
      const system = server.requests[0].body.messages[0].content as string;
      expect(system).toMatch(/create unit tests that cover the issue/);
      const instructions = server.requests[0].body.messages[1].content as string;
      expect(instructions).toMatch(/run them with run_tests and check that they \*fail\* as expected because of the issue/);
      expect(passesAfterFix(host.fx, r.testPatch).passed).toBe(true);
    });

    it('keeps its context bounded: old tool outputs are summarised', async () => {
      server = await host.serve([
        toolCall('read_file', { path: 'durations/parse.py' }),
        toolCall('read_file', { path: 'tests/test_parse.py' }),
        toolCall('list_files', {}),
        toolCall('write_file', { path: 'tests/test_issue_repro.py', content: GOLDEN_FILE }),
        toolCall('submit', {}),
      ]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', agent: { historyChars: 4500 }, llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      const last = JSON.stringify(server.requests.at(-1)!.body.messages);
      expect(last).toContain('[older read_file output summarised');
      expect(last).toContain(host.fx.issue.title.replace(/"/g, '\\"'));
      expect((r.evidence?.details as { summarisedMessages: number }).summarisedMessages).toBeGreaterThan(0);
    });

    it('recovers from malformed tool arguments and edits through the custom diff tool', async () => {
      server = await host.serve([
        { kind: 'message', content: null, toolCalls: [{ name: 'read_file', arguments: '{"path": "durations/parse.py"' }] },
        toolCall('apply_custom_diff', { diff: 'diff\ntests/test_parse.py\ninsert\nEOF\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\nend diff' }),
        toolCall('submit', {}),
      ]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), logger: quietLog });
      expect(lastMessage(server.requests[1]).content).toMatch(/error: arguments are not valid JSON.*Call read_file again/);
      expect(lastMessage(server.requests[2]).content).toContain('applied to tests/test_parse.py');
      expect(r.status).toBe('reproduced');
      expect(r.evidence?.reproducingTests).toEqual(['tests/test_parse.py::test_combined_units']);
    });

    it('a test failing with its own ImportError is rejected at submit; the model hears why', async () => {
      server = await host.serve([
        toolCall('write_file', { path: 'tests/test_issue_repro.py', content: 'from durations.parse import parse_durations\n\n\ndef test_x():\n    assert parse_durations("1h30m") == 5400\n' }),
        toolCall('run_tests', { files: ['tests/test_issue_repro.py'] }),
        toolCall('submit', {}),
        toolCall('submit', {}),
      ]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/its own error.*ImportError/);
      expect(lastMessage(server.requests[2]).content).toMatch(/FILE ERROR tests\/test_issue_repro.py \(collection\)/);
      expect(lastMessage(server.requests[3]).content).toMatch(/Verification rejected the submitted test: the test fails because of its own error/);
      expect((r.evidence?.details as { submits: number }).submits).toBe(2);
    });

    it('a model that never submits stops at the step budget cleanly and keeps what it wrote', async () => {
      let n = 0;
      server = await host.serve(() => (n++ === 1 ? toolCall('write_file', { path: 'tests/test_issue_repro.py', content: GOLDEN_FILE }) : toolCall('list_files', { path: 'durations' })));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), budget: { steps: 5 }, logger: quietLog });
      expect(server.requests).toHaveLength(5);
      expect(r.budgetExhausted).toBe('steps');
      expect(r.usage.steps).toBe(5);
      expect(r.status).toBe('reproduced');
      expect(r.evidence?.notes.join(' ')).toMatch(/never submitted/);
      expect(r.testPatch).toContain('tests/test_issue_repro.py');
    });

    it('running out of wall time (the model hangs) stops cleanly and keeps the unverified test', async () => {
      server = await host.serve([toolCall('write_file', { path: 'tests/test_issue_repro.py', content: GOLDEN_FILE }), { kind: 'hang' }]);
      const t0 = Date.now();
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), budget: { wallMs: 1500 }, logger: quietLog });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(r.budgetExhausted).toBe('wallMs');
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/budget exhausted \(wallMs\).*unverified/);
      expect(r.testPatch).toContain('tests/test_issue_repro.py');
    });

    it('a model that never writes anything stops at the step budget with nothing', async () => {
      server = await host.serve(() => msg('Let me think about this some more.'));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), budget: { steps: 3 }, logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.budgetExhausted).toBe('steps');
      expect(r.reason).toMatch(/no test file was written/);
      expect(lastMessage(server.requests[1]).content).toMatch(/Please continue by calling one of the tools/);
    });

    it('when the LLM fails for good mid-way, it stops and verifies what it wrote', async () => {
      server = await host.serve([toolCall('write_file', { path: 'tests/test_issue_repro.py', content: GOLDEN_FILE }), { kind: 'status', status: 503 }, { kind: 'status', status: 503 }]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server, { maxRetries: 1 }), logger: quietLog });
      expect(server.requests).toHaveLength(3);
      expect(r.status).toBe('reproduced');
      expect(r.evidence?.notes[0]).toMatch(/the LLM failed after 1 call\(s\): LLM call to .* failed \(503\)/);
    });

    it('refuses paths outside the repository and edits of the code under test', async () => {
      server = await host.serve([
        toolCall('read_file', { path: '../../etc/passwd' }),
        toolCall('write_file', { path: 'durations/parse.py', content: 'def parse_duration(t):\n    return 5400\n' }),
        toolCall('write_file', { path: '/tmp/evil_test.py', content: 'x' }),
        toolCall('submit', {}),
        toolCall('submit', {}),
        toolCall('submit', {}),
      ]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), logger: quietLog });
      expect(lastMessage(server.requests[1]).content).toMatch(/path outside the repository/);
      expect(lastMessage(server.requests[2]).content).toMatch(/only test files may be written/);
      expect(lastMessage(server.requests[3]).content).toMatch(/path outside the repository/);
      expect(lastMessage(server.requests[4]).content).toMatch(/nothing to submit/);
      expect(r.status).toBe('not-reproduced');
      expect(r.testPatch).toBe('');
    });

    it('works through the text protocol when the server rejects tools, and rides out a 429', async () => {
      const asText = (name: string, args: Record<string, unknown>) => msg(`<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`);
      server = await host.serve([
        { kind: 'status', status: 400, body: { error: { message: 'This model does not support tools' } } },
        asText('write_file', { path: 'tests/test_issue_repro.py', content: GOLDEN_FILE }),
        { kind: 'status', status: 429, headers: { 'retry-after-ms': '50' } },
        asText('run_tests', { files: ['tests/test_issue_repro.py'] }),
        asText('submit', {}),
      ]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      expect(server.requests[1].body.tools).toBeUndefined();
      expect(server.requests[1].body.messages[0].content).toContain('<tool_call>');
      const last = server.requests.at(-1)!.body.messages;
      expect(last.at(-1).content).toMatch(/<tool_result name="run_tests">[\s\S]*FAILED/);
    });
  });

  describe('ensemble', () => {
    const proseIssue = { title: 'parse_duration cannot combine units', body: 'parse_duration should understand durations that combine units, like 1h30m (5400 seconds); today it raises a ValueError.' };

    it('stops at the first verified reproduction: snippet reproduces, no LLM call is made', async () => {
      server = await host.serve([msg(GOLDEN_CUSTOM)]);
      const r = await reproduce(host.wb, host.fx.issue, { llm: llmFor(server), logger: quietLog });
      expect(r.strategy).toBe('ensemble(snippet)');
      expect(r.status).toBe('reproduced');
      expect(r.attempts?.map((a) => a.strategy)).toEqual(['snippet']);
      expect(server.requests).toHaveLength(0);
    });

    it('goes on in order of cost: no snippet to use, zero-shot-plus reproduces, the agent is not started', async () => {
      server = await host.serve([msg(GOLDEN_CUSTOM), toolCall('submit', {})]);
      const r = await reproduce(host.wb, proseIssue, { strategy: 'ensemble', llm: llmFor(server), logger: quietLog });
      expect(r.strategy).toBe('ensemble(zero-shot-plus)');
      expect(r.status).toBe('reproduced');
      expect(r.attempts?.map((a) => [a.strategy, a.status])).toEqual([
        ['snippet', 'not-reproduced'],
        ['zero-shot-plus', 'reproduced'],
      ]);
      expect(server.requests).toHaveLength(1);
      expect(r.usage.steps).toBe(1);
    });

    it("mode 'best' runs every strategy in the order given and picks by evidence", async () => {
      server = await host.serve([msg(OWN_IMPORT_ERROR_CUSTOM)]);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'ensemble', ensemble: { order: ['zero-shot-plus', 'snippet'], mode: 'best' }, llm: llmFor(server), logger: quietLog });
      expect(r.attempts?.map((a) => [a.strategy, a.status])).toEqual([
        ['zero-shot-plus', 'not-reproduced'],
        ['snippet', 'reproduced'],
      ]);
      expect(r.strategy).toBe('ensemble(snippet)');
      expect(r.status).toBe('reproduced');
    });

    it('without an LLM the LLM strategies are skipped and the result says so', async () => {
      const r = await reproduce(host.wb, proseIssue, { strategy: 'ensemble', llm: null, logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.attempts?.map((a) => a.reason)).toEqual(['no reproduction: the issue shows no code', 'skipped: no LLM endpoint is configured', 'skipped: no LLM endpoint is configured']);
    });

    it('shares one budget across strategies', async () => {
      server = await host.serve(() => toolCall('list_files', {}));
      const budget = new Budget({ steps: 4 });
      const r = await reproduce(host.wb, proseIssue, { strategy: 'ensemble', llm: llmFor(server), budget, logger: quietLog });
      expect(budget.steps).toBe(4);
      expect(r.budgetExhausted).toBe('steps');
      expect(r.status).toBe('not-reproduced');
      budget.dispose();
    });
  });
});

describe('snippet on a JavaScript repository, run with node --test on the host', () => {
  let repo: { dir: string; cleanup: () => Promise<void> };
  let wb: LocalWorkbench;
  beforeAll(async () => {
    repo = await writeRepo({
      'package.json': JSON.stringify({ name: 'js-chunk', version: '1.0.0', type: 'module', main: 'src/chunk.js', scripts: { test: 'node --test' } }, null, 2),
      'src/chunk.js':
        'export function chunk(items, size) {\n  const groups = [];\n  for (let start = 0; start + size <= items.length; start += size) groups.push(items.slice(start, start + size));\n  return groups;\n}\n\nexport function head(items) {\n  return items[0].value;\n}\n',
      'test/chunk.test.js': "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { chunk } from '../src/chunk.js';\n\ntest('splits evenly', () => {\n  assert.deepStrictEqual(chunk([1, 2], 1), [[1], [2]]);\n});\n",
    });
    wb = await createLocalWorkbench(repo.dir, { testCommand: 'node --test {files}' });
  });
  afterAll(async () => {
    await wb.cleanup();
    await repo.cleanup();
  });

  it('a wrong result shown in comments becomes a failing assertion', async () => {
    const issue = { title: 'chunk() drops the last partial group', body: "```js\nimport { chunk } from 'js-chunk';\n\nchunk([1, 2, 3, 4, 5], 2);\n// returns [[1, 2], [3, 4]]\n// expected [[1, 2], [3, 4], [5]]\n```" };
    const r = await reproduce(wb, issue, { llm: null, logger: quietLog });
    expect(r.status).toBe('reproduced');
    expect(r.testPatch).toContain("+import { chunk } from '../src/chunk.js';");
    expect(r.testPatch).toContain('+  assert.deepStrictEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);');
    expect(r.failureExcerpt).toMatch(/Expected values to be strictly deep-equal/);
  });

  it('a reported TypeError becomes a test that fails on exactly that error', async () => {
    const issue = {
      title: 'head() crashes on an empty list',
      body: "```js\nimport { head } from './src/chunk.js';\nhead([]);\n```\n```\nTypeError: Cannot read properties of undefined (reading 'value')\n    at head (src/chunk.js:8:19)\n```",
    };
    const r = await reproduce(wb, issue, { llm: null, logger: quietLog });
    expect({ status: r.status, reason: r.reason }).toEqual({ status: 'reproduced', reason: r.reason });
    expect(r.testPatch).toContain('+  assert.doesNotThrow(() => head([]), TypeError);');
    expect(r.failureExcerpt).toMatch(/Got unwanted exception[\s\S]*Cannot read properties of undefined \(reading 'value'\)/);
  });
});

describe('reproduce() picks its default from the environment', () => {
  it('uses snippet when no endpoint is configured', async () => {
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    const fx = await createFixtureRepo('py-durations');
    try {
      sh(fx.dir, 'git', ['checkout', '-q', fx.base]);
      const wb = await createLocalWorkbench(fx.dir);
      const r: Reproduction = await reproduce(wb, fx.issue, { logger: quietLog });
      expect(r.strategy).toBe('snippet');
      expect(r.status).toBe('reproduced');
      await wb.cleanup();
    } finally {
      await fx.cleanup();
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
      if (saved.url !== undefined) process.env.OPENAI_BASE_URL = saved.url;
    }
  });

  it('builds the client from OPENAI_BASE_URL and runs the ensemble', async () => {
    const server = await startScriptedLlm([msg(GOLDEN_CUSTOM)]);
    const saved = { url: process.env.OPENAI_BASE_URL, retries: process.env.SWT_LLM_MAX_RETRIES };
    process.env.OPENAI_BASE_URL = server.baseURL;
    process.env.SWT_LLM_MAX_RETRIES = '0';
    const fx = await createFixtureRepo('py-durations');
    try {
      sh(fx.dir, 'git', ['checkout', '-q', fx.base]);
      const wb = await createLocalWorkbench(fx.dir);
      const r = await reproduce(wb, { title: 'parse_duration cannot combine units', body: 'It raises ValueError on 1h30m.' }, { logger: quietLog });
      expect(r.strategy).toBe('ensemble(zero-shot-plus)');
      expect(r.status).toBe('reproduced');
      expect(server.requests[0].headers.authorization).toBe('Bearer no-key');
      await wb.cleanup();
    } finally {
      await server.close();
      await fx.cleanup();
      if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.url;
      if (saved.retries === undefined) delete process.env.SWT_LLM_MAX_RETRIES;
      else process.env.SWT_LLM_MAX_RETRIES = saved.retries;
    }
  });
});

