/** The LLM client's settings: their schema, read from the environment (and a config object), and as they may be logged. */
import { z } from 'zod';
import { envValues, type Environment } from '../settings/index.js';
import { SwtError } from '../util/errors.js';
import { buildPriceTable, priceTableSchema, type PriceTable } from './prices.js';
import { isLocalModel } from './local/catalogue.js';
import { localSettingsSchema } from './local/settings.js';

export const llmSettingsSchema = z.object({
  apiKey: z.string().min(1).optional(),
  baseURL: z.string().url().optional(),
  model: z.string().min(1).default('gpt-4o-mini'),
  temperature: z.number().min(0).max(2).default(0),
  timeoutMs: z.number().int().positive().default(120_000),
  maxRetries: z.number().int().min(0).max(10).default(3),
  retryBaseDelayMs: z.number().int().min(0).default(500),
  retryMaxDelayMs: z.number().int().min(0).default(20_000),
  toolMode: z.enum(['auto', 'native', 'text']).default('auto'),
  maxOutputTokens: z.number().int().positive().optional(),
  /** Azure's `api-version` query parameter, for deployment-style Azure endpoints. */
  apiVersion: z.string().min(1).optional(),
  prices: priceTableSchema.optional(),
  /** Sampling seed, for repeatable runs (sent as `seed`; the local model uses it too). */
  seed: z.number().int().optional(),
  /** The in-process model (`local:<id>`): see generation/local/. */
  local: localSettingsSchema,
});

export type LlmSettings = z.infer<typeof llmSettingsSchema> & { prices: PriceTable; /** SWT_LLM_TIMEOUT_MS (or the config's) was given, not defaulted. */ timeoutSet?: boolean };
export type LlmSettingsInput = z.input<typeof llmSettingsSchema>;

/**
 * Settings from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `SWT_LLM_MODEL` or `OPENAI_MODEL`,
 * `SWT_LLM_TEMPERATURE`, `SWT_LLM_TIMEOUT_MS`, `SWT_LLM_MAX_RETRIES`, `SWT_LLM_TOOL_MODE`,
 * `SWT_LLM_MAX_OUTPUT_TOKENS`, `OPENAI_API_VERSION`, `SWT_LLM_PRICES` as JSON, `SWT_LLM_SEED`; for a local
 * model SWT_MODEL_DIR and SWT_LOCAL_*, see local/settings.ts), overridden by `config`.
 */
export function llmSettingsFrom(source?: Environment, config: Partial<LlmSettingsInput> = {}): LlmSettings {
  const e = envValues(source);
  const raw: Record<string, unknown> = {
    apiKey: e.OPENAI_API_KEY,
    baseURL: e.OPENAI_BASE_URL,
    model: e.SWT_LLM_MODEL ?? e.OPENAI_MODEL,
    temperature: e.SWT_LLM_TEMPERATURE,
    timeoutMs: e.SWT_LLM_TIMEOUT_MS,
    maxRetries: e.SWT_LLM_MAX_RETRIES,
    toolMode: e.SWT_LLM_TOOL_MODE,
    maxOutputTokens: e.SWT_LLM_MAX_OUTPUT_TOKENS,
    apiVersion: e.OPENAI_API_VERSION,
    seed: e.SWT_LLM_SEED,
    local: {
      dir: e.SWT_MODEL_DIR,
      threads: e.SWT_LOCAL_THREADS,
      contextTokens: e.SWT_LOCAL_CONTEXT_TOKENS,
      contexts: e.SWT_LOCAL_CONTEXTS,
      maxMemoryMb: e.SWT_LOCAL_MAX_MEMORY_MB,
    },
  };
  for (const [k, v] of Object.entries(config)) if (v !== undefined) raw[k] = v;
  const r = llmSettingsSchema.safeParse(raw);
  if (!r.success) {
    // Never echo values: one of them is the key.
    throw new SwtError('BAD_CONFIG', `invalid LLM settings: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const prices = { ...buildPriceTable(), ...(e.SWT_LLM_PRICES ?? {}), ...(r.data.prices ?? {}) };
  // A local model's own time limit applies unless the operator set one.
  return { ...r.data, prices, timeoutSet: e.SWT_LLM_TIMEOUT_MS !== undefined || config.timeoutMs !== undefined };
}

/** An endpoint is configured when there is a key or a base URL (local servers often need no key), or the model is `local:`. */
export function isLlmConfigured(source?: Environment): boolean {
  const e = envValues(source);
  return Boolean(e.OPENAI_API_KEY || e.OPENAI_BASE_URL || isLocalModel(e.SWT_LLM_MODEL));
}

/** Settings as they may be logged: no key. */
export function describeSettings(s: LlmSettings): Record<string, unknown> {
  return { baseURL: s.baseURL ?? '(openai)', model: s.model, temperature: s.temperature, timeoutMs: s.timeoutMs, maxRetries: s.maxRetries, toolMode: s.toolMode, hasKey: Boolean(s.apiKey) };
}
