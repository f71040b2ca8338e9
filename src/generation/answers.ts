/**
 * Every raw answer a model gave while reproducing one issue, kept with the result (eval rows, the
 * App's store) so a person can see why an attempt failed: a recording wrapper around a ChatModel.
 */
import type { ChatModel, ChatRequest, ChatResponse } from './llmTypes.js';
import type { Budget } from './budget.js';
import { closeCutAnswer, type ClosedAnswer } from '../patch/cutAnswer.js';

/** The text to take a test from: an answer cut at the answer limit closed where that is safe (patch/cutAnswer.ts); the raw one is kept as it was. */
export function usableAnswer(r: Pick<ChatResponse, 'content' | 'finishReason'>): ClosedAnswer {
  return r.finishReason === 'length' ? closeCutAnswer(r.content) : { text: r.content };
}

/** One answer as the model wrote it (clipped), with the call's purpose (which strategy, which step). */
export interface RawAnswer {
  purpose: string;
  text: string;
  promptTokens: number;
  completionTokens: number;
  finishReason: string;
}

/** Characters kept of one answer: a whole test file fits; a runaway answer does not fill the store. */
export const ANSWER_CHARS = 16_000;
/** Answers kept per reproduction (the agent may take 30 steps). */
export const MAX_ANSWERS = 40;

function answerText(r: ChatResponse): string {
  const calls = r.toolCalls.map((c) => `<tool_call>${JSON.stringify({ name: c.name, arguments: c.parseError ? c.rawArguments : c.arguments })}</tool_call>`);
  const text = [r.content, ...calls].filter(Boolean).join('\n');
  return text.length > ANSWER_CHARS ? `${text.slice(0, ANSWER_CHARS)}\n[… ${text.length - ANSWER_CHARS} more characters]` : text;
}

export class RecordingModel implements ChatModel {
  readonly answers: RawAnswer[] = [];
  private readonly inner: ChatModel;

  constructor(inner: ChatModel) {
    this.inner = inner;
  }

  get model(): string {
    return this.inner.model;
  }

  get temperature(): number {
    return this.inner.temperature;
  }

  get contextLimit(): number | undefined {
    return this.inner.contextLimit;
  }

  get local(): boolean | undefined {
    return this.inner.local;
  }

  async chat(req: ChatRequest, opts?: { budget?: Budget }): Promise<ChatResponse> {
    const r = await this.inner.chat(req, opts);
    if (this.answers.length < MAX_ANSWERS) {
      this.answers.push({ purpose: req.purpose ?? 'chat', text: answerText(r), promptTokens: r.usage.promptTokens, completionTokens: r.usage.completionTokens, finishReason: r.finishReason });
    }
    return r;
  }
}
