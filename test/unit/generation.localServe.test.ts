/** `swt model serve`'s endpoint: any ChatModel as OpenAI chat completions, on loopback, read by the openai SDK itself. */
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { chatServer } from '../../src/generation/local/serve.js';
import type { ChatModel, ChatRequest, ChatResponse } from '../../src/generation/llmTypes.js';

class EchoModel implements ChatModel {
  readonly model = 'local:echo';
  readonly temperature = 0;
  readonly seen: ChatRequest[] = [];
  async chat(req: ChatRequest): Promise<ChatResponse> {
    this.seen.push(req);
    const last = req.messages[req.messages.length - 1]!;
    const wantsTool = req.tools?.length && last.role === 'user';
    return {
      content: wantsTool ? 'reading' : `echo: ${last.content}`,
      toolCalls: wantsTool ? [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.py' }, rawArguments: '{"path":"a.py"}' }] : [],
      finishReason: 'stop',
      usage: { promptTokens: 11, completionTokens: 3, estimated: false },
      costUsd: 0,
      viaTextProtocol: Boolean(wantsTool),
      model: this.model,
    };
  }
}

describe('swt model serve: an OpenAI-compatible endpoint', () => {
  const model = new EchoModel();
  const server = chatServer(model, { apiKey: 'k-123' });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('answers chat completions with real usage, and tool calls as tool_calls', async () => {
    const sdk = new OpenAI({ apiKey: 'k-123', baseURL: base, maxRetries: 0 });
    const plain = await sdk.chat.completions.create({ model: 'x', messages: [{ role: 'developer', content: 'rules' }, { role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(plain.choices[0]!.message.content).toBe('echo: hi');
    expect(plain.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    expect(model.seen[0]).toMatchObject({ messages: [{ role: 'system', content: 'rules' }, { role: 'user', content: 'hi' }], maxTokens: 5 });
    const tools = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object' } } }];
    const called = await sdk.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'look' }], tools });
    expect(called.choices[0]!.finish_reason).toBe('tool_calls');
    expect(called.choices[0]!.message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.py"}' } }]);
    const back = await sdk.chat.completions.create({
      model: 'x',
      messages: [
        { role: 'user', content: 'look' },
        { role: 'assistant', content: null, tool_calls: called.choices[0]!.message.tool_calls },
        { role: 'tool', tool_call_id: 'call_1', content: 'print(1)' },
      ],
      tools,
    });
    expect(back.choices[0]!.message.content).toBe('echo: print(1)');
    expect(model.seen[2]!.messages[1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.py' } }] });
    expect((await sdk.models.list()).data.map((m) => m.id)).toEqual(['local:echo']);
  });

  it('refuses a missing key, streaming and malformed requests, each with an OpenAI-style error', async () => {
    const post = (body: unknown, key = 'k-123') => fetch(`${base}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const noKey = await post({ messages: [{ role: 'user', content: 'x' }] }, 'wrong');
    expect(noKey.status).toBe(401);
    const stream = await post({ messages: [{ role: 'user', content: 'x' }], stream: true });
    expect(stream.status).toBe(400);
    expect(((await stream.json()) as { error: { message: string } }).error.message).toMatch(/streaming is not supported/);
    const bad = await post({ messages: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/not a chat completion request/);
    expect((await fetch(`${base}/nothing`, { headers: { authorization: 'Bearer k-123' } })).status).toBe(404);
  });
});
