import { Budget, budgetLimitsFrom, DEFAULT_BUDGET } from '../../src/generation/budget.js';
import { buildPriceTable, costOf, priceFor } from '../../src/generation/prices.js';
import { parseTextToolCalls, parseToolArguments, textProtocolInstructions } from '../../src/generation/textProtocol.js';
import { History } from '../../src/generation/history.js';
import { splitDiff } from '../../src/patch/diffFiles.js';
import { isTestFile, isTestPath } from '../../src/harness/testFiles.js';
import { tryConfineRepoPath as confinePath } from '../../src/util/repoPath.js';
import { llmSettingsFrom, isLlmConfigured, describeSettings } from '../../src/generation/llmClient.js';
import { trimOutput } from '../../src/generation/agentTools.js';
import { testPartOf } from '../../src/generation/candidate.js';
import { extractPatchText } from '../../src/generation/strategies/zeroShotPlus.js';
import { parseYesNo } from '../../src/generation/strategies/libro.js';
import { evidenceScore } from '../../src/generation/strategies/ensemble.js';
import { isSwtError } from '../../src/util/errors.js';

describe('budget', () => {
  it('defaults to 30 steps, 200k tokens, $1, 10 minutes and reads SWT_BUDGET_*', () => {
    expect(DEFAULT_BUDGET).toEqual({ tokens: 200_000, usd: 1, steps: 30, wallMs: 600_000 });
    expect(budgetLimitsFrom({ SWT_BUDGET_STEPS: '5', SWT_BUDGET_USD: '0.25' }, { tokens: 1000 })).toEqual({ tokens: 1000, usd: 0.25, steps: 5, wallMs: 600_000 });
    expect(() => budgetLimitsFrom({ SWT_BUDGET_STEPS: 'many' })).toThrow('SWT_BUDGET_STEPS must be a whole number > 0, got "many"');
    expect(() => budgetLimitsFrom({}, { steps: 0 })).toThrow(/invalid budget/);
  });

  it('throws BUDGET_EXHAUSTED on the first dimension used up, naming it', () => {
    let now = 0;
    const b = new Budget({ steps: 2, tokens: 1000, usd: 0.01, wallMs: 1000 }, { now: () => now });
    b.check();
    b.record({ promptTokens: 100, completionTokens: 50, costUsd: 0.001 });
    expect(() => b.check({ tokens: 900 })).toThrow(/tokens/);
    b.record({ promptTokens: 100, completionTokens: 50, costUsd: 0.001 });
    const e = (() => {
      try {
        b.check();
      } catch (err) {
        return err as { dimension: string };
      }
    })();
    expect(isSwtError(e, 'BUDGET_EXHAUSTED')).toBe(true);
    expect(e?.dimension).toBe('steps');
    const w = new Budget({ wallMs: 1000 }, { now: () => now });
    now = 1500;
    expect(w.exhausted()).toBe('wallMs');
    expect(w.usage()).toMatchObject({ steps: 0, wallMs: 1500 });
    const u = new Budget({ usd: 0.01 });
    u.record({ promptTokens: 1, completionTokens: 1, costUsd: 0.02 });
    expect(u.exhausted()).toBe('usd');
  });
});

describe('prices', () => {
  it('matches exact names, then dated snapshots of a priced model, then a default', () => {
    expect(priceFor('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceFor('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10 });
    expect(priceFor('openai/gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(priceFor('llama3:8b')).toBeUndefined();
    // A dated snapshot is the same model; any other suffix is another, priced on its own or refused.
    expect(priceFor('o1-2024-12-17')).toEqual({ input: 15, output: 60 });
    expect(priceFor('gpt-4-0613')).toEqual({ input: 30, output: 60 });
    expect(priceFor('o1-pro')).toBeUndefined();
    expect(priceFor('gpt-4o-audio-preview')).toBeUndefined();
    const table = buildPriceTable('{"default":{"input":0,"output":0},"my-model":{"input":1,"output":2}}');
    expect(priceFor('llama3:8b', table)).toEqual({ input: 0, output: 0 });
    expect(costOf(priceFor('my-model', table), 1_000_000, 500_000)).toBe(2);
    expect(() => buildPriceTable('{"x":{"input":-1,"output":0}}')).toThrow();
  });
});

describe('LLM settings', () => {
  it('come from the environment, validated, and never show the key', () => {
    const env = { OPENAI_API_KEY: 'sk-abcdefghijk', OPENAI_BASE_URL: 'http://localhost:11434/v1', SWT_LLM_MODEL: 'qwen2.5-coder', SWT_LLM_TEMPERATURE: '0.2', SWT_LLM_TIMEOUT_MS: '5000', SWT_LLM_PRICES: '{"qwen2.5-coder":{"input":0,"output":0}}' };
    const s = llmSettingsFrom(env);
    expect(s).toMatchObject({ apiKey: 'sk-abcdefghijk', baseURL: 'http://localhost:11434/v1', model: 'qwen2.5-coder', temperature: 0.2, timeoutMs: 5000, toolMode: 'auto', maxRetries: 3 });
    expect(s.prices['qwen2.5-coder']).toEqual({ input: 0, output: 0 });
    expect(JSON.stringify(describeSettings(s))).not.toContain('sk-abcdefghijk');
    expect(isLlmConfigured({})).toBe(false);
    expect(isLlmConfigured({ OPENAI_BASE_URL: 'http://vllm:8000/v1' })).toBe(true);
    let err: unknown;
    try {
      llmSettingsFrom({ OPENAI_API_KEY: 'sk-abcdefghijk', SWT_LLM_TEMPERATURE: 'hot' });
    } catch (e) {
      err = e;
    }
    expect(isSwtError(err, 'BAD_CONFIG')).toBe(true);
    expect((err as Error).message).not.toContain('sk-abcdefghijk');
  });
});

describe('text protocol for tool calls', () => {
  it('reads <tool_call> blocks and fenced JSON, and reports malformed arguments', () => {
    expect(parseTextToolCalls('ok\n<tool_call>\n{"name": "grep", "arguments": {"pattern": "x"}}\n</tool_call>')).toEqual([
      { name: 'grep', arguments: { pattern: 'x' }, rawArguments: '{"pattern":"x"}' },
    ]);
    expect(parseTextToolCalls('```json\n{"name": "submit", "arguments": {}}\n```', ['submit'])[0].name).toBe('submit');
    expect(parseTextToolCalls('```json\n{"name": "other", "arguments": {}}\n```', ['submit'])).toEqual([]);
    const bad = parseTextToolCalls('<tool_call>{"name": "read_file", "arguments": {"path": "a.py"</tool_call>');
    expect(bad[0].name).toBe('read_file');
    expect(bad[0].parseError).toMatch(/not valid JSON/);
    expect(parseToolArguments('{"a": 1,}')).toEqual({ args: { a: 1 } });
    expect(parseToolArguments('[1]').error).toMatch(/object/);
    expect(textProtocolInstructions([{ name: 'grep', description: 'search', parameters: { type: 'object' } }])).toContain('- grep: search');
  });
});

describe('bounded history', () => {
  it('summarises the oldest tool outputs first and keeps the issue and recent turns whole', () => {
    const h = new History('system', 'the issue', { maxChars: 3000, keepRecent: 2 });
    for (let i = 0; i < 6; i++) {
      const call = { id: `c${i}`, name: 'read_file', arguments: {}, rawArguments: '{}' };
      h.addAssistant({ content: `step ${i}`, toolCalls: [call] });
      h.addToolResult(call, `line 1 of output ${i}\n` + 'x'.repeat(1000));
    }
    const out = h.render();
    expect(out).toHaveLength(14);
    expect(out[1]).toEqual({ role: 'user', content: 'the issue' });
    expect(h.totalChars(out)).toBeLessThanOrEqual(3000);
    expect(out[3].content).toMatch(/^line 1 of output 0\n.*\[older read_file output summarised/s);
    expect(out[13].content).toContain('x'.repeat(1000));
    expect(h.summarised).toBeGreaterThan(0);
  });
});

describe('diff files and paths', () => {
  const diff = `diff --git a/tests/test_a.py b/tests/test_a.py
new file mode 100644
--- /dev/null
+++ b/tests/test_a.py
@@ -0,0 +1,2 @@
+def test_a():
+    assert False
diff --git a/pkg/core.py b/pkg/core.py
index 1..2 100644
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1 +1 @@
-x = 1
+x = 2
diff --git a/reproduce.py b/reproduce.py
new file mode 100644
--- /dev/null
+++ b/reproduce.py
@@ -0,0 +1 @@
+print(1)
`;
  it('splits a git diff per file and keeps only the test part', () => {
    const files = splitDiff(diff);
    expect(files.map((f) => [f.path, f.isNew])).toEqual([
      ['tests/test_a.py', true],
      ['pkg/core.py', false],
      ['reproduce.py', true],
    ]);
    const t = testPartOf(diff);
    expect(t.files.map((f) => f.path)).toEqual(['tests/test_a.py']);
    expect(t.dropped).toEqual(['pkg/core.py (non-test change)', 'reproduce.py (new non-test file)']);
    expect(t.testPatch).toContain('+def test_a():');
  });

  it('knows test paths and confines model paths to the repository', () => {
    for (const p of ['tests/test_x.py', 'pkg/x_test.py', 'src/a.spec.ts', '__tests__/a.js', 'test/helpers.js', 'conftest.py']) expect(isTestPath(p)).toBe(true);
    for (const p of ['pkg/core.py', 'src/index.ts', 'setup.py', 'testing_utils.py']) expect(isTestPath(p)).toBe(false);
    expect(isTestFile('conftest.py')).toBe(false);
    expect(isTestFile('tests/test_x.py')).toBe(true);
    expect(confinePath('/testbed/tests/a.py')).toBe('tests/a.py');
    expect(confinePath('./tests/../pkg/a.py')).toBe('pkg/a.py');
    expect(confinePath('../etc/passwd')).toBeUndefined();
    expect(confinePath('/etc/passwd')).toBeUndefined();
    expect(confinePath('.git/config')).toBeUndefined();
  });

  it('trims long output keeping head and tail', () => {
    const t = trimOutput('a'.repeat(100) + 'b'.repeat(100), 50);
    expect(t).toMatch(/^a{20}\n\[… 150 characters elided …\]\nb{30}$/);
  });
});

describe('answers of the model', () => {
  it('takes the custom diff out of an answer', () => {
    expect(extractPatchText('Here:\n```custom-diff\ndiff\ntests/test_a.py\ninsert\nEOF\ndef test_a():\n    pass\nend diff\n```\nDone')).toBe('diff\ntests/test_a.py\ninsert\nEOF\ndef test_a():\n    pass\nend diff\n');
    expect(extractPatchText('```diff\n--- a/x\n+++ b/x\n```')).toBe('--- a/x\n+++ b/x\n');
    expect(extractPatchText('no fences')).toBe('no fences');
  });

  it("reads LIBRO's yes/no judgement", () => {
    expect(parseYesNo('YES\nThe failure is the ValueError of the issue.')).toBe('yes');
    expect(parseYesNo('**No** - unrelated.')).toBe('no');
    expect(parseYesNo('maybe')).toBeUndefined();
  });

  it('ranks reproductions by evidence', () => {
    const base = { strategy: 's', reason: '', usage: { promptTokens: 0, completionTokens: 0, costUsd: 0, steps: 0, wallMs: 0 } };
    const withExc = { ...base, status: 'reproduced' as const, testPatch: '+a\n', evidence: { applied: true, testFiles: [], reproducingTests: [], notes: [], runs: [{ exitCode: 1, timedOut: false, durationMs: 1, passed: 0, failures: [{ id: 'x', kind: 'issue-exception' as const }] }] } };
    const plain = { ...withExc, evidence: { ...withExc.evidence, runs: [{ ...withExc.evidence.runs[0], failures: [{ id: 'x', kind: 'assertion' as const }] }] } };
    expect(evidenceScore(withExc)).toBeGreaterThan(evidenceScore(plain));
    expect(evidenceScore(plain)).toBeGreaterThan(evidenceScore({ ...base, status: 'not-reproduced', testPatch: '+a' }));
  });
});
