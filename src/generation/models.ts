/**
 * Which models a repository's `.github/swt.yml` may pick (`generation.model`): the operator's
 * allowlist, SWT_LLM_MODELS (comma-separated), by default the operator's own model only
 * (SWT_LLM_MODEL or OPENAI_MODEL, else gpt-4o-mini). Each must also have a price. Pure.
 */
import { buildPriceTable, unpricedModelError, type PriceTable } from './prices.js';

const DEFAULT_MODEL = 'gpt-4o-mini';

export function operatorModel(env: NodeJS.ProcessEnv): string {
  return env.SWT_LLM_MODEL?.trim() || env.OPENAI_MODEL?.trim() || DEFAULT_MODEL;
}

export function allowedModelsFrom(env: NodeJS.ProcessEnv): string[] {
  const listed = (env.SWT_LLM_MODELS ?? '').split(',').map((m) => m.trim()).filter(Boolean);
  return listed.length ? listed : [operatorModel(env)];
}

/** Why a repository's choice of model is refused, or undefined when it may be used. */
export function modelRefusal(model: string, env: NodeJS.ProcessEnv, prices?: PriceTable): string | undefined {
  const allowed = allowedModelsFrom(env);
  if (!allowed.includes(model.trim())) {
    return `generation.model "${model}" is not one this swt-bot allows (${allowed.join(', ')}); its operator can add it to SWT_LLM_MODELS`;
  }
  let table = prices;
  if (!table) {
    try {
      table = buildPriceTable(env.SWT_LLM_PRICES?.trim() || undefined);
    } catch {
      return 'SWT_LLM_PRICES is not a valid price table';
    }
  }
  return unpricedModelError(model, table);
}
