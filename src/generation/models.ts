/**
 * Which models a repository's `.github/swt.yml` may pick (`generation.model`): the operator's
 * allowlist, SWT_LLM_MODELS (comma-separated), by default the operator's own model only
 * (SWT_LLM_MODEL or OPENAI_MODEL, else gpt-4o-mini). Each must also have a price. Pure.
 */
import { envValues, type Environment } from '../settings/index.js';
import { buildPriceTable, unpricedModelError, type PriceTable } from './prices.js';

const DEFAULT_MODEL = 'gpt-4o-mini';

export function operatorModel(source?: Environment): string {
  const e = envValues(source);
  return e.SWT_LLM_MODEL ?? e.OPENAI_MODEL ?? DEFAULT_MODEL;
}

export function allowedModelsFrom(source?: Environment): string[] {
  const listed = envValues(source).SWT_LLM_MODELS;
  return listed.length ? listed : [operatorModel(source)];
}

/** Why a repository's choice of model is refused, or undefined when it may be used. */
export function modelRefusal(model: string, source?: Environment, prices?: PriceTable): string | undefined {
  const allowed = allowedModelsFrom(source);
  if (!allowed.includes(model.trim())) {
    return `generation.model "${model}" is not one this swt-bot allows (${allowed.join(', ')}); its operator can add it to SWT_LLM_MODELS`;
  }
  return unpricedModelError(model, prices ?? { ...buildPriceTable(), ...(envValues(source).SWT_LLM_PRICES ?? {}) });
}
