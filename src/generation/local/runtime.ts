/**
 * One load of a model file per process, shared by every client and job (a lazy singleton per
 * file), and its pool of contexts: at most `contexts` generations at once, each on its own context
 * sequence. A client gets back the sequence it used last when it is free, so the prefix its
 * previous turn evaluated (an agent's growing conversation) is reused, not evaluated again.
 */
import type { GgufInsights, LlamaChat, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import type { Environment } from '../../settings/index.js';
import { errorLine, SwtError } from '../../util/errors.js';
import { pullHint, type LocalModelSpec } from './catalogue.js';
import type { LocalSettings } from './settings.js';
import { checkModelFile, modelDir } from './store.js';

export interface Slot {
  chat: LlamaChat;
  sequence: LlamaContextSequence;
  /** The client that used it last: its prefix is what the sequence holds. */
  owner?: symbol;
  busy: boolean;
}

export class LoadedModel {
  private readonly slots: Slot[] = [];
  private readonly waiting: Array<() => void> = [];
  private creating = 0;

  readonly spec: LocalModelSpec;
  readonly model: LlamaModel;
  readonly settings: LocalSettings;
  /** How many contexts the memory limit leaves room for (≤ settings.contexts). */
  readonly contexts: number;
  readonly loadMs: number;

  constructor(spec: LocalModelSpec, model: LlamaModel, settings: LocalSettings, contexts: number, loadMs: number) {
    this.spec = spec;
    this.model = model;
    this.settings = settings;
    this.contexts = contexts;
    this.loadMs = loadMs;
  }

  /** A free slot, preferring the one `owner` used last; waits when all are busy. */
  async acquire(owner: symbol): Promise<Slot> {
    for (;;) {
      const free = this.slots.filter((s) => !s.busy);
      const slot = free.find((s) => s.owner === owner) ?? (this.slots.length + this.creating < this.contexts ? undefined : free[0]);
      if (slot) {
        slot.busy = true;
        slot.owner = owner;
        return slot;
      }
      if (this.slots.length + this.creating < this.contexts) return this.create(owner);
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.();
  }

  private async create(owner: symbol): Promise<Slot> {
    this.creating += 1;
    try {
      const { LlamaChat } = await import('node-llama-cpp');
      const context = await this.model.createContext({ contextSize: this.settings.contextTokens, threads: this.settings.threads, sequences: 1 });
      const sequence = context.getSequence();
      const slot: Slot = { chat: new LlamaChat({ contextSequence: sequence }), sequence, owner, busy: true };
      this.slots.push(slot);
      return slot;
    } finally {
      this.creating -= 1;
    }
  }

  async dispose(): Promise<void> {
    for (const s of this.slots) await s.chat.dispose();
    await this.model.dispose();
  }
}

const loads = new Map<string, Promise<LoadedModel>>();

/** The model file loaded once per process; the first caller's settings size its pool. */
export function loadLocalModel(spec: LocalModelSpec, settings: LocalSettings, env?: Environment): Promise<LoadedModel> {
  const dir = settings.dir ?? modelDir(env);
  const key = `${dir}/${spec.file}`;
  let p = loads.get(key);
  if (!p) {
    p = load(spec, settings, dir).catch((e) => {
      loads.delete(key);
      throw e;
    });
    loads.set(key, p);
  }
  return p;
}

async function load(spec: LocalModelSpec, settings: LocalSettings, dir: string): Promise<LoadedModel> {
  const started = Date.now();
  const modelPath = await checkModelFile(spec, dir);
  const { getLlama, GgufInsights, LlamaLogLevel, readGgufFileInfo } = await import('node-llama-cpp');
  let llama;
  try {
    // Prebuilt CPU binaries only: nothing is downloaded or compiled at run time.
    llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, maxThreads: settings.threads });
  } catch (e) {
    throw new SwtError('LLM_ERROR', `could not start node-llama-cpp for ${spec.id}: ${errorLine(e, 300)}`, { hint: 'node-llama-cpp needs its prebuilt binary for this platform (npm ci installs it)' });
  }
  // Sized from the file's header, before a byte of the model is loaded.
  const contexts = await contextsThatFit(spec, await GgufInsights.from(await readGgufFileInfo(modelPath), llama), settings);
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  } catch (e) {
    throw new SwtError('LLM_ERROR', `could not load the local model ${spec.id}: ${errorLine(e, 300)}`, { hint: pullHint(spec) });
  }
  return new LoadedModel(spec, model, settings, contexts, Date.now() - started);
}

/** Contexts the memory limit leaves room for, beside the model itself; a clear error when not one fits. */
async function contextsThatFit(spec: LocalModelSpec, insights: GgufInsights, s: LocalSettings): Promise<number> {
  if (s.maxMemoryMb === undefined) return s.contexts;
  const perContext = (await insights.estimateContextResourceRequirementsV2({ contextSize: s.contextTokens, modelGpuLayers: 0, sequences: 1 })).cpuRam;
  const mb = (n: number) => Math.ceil(n / 2 ** 20);
  const fit = Math.floor((s.maxMemoryMb * 2 ** 20 - spec.bytes) / perContext);
  if (fit < 1) {
    throw new SwtError('BAD_CONFIG', `the local model ${spec.id} needs about ${mb(spec.bytes + perContext)} MB (model ${mb(spec.bytes)} MB + one context of ${s.contextTokens} tokens ${mb(perContext)} MB), over SWT_LOCAL_MAX_MEMORY_MB=${s.maxMemoryMb}`, {
      hint: 'raise SWT_LOCAL_MAX_MEMORY_MB, lower SWT_LOCAL_CONTEXT_TOKENS, or pick a smaller model',
    });
  }
  return Math.min(s.contexts, fit);
}

/** Frees every loaded model (tests, and a server shutting down). */
export async function disposeLocalModels(): Promise<void> {
  const all = [...loads.values()];
  loads.clear();
  for (const p of all) await (await p.catch(() => undefined))?.dispose();
}
