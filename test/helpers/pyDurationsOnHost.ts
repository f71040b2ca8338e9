/**
 * What the generation tests on the py-durations fixture share: the fixture at its base commit with a
 * host workbench running pytest, one scripted model per test (closed after it), a client for that
 * model, and the real fix as a model writes it.
 */
import { execFileSync } from 'node:child_process';
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { LlmClient, llmSettingsFrom } from '../../src/generation/index.js';
import { createLogger } from '../../src/util/logger.js';
import { createLocalWorkbench, type LocalWorkbench } from './localWorkbench.js';
import { startScriptedLlm, type Responder, type ScriptStep, type ScriptedLlm } from './scriptedLlm.js';

/** The fixture's fixed `parse_duration`, whole, as a model writes a fix. */
export const FIXED_PARSE_DURATION = `def parse_duration(text):
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    if text.isdigit():
        return int(text)
    total = 0
    number = ""
    for char in text:
        if char.isdigit():
            number += char
        elif char in UNITS and number:
            total += int(number) * UNITS[char]
            number = ""
        else:
            raise ValueError(f"invalid duration {text!r}")
    return total`;

/** A client of the scripted model: the real openai SDK, quick retries, no log. */
export function scriptedClient(server: ScriptedLlm, apiKey: string, extra: Record<string, unknown> = {}): LlmClient {
  return new LlmClient(llmSettingsFrom({}, { baseURL: server.baseURL, apiKey, model: 'gpt-4o-mini', retryBaseDelayMs: 5, ...extra }), { logger: createLogger({ level: 'silent' }) });
}

export interface PyDurationsOnHost {
  fx: FixtureRepo;
  wb: LocalWorkbench;
  /** This test's scripted model, closed after the test. */
  serve(script: ScriptStep[] | Responder): Promise<ScriptedLlm>;
}

/** Registers the describe block's hooks; `fx` and `wb` are set once its tests run. */
export function pyDurationsOnHost(): PyDurationsOnHost {
  let server: ScriptedLlm | undefined;
  const host = { serve: async (script: ScriptStep[] | Responder) => (server = await startScriptedLlm(script)) } as PyDurationsOnHost;
  beforeAll(async () => {
    host.fx = await createFixtureRepo('py-durations');
    execFileSync('git', ['checkout', '-q', host.fx.base], { cwd: host.fx.dir });
    host.wb = await createLocalWorkbench(host.fx.dir, { testCommand: 'python3 -m pytest -p no:cacheprovider {files}' });
  });
  afterAll(async () => {
    await host.wb.cleanup();
    await host.fx.cleanup();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return host;
}
