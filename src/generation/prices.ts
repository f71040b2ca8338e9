import type { z } from 'zod';
import { modelPriceSchema, priceTableSchema } from '../settings/index.js';
import { isLocalModel } from './local/catalogue.js';

const LOCAL_PRICE: ModelPrice = { input: 0, output: 0 };

/** US dollars per million tokens. */
export type ModelPrice = z.infer<typeof modelPriceSchema>;

export type PriceTable = Record<string, ModelPrice>;

/** The shape SWT_LLM_PRICES is parsed with (settings/), and the `prices` setting. */
export { modelPriceSchema, priceTableSchema };

/**
 * List prices at the time of writing, per million tokens. They change: override them with
 * `SWT_LLM_PRICES` (JSON, merged over these) or the `prices` setting. A `default` entry, when
 * present, prices models that match nothing else (e.g. a self-hosted model: `{"default":{"input":0,"output":0}}`).
 */
export const DEFAULT_PRICES: PriceTable = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-4-1106-preview': { input: 10, output: 30 },
  'gpt-4': { input: 30, output: 60 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  o1: { input: 15, output: 60 },
  'o3-mini': { input: 1.1, output: 4.4 },
  o3: { input: 2, output: 8 },
  'o4-mini': { input: 1.1, output: 4.4 },
};

/** A dated snapshot of a priced model (`-2024-08-06`, `-0613`): the same model, the same price. */
const SNAPSHOT_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{4})$/;

/**
 * The price of a model: exact name first, then a table key of which the name is a dated snapshot
 * (`gpt-4o-2024-08-06` → `gpt-4o`, `gpt-4o-mini-2024-07-18` → `gpt-4o-mini`), then `default`.
 * Any other suffix is another model (`o1-pro` is not `o1`, and costs ten times as much).
 * A `local:` model is free. Undefined when nothing matches: such a model is refused (see LlmClient), never counted as free.
 */
export function priceFor(model: string, table: PriceTable = DEFAULT_PRICES): ModelPrice | undefined {
  const name = model.trim();
  if (table[name]) return table[name];
  // A model run in this process costs no dollars (its cost is time, which the budget bounds).
  if (isLocalModel(name)) return LOCAL_PRICE;
  // Azure / proxies sometimes prefix the provider: "openai/gpt-4o".
  const bare = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  if (table[bare]) return table[bare];
  for (const key of Object.keys(table)) {
    if (key !== 'default' && bare.startsWith(key) && SNAPSHOT_SUFFIX.test(bare.slice(key.length))) return table[key];
  }
  return table.default;
}

/** Why swt-bot will not use this model, or undefined: it must have a price, or no dollar budget holds. */
export function unpricedModelError(model: string, table: PriceTable): string | undefined {
  if (priceFor(model, table)) return undefined;
  return `no price for model "${model}": swt-bot refuses a model it cannot price (the dollar budget would not hold); add it to SWT_LLM_PRICES, e.g. {"${model}":{"input":<$ per million input tokens>,"output":<$ per million output tokens>}}`;
}

export function costOf(price: ModelPrice | undefined, promptTokens: number, completionTokens: number): number {
  if (!price) return 0;
  return (promptTokens * price.input + completionTokens * price.output) / 1_000_000;
}

/** Merge user prices (from JSON text or an object) over the defaults. Throws a zod error when malformed. */
export function buildPriceTable(overrides?: string | PriceTable): PriceTable {
  if (overrides === undefined || overrides === '') return { ...DEFAULT_PRICES };
  const parsed = typeof overrides === 'string' ? JSON.parse(overrides) : overrides;
  return { ...DEFAULT_PRICES, ...priceTableSchema.parse(parsed) };
}
