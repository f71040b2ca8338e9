/** The LLM client against the scripted OpenAI-compatible server, over real HTTP with the real openai SDK. */
import { LlmClient, llmSettingsFrom } from '../../src/generation/llmClient.js';
import { Budget } from '../../src/generation/budget.js';
import type { ToolSpec } from '../../src/generation/llmTypes.js';
import { isSwtError } from '../../src/util/errors.js';
import { startScriptedLlm, msg, toolCall, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const TOOLS: ToolSpec[] = [
  { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'submit', description: 'Submit', parameters: { type: 'object', properties: {} } },
];

function client(server: ScriptedLlm, extra: Record<string, unknown> = {}): LlmClient {
  return new LlmClient(llmSettingsFrom({}, { baseURL: server.baseURL, apiKey: 'sk-scripted-test-key', model: 'gpt-4o-mini', retryBaseDelayMs: 10, ...extra }));
}

describe('LlmClient over HTTP (scripted server)', () => {
  let server: ScriptedLlm | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('returns a plain message and accounts tokens and cost from the price table', async () => {
    server = await startScriptedLlm([msg('hello', { prompt_tokens: 1000, completion_tokens: 500 })]);
    const budget = new Budget();
    const r = await client(server).chat({ messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi' }] }, { budget });
    expect(r.content).toBe('hello');
    expect(r.usage).toEqual({ promptTokens: 1000, completionTokens: 500, estimated: false });
    // gpt-4o-mini: $0.15 / $0.60 per million
    expect(r.costUsd).toBeCloseTo((1000 * 0.15 + 500 * 0.6) / 1e6, 10);
    expect(budget.usage()).toMatchObject({ promptTokens: 1000, completionTokens: 500, steps: 1 });
    expect(server.requests[0].body.model).toBe('gpt-4o-mini');
    expect(server.requests[0].body.temperature).toBe(0);
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-scripted-test-key');
  });

  it('sends tools natively and parses tool calls', async () => {
    server = await startScriptedLlm([toolCall('read_file', { path: 'src/a.py' })]);
    const r = await client(server).chat({ messages: [{ role: 'user', content: 'go' }], tools: TOOLS });
    expect(server.requests[0].body.tools.map((t: any) => t.function.name)).toEqual(['read_file', 'submit']);
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ name: 'read_file', arguments: { path: 'src/a.py' } });
    expect(r.toolCalls[0].parseError).toBeUndefined();
    expect(r.viaTextProtocol).toBe(false);
  });

  it('reports malformed tool-call arguments instead of throwing', async () => {
    server = await startScriptedLlm([{ kind: 'message', content: null, toolCalls: [{ name: 'read_file', arguments: '{"path": "src/a.py"' }] }]);
    const r = await client(server).chat({ messages: [{ role: 'user', content: 'go' }], tools: TOOLS });
    expect(r.toolCalls[0].name).toBe('read_file');
    expect(r.toolCalls[0].parseError).toMatch(/not valid JSON/);
    expect(r.toolCalls[0].rawArguments).toBe('{"path": "src/a.py"');
  });

  it('retries a 429 after Retry-After, then succeeds', async () => {
    server = await startScriptedLlm([
      { kind: 'status', status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached' } } },
      msg('after the wait'),
    ]);
    const t0 = Date.now();
    const budget = new Budget();
    const r = await client(server).chat({ messages: [{ role: 'user', content: 'x' }] }, { budget });
    expect(r.content).toBe('after the wait');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(server.requests).toHaveLength(2);
    expect(budget.steps).toBe(1); // the refused call is not a step
  });

  it('retries 5xx with backoff and gives up with LLM_ERROR after maxRetries', async () => {
    server = await startScriptedLlm([
      { kind: 'status', status: 500 },
      { kind: 'status', status: 502 },
      { kind: 'status', status: 503 },
    ]);
    const err = await client(server, { maxRetries: 2 }).chat({ messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(isSwtError(err, 'LLM_ERROR')).toBe(true);
    expect(err.message).toMatch(/503/);
    expect(server.requests).toHaveLength(3);
  });

  it('turns a hung server into LLM_TIMEOUT', async () => {
    server = await startScriptedLlm([{ kind: 'hang' }, { kind: 'hang' }]);
    const t0 = Date.now();
    const err = await client(server, { timeoutMs: 300, maxRetries: 1 }).chat({ messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(isSwtError(err, 'LLM_TIMEOUT')).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('recovers from a timeout when the retry is answered', async () => {
    server = await startScriptedLlm([{ kind: 'hang' }, msg('late but fine')]);
    // 2 s: the answered retry must not time out too when the test process stalls (the server runs in it).
    const r = await client(server, { timeoutMs: 2000, maxRetries: 2 }).chat({ messages: [{ role: 'user', content: 'x' }] });
    expect(r.content).toBe('late but fine');
  });

  it('falls back to the text protocol when the server rejects tools, and stays there', async () => {
    server = await startScriptedLlm([
      { kind: 'status', status: 400, body: { error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' } } },
      msg('Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'),
      msg('<tool_call>{"name": "submit", "arguments": {}}</tool_call>'),
    ]);
    const c = client(server);
    const r = await c.chat({ messages: [{ role: 'system', content: 'You write tests.' }, { role: 'user', content: 'go' }], tools: TOOLS });
    expect(c.effectiveToolMode).toBe('text');
    expect(r.viaTextProtocol).toBe(true);
    expect(r.content).toBe('Let me look.');
    expect(r.toolCalls[0]).toMatchObject({ name: 'read_file', arguments: { path: 'a.py' } });
    expect(server.requests[1].body.tools).toBeUndefined();
    expect(server.requests[1].body.messages[0].content).toContain('<tool_call>');
    // The next turn renders the earlier call and its result as text.
    const r2 = await c.chat({
      messages: [
        { role: 'system', content: 'You write tests.' },
        { role: 'user', content: 'go' },
        { role: 'assistant', content: r.content, toolCalls: r.toolCalls },
        { role: 'tool', toolCallId: r.toolCalls[0].id, name: 'read_file', content: '1 x = 1' },
      ],
      tools: TOOLS,
    });
    expect(r2.toolCalls[0].name).toBe('submit');
    const sent = server.requests[2].body.messages;
    expect(sent.some((m: any) => m.role === 'tool')).toBe(false);
    expect(sent.at(-1)).toMatchObject({ role: 'user' });
    expect(sent.at(-1).content).toContain('<tool_result name="read_file">');
    expect(sent.at(-2).content).toContain('"name":"read_file"');
  });

  it('reads tool calls a model wrote as text even when tools were sent natively', async () => {
    server = await startScriptedLlm([msg('```json\n{"name": "read_file", "arguments": {"path": "b.py"}}\n```')]);
    const r = await client(server).chat({ messages: [{ role: 'user', content: 'go' }], tools: TOOLS });
    expect(r.viaTextProtocol).toBe(true);
    expect(r.toolCalls[0]).toMatchObject({ name: 'read_file', arguments: { path: 'b.py' } });
  });

  it('estimates usage when the server sends none', async () => {
    server = await startScriptedLlm([{ kind: 'message', content: 'x'.repeat(400), usage: null }]);
    const r = await client(server).chat({ messages: [{ role: 'user', content: 'y'.repeat(4000) }] });
    expect(r.usage.estimated).toBe(true);
    expect(r.usage.completionTokens).toBe(100);
    expect(r.usage.promptTokens).toBeGreaterThan(1000);
  });

  it('refuses to call once the token budget is spent, before any request', async () => {
    server = await startScriptedLlm([msg('a', { prompt_tokens: 90, completion_tokens: 20 }), msg('b')]);
    const budget = new Budget({ tokens: 100 });
    const c = client(server);
    await c.chat({ messages: [{ role: 'user', content: 'x' }] }, { budget });
    const err = await c.chat({ messages: [{ role: 'user', content: 'x' }] }, { budget }).catch((e) => e);
    expect(isSwtError(err, 'BUDGET_EXHAUSTED')).toBe(true);
    expect(err.dimension).toBe('tokens');
    expect(server.requests).toHaveLength(1);
  });

  it('enforces the dollar budget from the price table', async () => {
    server = await startScriptedLlm([msg('a', { prompt_tokens: 100_000, completion_tokens: 10_000 }), msg('b')]);
    const budget = new Budget({ usd: 0.02 });
    const c = client(server, { model: 'gpt-4o' }); // $2.50 / $10 per million: $0.35 for the first call
    await c.chat({ messages: [{ role: 'user', content: 'x' }] }, { budget });
    expect(budget.costUsd).toBeCloseTo(0.35, 6);
    const err = await c.chat({ messages: [{ role: 'user', content: 'x' }] }, { budget }).catch((e) => e);
    expect(err.dimension).toBe('usd');
    expect(server.requests).toHaveLength(1);
  });

  it('stops a hung call when the wall-time budget runs out', async () => {
    server = await startScriptedLlm([{ kind: 'hang' }]);
    const budget = new Budget({ wallMs: 400 });
    const err = await client(server, { timeoutMs: 60_000 }).chat({ messages: [{ role: 'user', content: 'x' }] }, { budget }).catch((e) => e);
    expect(isSwtError(err, 'BUDGET_EXHAUSTED')).toBe(true);
    expect(err.dimension).toBe('wallMs');
  });
});
