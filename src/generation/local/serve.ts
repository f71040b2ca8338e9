/**
 * Any ChatModel as an OpenAI-compatible endpoint: POST /v1/chat/completions (not streamed) and
 * GET /v1/models, on loopback unless told otherwise, so other tools (or another swt-bot, through
 * OPENAI_BASE_URL) can use the in-process model. Tool calls come back as `tool_calls`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { errorLine, isSwtError } from '../../util/errors.js';
import type { ChatMessage, ChatModel, ChatResponse } from '../llmTypes.js';

const MAX_BODY = 8 * 2 ** 20;

const part = z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).passthrough())]);
const textOf = (c: z.infer<typeof part> | null | undefined): string => (c == null ? '' : typeof c === 'string' ? c : c.map((p) => p.text ?? '').join(''));

const requestSchema = z.object({
  model: z.string().optional(),
  messages: z
    .array(
      z.object({
        role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
        content: part.nullable().optional(),
        name: z.string().optional(),
        tool_call_id: z.string().optional(),
        tool_calls: z.array(z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) })).optional(),
      }),
    )
    .min(1),
  tools: z.array(z.object({ function: z.object({ name: z.string(), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }) })).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  stream: z.boolean().optional(),
});

type WireRequest = z.infer<typeof requestSchema>;

function toMessages(req: WireRequest): ChatMessage[] {
  return req.messages.map((m): ChatMessage => {
    const content = textOf(m.content);
    if (m.role === 'tool') return { role: 'tool', toolCallId: m.tool_call_id ?? '', name: m.name ?? 'tool', content };
    if (m.role === 'assistant') {
      const toolCalls = m.tool_calls?.map((c) => ({ id: c.id, name: c.function.name, arguments: safeJson(c.function.arguments), rawArguments: c.function.arguments }));
      return { role: 'assistant', content, ...(toolCalls?.length ? { toolCalls } : {}) };
    }
    return { role: m.role === 'developer' ? 'system' : m.role, content };
  });
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

export function toCompletion(r: ChatResponse, id: string): Record<string, unknown> {
  const toolCalls = r.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.rawArguments } }));
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: r.model,
    choices: [{ index: 0, message: { role: 'assistant', content: r.content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls.length ? 'tool_calls' : r.finishReason }],
    usage: { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens, total_tokens: r.usage.promptTokens + r.usage.completionTokens },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const fail = (res: ServerResponse, status: number, message: string, type = 'invalid_request_error') => send(res, status, { error: { message, type } });

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function authorised(req: IncomingMessage, apiKey: string | undefined): boolean {
  if (!apiKey) return true;
  const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
  const want = Buffer.from(apiKey);
  return given.length === want.length && timingSafeEqual(given, want);
}

async function completions(model: ChatModel, req: IncomingMessage, res: ServerResponse, n: number): Promise<void> {
  const raw = await readBody(req);
  if (raw === undefined) return fail(res, 413, `the request is over ${MAX_BODY} bytes`);
  let parsed: WireRequest;
  try {
    parsed = requestSchema.parse(JSON.parse(raw));
  } catch (e) {
    return fail(res, 400, `not a chat completion request: ${errorLine(e, 300)}`);
  }
  if (parsed.stream) return fail(res, 400, 'streaming is not supported: send "stream": false');
  const tools = parsed.tools?.map((t) => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} }));
  try {
    const r = await model.chat({ messages: toMessages(parsed), tools, temperature: parsed.temperature, maxTokens: parsed.max_completion_tokens ?? parsed.max_tokens, purpose: 'serve' });
    send(res, 200, toCompletion(r, `chatcmpl-swt-${n}`));
  } catch (e) {
    fail(res, isSwtError(e, 'BAD_CONFIG') || isSwtError(e, 'MODEL_UNAVAILABLE') ? 503 : 500, errorLine(e, 500), 'server_error');
  }
}

/** An HTTP server for `model`; listen on it yourself (`swt model serve` does, on 127.0.0.1). */
export function chatServer(model: ChatModel, opts: { apiKey?: string } = {}): Server {
  let n = 0;
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (!authorised(req, opts.apiKey)) return fail(res, 401, 'a valid bearer key is required', 'authentication_error');
    if (req.method === 'GET' && path === '/v1/models') return send(res, 200, { object: 'list', data: [{ id: model.model, object: 'model', owned_by: 'swt-bot' }] });
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      completions(model, req, res, ++n).catch((e) => fail(res, 500, errorLine(e, 300), 'server_error'));
      return;
    }
    fail(res, 404, `no route ${req.method} ${path}`);
  });
}
