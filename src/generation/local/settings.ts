/**
 * The operator's limits on the in-process model, part of the LLM settings (llmClient.ts):
 * SWT_MODEL_DIR (where pulled models live), SWT_LOCAL_THREADS (1: on a shared machine two threads
 * were measured slower than one), SWT_LOCAL_CONTEXT_TOKENS (4096: prompt + answer per call),
 * SWT_LOCAL_CONTEXTS (1: generations at once, each with its own KV cache) and
 * SWT_LOCAL_MAX_MEMORY_MB (unset: no limit; the model and its contexts must fit, or it is refused).
 */
import { z } from 'zod';

export const localSettingsSchema = z.object({
  dir: z.string().min(1).optional(),
  threads: z.number().int().min(1).max(64).default(1),
  contextTokens: z.number().int().min(512).max(32_768).default(4096),
  contexts: z.number().int().min(1).max(8).default(1),
  maxMemoryMb: z.number().int().positive().optional(),
});

export type LocalSettings = z.infer<typeof localSettingsSchema>;

/** Output tokens per call when nothing else caps them: ~4 minutes of the 1.5B model on one thread. */
export const LOCAL_DEFAULT_MAX_OUTPUT = 768;
/** A local call's own time limit when SWT_LLM_TIMEOUT_MS is not set (the wall-time budget still applies). */
export const LOCAL_DEFAULT_TIMEOUT_MS = 15 * 60_000;
