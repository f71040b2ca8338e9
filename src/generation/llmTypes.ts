/** Provider-neutral chat types: what strategies speak; llmClient maps them to the wire. */

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The arguments exactly as the model wrote them. */
  rawArguments: string;
  /** Set when the arguments could not be parsed; the agent reports it back to the model. */
  parseError?: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  temperature?: number;
  maxTokens?: number;
  /** Sampling seed for this call (several samples at temperature > 0 each take their own, so a run repeats); default the model's. */
  seed?: number;
  /** For logs and accounting: which strategy asked, and why. */
  purpose?: string;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  /** True when the server sent no usage and tokens were estimated from text length. */
  estimated: boolean;
  /** Of promptTokens, those a local model reused from its previous turn instead of evaluating again. */
  cachedPromptTokens?: number;
}

export interface ChatResponse {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: ChatUsage;
  costUsd: number;
  /** True when the tool calls were read from text (no native tool calling). */
  viaTextProtocol: boolean;
  model: string;
}

/** What a strategy needs from a model; LlmClient implements it over the openai SDK, LocalLlm in-process. */
export interface ChatModel {
  readonly model: string;
  readonly temperature: number;
  /** Prompt plus answer, in tokens, when the model has a small context (a local model): prompts are sized to it. */
  readonly contextLimit?: number;
  /** True for a model that runs in this process (`local:<id>`). */
  readonly local?: boolean;
  chat(req: ChatRequest, opts?: { budget?: import('./budget.js').Budget }): Promise<ChatResponse>;
}
