/**
 * The LLM client: the `openai` SDK against any OpenAI-compatible chat-completions endpoint
 * (OpenAI, Azure, vLLM, Ollama, LiteLLM…), with
 * - settings validated by zod, from the environment and an optional config object (llmSettings.ts);
 * - retries with exponential backoff on 429, 5xx and connection errors (honouring Retry-After);
 * - a request timeout that surfaces as SwtError LLM_TIMEOUT;
 * - native tool calling, falling back to a text protocol when the server rejects tools or the
 *   model writes its tool calls as text;
 * - accounting against a per-issue Budget (tokens, dollars, calls, wall time) and a price table;
 * - redaction: every message is scrubbed of environment secrets before it leaves the process.
 */
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { envValues, type Environment } from '../settings/index.js';
import { errorLine, SwtError, isSwtError } from '../util/errors.js';
import { logger as defaultLogger, type Logger } from '../util/logger.js';
import { redact, secretValues } from '../util/secrets.js';
import { Budget, BudgetExhaustedError } from './budget.js';
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall, ToolSpec } from './llmTypes.js';
import { costOf, priceFor, unpricedModelError } from './prices.js';
import { isLocalModel } from './local/catalogue.js';
import { LocalLlm } from './local/localLlm.js';
import { isLlmConfigured, llmSettingsFrom, type LlmSettings, type LlmSettingsInput } from './llmSettings.js';
import { parseTextToolCalls, parseToolArguments, plainTranscript, stripTextToolCalls } from './textProtocol.js';

export type ToolMode = 'auto' | 'native' | 'text';

export { describeSettings, isLlmConfigured, llmSettingsFrom, llmSettingsSchema, type LlmSettings, type LlmSettingsInput } from './llmSettings.js';

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

let callCounter = 0;
const newCallId = () => `call_swt_${Date.now().toString(36)}_${(callCounter++).toString(36)}`;

export interface LlmClientOptions {
  logger?: Logger;
  /** Injected sleep, for tests of the backoff schedule. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class LlmClient implements ChatModel {
  readonly settings: LlmSettings;
  private readonly sdk: OpenAI;
  private readonly log: Logger;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Becomes 'text' for good once the server has rejected native tools. */
  private toolMode: ToolMode;

  constructor(settings: LlmSettings, opts: LlmClientOptions = {}) {
    // Refused before any call: an unpriced model would cost "$0" and slip past the dollar budget.
    const unpriced = unpricedModelError(settings.model, settings.prices);
    if (unpriced) throw new SwtError('BAD_CONFIG', unpriced);
    this.settings = settings;
    this.toolMode = settings.toolMode;
    this.log = (opts.logger ?? defaultLogger).child({ component: 'llm' });
    this.sleep = opts.sleep ?? sleepFor;
    const azure = settings.apiVersion !== undefined;
    this.sdk = new OpenAI({
      // Local servers (vLLM, Ollama) take any key; the SDK insists on one.
      apiKey: settings.apiKey ?? 'no-key',
      baseURL: settings.baseURL,
      timeout: settings.timeoutMs,
      maxRetries: 0, // retries are ours: logged, bounded by the budget's wall time
      defaultQuery: azure ? { 'api-version': settings.apiVersion } : undefined,
      defaultHeaders: azure && settings.apiKey ? { 'api-key': settings.apiKey } : undefined,
    });
  }

  get model(): string {
    return this.settings.model;
  }

  get temperature(): number {
    return this.settings.temperature;
  }

  /** 'text' once the server refused native tools. */
  get effectiveToolMode(): ToolMode {
    return this.toolMode;
  }

  async chat(req: ChatRequest, opts: { budget?: Budget } = {}): Promise<ChatResponse> {
    const budget = opts.budget;
    const secrets = secretValues();
    const tools = req.tools?.length ? req.tools : undefined;
    let textMode = Boolean(tools) && this.toolMode === 'text';
    let wire = this.toWire(req.messages, tools, textMode, secrets);
    const price = priceFor(this.model, this.settings.prices);
    const estPrompt = estimateTokens(JSON.stringify(wire.messages)) + (wire.tools ? estimateTokens(JSON.stringify(wire.tools)) : 0);
    budget?.check({ tokens: estPrompt, usd: costOf(price, estPrompt, 0) });

    let attempt = 0;
    for (;;) {
      const remaining = budget ? budget.remainingMs() : Infinity;
      if (remaining <= 0) budget!.check();
      const timeout = Math.max(1, Math.min(this.settings.timeoutMs, remaining));
      let completion: ChatCompletion;
      const startedAt = Date.now();
      try {
        completion = await this.sdk.chat.completions.create(this.params(req, wire), { timeout, signal: budget?.signal, maxRetries: 0 });
      } catch (err) {
        if (err instanceof APIUserAbortError || budget?.signal.aborted) {
          throw new BudgetExhaustedError('wallMs', 'wall time ran out during an LLM call');
        }
        // The server refuses native tools: switch to the text protocol, for this call and the next ones.
        if (tools && !textMode && this.toolMode === 'auto' && isToolRejection(err)) {
          this.log.warn({ status: (err as APIError).status, message: redact(String((err as Error).message), secrets) }, 'server rejected native tool calling; falling back to the text protocol');
          this.toolMode = 'text';
          textMode = true;
          wire = this.toWire(req.messages, tools, true, secrets);
          continue;
        }
        // Under some runtimes (e.g. jest's VM realms) the SDK cannot recognise its own abort as a
        // timeout and reports a connection error: the elapsed time tells.
        let kind = classify(err);
        if (kind === 'retryable' && err instanceof APIConnectionError && Date.now() - startedAt >= timeout * 0.95) kind = 'timeout';
        if (kind === 'timeout' && remaining < this.settings.timeoutMs) throw new BudgetExhaustedError('wallMs', 'wall time ran out during an LLM call');
        if ((kind !== 'retryable' && kind !== 'timeout') || attempt >= this.settings.maxRetries) throw toSwtError(err, kind, this.settings, secrets, attempt);
        await this.waitToRetry(attempt++, err, kind, req.purpose, budget);
        continue;
      }
      return this.fromWire(completion, wire.messages, tools, textMode, budget, price);
    }
  }

  private params(req: ChatRequest, wire: { messages: ChatCompletionMessageParam[]; tools?: ChatCompletionTool[] }): ChatCompletionCreateParamsNonStreaming {
    const maxTokens = req.maxTokens ?? this.settings.maxOutputTokens;
    const seed = req.seed ?? this.settings.seed;
    return {
      model: this.model,
      messages: wire.messages,
      temperature: req.temperature ?? this.temperature,
      ...(wire.tools ? { tools: wire.tools } : {}),
      ...(maxTokens ? { max_tokens: maxTokens } : {}),
      ...(seed !== undefined ? { seed } : {}),
    };
  }

  /** Sleeps before retry number `attempt + 1`; the budget's wall time must outlast the wait. */
  private async waitToRetry(attempt: number, err: unknown, reason: string, purpose: string | undefined, budget: Budget | undefined): Promise<void> {
    const delay = this.backoff(attempt, err);
    if (budget && delay >= budget.remainingMs()) {
      throw new BudgetExhaustedError('wallMs', 'no wall time left to retry the LLM call');
    }
    this.log.warn(
      { attempt: attempt + 1, of: this.settings.maxRetries, delayMs: delay, status: err instanceof APIError ? err.status : undefined, reason, purpose },
      'LLM call failed; retrying',
    );
    try {
      await this.sleep(delay, budget?.signal);
    } catch {
      throw new BudgetExhaustedError('wallMs', 'wall time ran out while waiting to retry');
    }
  }

  private backoff(attempt: number, err: unknown): number {
    const cap = this.settings.retryMaxDelayMs;
    const headers = err instanceof APIError ? err.headers : undefined;
    const ms = headers?.get?.('retry-after-ms');
    if (ms && Number.isFinite(Number(ms))) return Math.min(Number(ms), cap);
    const s = headers?.get?.('retry-after');
    if (s) {
      const secs = Number(s);
      if (Number.isFinite(secs)) return Math.min(secs * 1000, cap);
      const at = Date.parse(s);
      if (Number.isFinite(at)) return Math.min(Math.max(0, at - Date.now()), cap);
    }
    const base = this.settings.retryBaseDelayMs * 2 ** attempt;
    return Math.min(cap, base * (1 - Math.random() * 0.25));
  }

  /** Our messages → the wire, redacted; in text mode tool calls and results become plain text. */
  private toWire(
    messages: ChatMessage[],
    tools: ToolSpec[] | undefined,
    textMode: boolean,
    secrets: string[],
  ): { messages: ChatCompletionMessageParam[]; tools?: ChatCompletionTool[] } {
    const r = (t: string) => redact(t, secrets);
    if (textMode && tools) return { messages: plainTranscript(messages, tools, r) };
    const out: ChatCompletionMessageParam[] = [];
    for (const m of messages) {
      if (m.role === 'tool') out.push({ role: 'tool', tool_call_id: m.toolCallId, content: r(m.content) });
      else if (m.role === 'assistant') {
        out.push({
          role: 'assistant',
          content: m.content ? r(m.content) : m.toolCalls?.length ? null : '',
          ...(m.toolCalls?.length
            ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: r(c.rawArguments) } })) }
            : {}),
        });
      } else out.push({ role: m.role, content: r(m.content) });
    }
    const wireTools = tools && !textMode
      ? tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } }))
      : undefined;
    return { messages: out, tools: wireTools };
  }

  private fromWire(
    completion: ChatCompletion,
    sent: ChatCompletionMessageParam[],
    tools: ToolSpec[] | undefined,
    textMode: boolean,
    budget: Budget | undefined,
    price: ReturnType<typeof priceFor>,
  ): ChatResponse {
    const choice = completion.choices?.[0];
    if (!choice) throw new SwtError('LLM_ERROR', 'the LLM returned no choices');
    const msg = choice.message;
    const content = msg?.content ?? '';
    let toolCalls: ToolCall[] = [];
    for (const tc of msg?.tool_calls ?? []) {
      if (tc.type !== 'function') continue;
      const raw = tc.function.arguments ?? '';
      const p = parseToolArguments(raw);
      toolCalls.push({ id: tc.id || newCallId(), name: tc.function.name, arguments: p.args, rawArguments: raw, parseError: p.error });
    }
    let viaText = false;
    if (!toolCalls.length && tools && content) {
      const parsed = parseTextToolCalls(content, tools.map((t) => t.name));
      if (parsed.length) {
        viaText = true;
        toolCalls = parsed.map((c) => ({ id: newCallId(), name: c.name, arguments: c.arguments, rawArguments: c.rawArguments, parseError: c.parseError }));
      }
    }
    const usage = completion.usage
      ? { promptTokens: completion.usage.prompt_tokens ?? 0, completionTokens: completion.usage.completion_tokens ?? 0, estimated: false }
      : {
          promptTokens: estimateTokens(JSON.stringify(sent)),
          completionTokens: estimateTokens(content + (msg?.tool_calls?.length ? JSON.stringify(msg.tool_calls) : '')),
          estimated: true,
        };
    const costUsd = costOf(price, usage.promptTokens, usage.completionTokens);
    budget?.record({ promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, costUsd });
    return {
      content: viaText || textMode ? stripTextToolCalls(content) : content,
      toolCalls,
      finishReason: choice.finish_reason ?? 'stop',
      usage,
      costUsd,
      viaTextProtocol: viaText || (textMode && toolCalls.length > 0),
      model: completion.model || this.model,
    };
  }
}

type ErrorKind = 'timeout' | 'retryable' | 'fatal';

function classify(err: unknown): ErrorKind {
  if (err instanceof APIConnectionTimeoutError) return 'timeout';
  if (err instanceof APIConnectionError) return 'retryable';
  if (err instanceof APIError) {
    const s = err.status ?? 0;
    if (s === 429 || s === 408 || s === 409 || s >= 500) return 'retryable';
  }
  return 'fatal';
}

function isToolRejection(err: unknown): boolean {
  if (!(err instanceof APIError)) return false;
  if (err.status !== 400 && err.status !== 422 && err.status !== 404 && err.status !== 501) return false;
  return /tool|function/i.test(String(err.message));
}

function toSwtError(err: unknown, kind: ErrorKind, s: LlmSettings, secrets: string[], attempts: number): SwtError {
  if (isSwtError(err)) return err;
  const where = s.baseURL ?? 'api.openai.com';
  const msg = errorLine(err, 300, secrets);
  if (kind === 'timeout') {
    return new SwtError('LLM_TIMEOUT', `the LLM at ${where} did not answer within ${s.timeoutMs} ms (${attempts + 1} attempt(s))`, {
      hint: 'raise SWT_LLM_TIMEOUT_MS or check the server',
    });
  }
  if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
    return new SwtError('LLM_ERROR', `the LLM at ${where} refused the credentials (${err.status})`, { hint: 'check OPENAI_API_KEY' });
  }
  if (err instanceof APIError && err.status === 404) {
    return new SwtError('LLM_ERROR', `the LLM at ${where} does not know model ${s.model} (404): ${msg}`, { hint: 'check SWT_LLM_MODEL and OPENAI_BASE_URL' });
  }
  const status = err instanceof APIError && err.status ? ` (${err.status})` : '';
  return new SwtError('LLM_ERROR', `LLM call to ${where} failed${status} after ${attempts + 1} attempt(s): ${msg}`);
}

/**
 * A model from the environment: in-process for `local:<id>` (a missing model file is refused here,
 * with the command that fetches it), else a client of the endpoint; null when none is configured
 * (the snippet strategy needs none).
 */
export function createLlmFromEnv(source?: Environment, config: Partial<LlmSettingsInput> = {}, opts: LlmClientOptions = {}): ChatModel | null {
  if (isLocalModel(config.model ?? envValues(source).SWT_LLM_MODEL)) return new LocalLlm(llmSettingsFrom(source, config), { logger: opts.logger, env: source });
  if (!isLlmConfigured(source) && !config.apiKey && !config.baseURL) return null;
  return new LlmClient(llmSettingsFrom(source, config), opts);
}
