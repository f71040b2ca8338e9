/**
 * The in-process model behind the same port as an OpenAI-compatible endpoint (ChatModel): GGUF
 * through node-llama-cpp on the CPU, priced at 0, with real token counts from the model's own
 * tokenizer. Tools go through the text protocol. A prompt longer than the context is cut in the
 * middle of its longest message, with a marker, so the answer still fits; when even that cannot
 * fit, the call fails with a clear error.
 */
import type { ChatHistoryItem } from 'node-llama-cpp';
import type { Environment } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';
import { logger as defaultLogger, type Logger } from '../../util/logger.js';
import { redact, secretValues } from '../../util/secrets.js';
import { Budget, BudgetExhaustedError } from '../budget.js';
import type { LlmSettings } from '../llmClient.js';
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from '../llmTypes.js';
import { parseTextToolCalls, plainTranscript, stripTextToolCalls, type PlainMessage } from '../textProtocol.js';
import { localModelSpec, type LocalModelSpec } from './catalogue.js';
import { loadLocalModel, type LoadedModel, type Slot } from './runtime.js';
import { LOCAL_DEFAULT_MAX_OUTPUT, LOCAL_DEFAULT_TIMEOUT_MS } from './settings.js';
import { assertModelPresent, modelDir } from './store.js';

/** Room kept for the answer when a prompt is cut to fit. */
const MIN_ANSWER_TOKENS = 256;
let calls = 0;

export class LocalLlm implements ChatModel {
  readonly spec: LocalModelSpec;
  readonly local = true;
  private readonly owner = Symbol('local-llm-client');
  private readonly log: Logger;

  readonly settings: LlmSettings;

  constructor(settings: LlmSettings, opts: { logger?: Logger; env?: Environment } = {}) {
    this.settings = settings;
    this.spec = localModelSpec(settings.model);
    this.log = (opts.logger ?? defaultLogger).child({ component: 'llm', model: settings.model });
    // Refused up front (cheap: the size); the sha256 is checked when the model is first loaded.
    assertModelPresent(this.spec, settings.local.dir ?? modelDir(opts.env));
  }

  get model(): string {
    return `local:${this.spec.id}`;
  }

  get temperature(): number {
    return this.settings.temperature;
  }

  /** Prompt plus answer, in tokens. */
  get contextLimit(): number {
    return this.settings.local.contextTokens;
  }

  load(): Promise<LoadedModel> {
    return loadLocalModel(this.spec, this.settings.local);
  }

  async chat(req: ChatRequest, opts: { budget?: Budget } = {}): Promise<ChatResponse> {
    const loaded = await this.load();
    const slot = await loaded.acquire(this.owner);
    try {
      return await this.generate(loaded, slot, req, opts.budget);
    } finally {
      loaded.release(slot);
    }
  }

  private async generate(loaded: LoadedModel, slot: Slot, req: ChatRequest, budget: Budget | undefined): Promise<ChatResponse> {
    const secrets = secretValues();
    const tools = req.tools?.length ? req.tools : undefined;
    const wanted = req.maxTokens ?? this.settings.maxOutputTokens ?? LOCAL_DEFAULT_MAX_OUTPUT;
    const fitted = fitToContext(plainTranscript(req.messages, tools, (t) => redact(t, secrets)), (h) => promptTokens(slot, h), this.contextLimit, Math.min(wanted, MIN_ANSWER_TOKENS));
    if (fitted.cut) this.log.warn({ promptTokens: fitted.tokens, cutTokens: fitted.cut, contextTokens: this.contextLimit }, 'prompt cut to fit the local model context');
    budget?.check({ tokens: fitted.tokens, usd: 0 });
    const maxTokens = Math.max(1, Math.min(wanted, this.contextLimit - fitted.tokens));
    const before = slot.sequence.tokenMeter.getState();
    const timeoutMs = this.settings.timeoutSet ? this.settings.timeoutMs : LOCAL_DEFAULT_TIMEOUT_MS;
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(budget ? [budget.signal] : [])]);
    const started = Date.now();
    const res = await slot.chat.generateResponse(fitted.history, {
      maxTokens,
      temperature: req.temperature ?? this.temperature,
      ...((req.seed ?? this.settings.seed) !== undefined ? { seed: req.seed ?? this.settings.seed } : {}),
      signal,
      stopOnAbortSignal: true,
    });
    if (budget?.signal.aborted) throw new BudgetExhaustedError('wallMs', 'wall time ran out during a local model call');
    const after = slot.sequence.tokenMeter.getState();
    const completionTokens = after.usedOutputTokens - before.usedOutputTokens;
    const evaluated = after.usedInputTokens - before.usedInputTokens;
    const usage = { promptTokens: fitted.tokens, completionTokens, estimated: false, cachedPromptTokens: Math.max(0, fitted.tokens - evaluated) };
    budget?.record({ promptTokens: usage.promptTokens, completionTokens, costUsd: 0 });
    const stop = res.metadata.stopReason;
    this.log.info({ purpose: req.purpose, ...usage, ms: Date.now() - started, stop, loadMs: loaded.loadMs, call: ++calls }, 'local model answered');
    return toResponse(res.response, tools?.map((t) => t.name), stop === 'maxTokens' ? 'length' : stop === 'abort' ? 'timeout' : 'stop', usage, this.model);
  }
}

function toResponse(content: string, toolNames: string[] | undefined, finishReason: string, usage: ChatResponse['usage'], model: string): ChatResponse {
  const parsed = toolNames ? parseTextToolCalls(content, toolNames) : [];
  const toolCalls: ToolCall[] = parsed.map((c, i) => ({ id: `call_local_${Date.now().toString(36)}_${i}`, name: c.name, arguments: c.arguments, rawArguments: c.rawArguments, parseError: c.parseError }));
  return { content: toolCalls.length ? stripTextToolCalls(content) : content, toolCalls, finishReason, usage, costUsd: 0, viaTextProtocol: toolCalls.length > 0, model };
}

function toHistory(messages: readonly PlainMessage[]): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = messages.map((m) =>
    m.role === 'system' ? { type: 'system', text: m.content } : m.role === 'user' ? { type: 'user', text: m.content } : { type: 'model', response: [m.content] },
  );
  items.push({ type: 'model', response: [] });
  return items;
}

function promptTokens(slot: Slot, history: ChatHistoryItem[]): number {
  const { contextText } = slot.chat.chatWrapper.generateContextState({ chatHistory: history });
  return contextText.tokenize(slot.chat.model.tokenizer).length;
}

export interface Fitted {
  history: ChatHistoryItem[];
  tokens: number;
  /** Tokens removed to fit (0: none). */
  cut: number;
}

/**
 * The conversation as the model's history, cut in the middle of its longest message until it
 * leaves `answer` tokens of `limit` free. Pure apart from the token counter it is given.
 */
export function fitToContext(messages: readonly PlainMessage[], count: (h: ChatHistoryItem[]) => number, limit: number, answer: number): Fitted {
  let msgs = [...messages];
  const first = count(toHistory(msgs));
  let tokens = first;
  for (let round = 0; tokens + answer > limit && round < 6; round++) {
    const i = msgs.reduce((best, m, j) => (m.role !== 'assistant' && m.content.length > msgs[best]!.content.length ? j : best), 0);
    const text = msgs[i]!.content;
    const charsPerToken = Math.max(1, text.length / Math.max(1, tokens));
    const drop = Math.ceil((tokens + answer - limit) * charsPerToken * 1.1) + 64;
    if (drop >= text.length - 200) break;
    const keep = Math.floor((text.length - drop) / 2);
    msgs = msgs.map((m, j) => (j === i ? { ...m, content: `${text.slice(0, keep)}\n[… ${drop} characters cut to fit the model's context …]\n${text.slice(text.length - keep)}` } : m));
    tokens = count(toHistory(msgs));
  }
  if (tokens + answer > limit) {
    throw new SwtError('LLM_ERROR', `the prompt (${first} tokens) does not fit the local model's context of ${limit} tokens with room for an answer`, {
      hint: 'raise SWT_LOCAL_CONTEXT_TOKENS or shorten the input',
    });
  }
  return { history: toHistory(msgs), tokens, cut: first - tokens };
}
