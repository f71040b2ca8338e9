/**
 * No secret leaks: fake secrets are planted in process.env; the key is used to authenticate (and
 * only there), and neither it nor another secret-named value appears in any prompt sent over HTTP,
 * in tool outputs, in the sandbox's environment, in the result or in the logs, even when the issue
 * and the repository contain the value.
 */
import { Writable } from 'node:stream';
import { reproduce, LlmClient, llmSettingsFrom } from '../../src/generation/index.js';
import { createLogger } from '../../src/util/logger.js';
import { createLocalWorkbench, writeRepo, type LocalWorkbench } from '../helpers/localWorkbench.js';
import { lastMessage, startScriptedLlm, toolCall, msg, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const FAKE_KEY = 'sk-fake-PLANTED-key-0123456789abcdef';
const FAKE_TOKEN = 'tok-PLANTED-github-987654321';

describe('no secret leaks', () => {
  let repo: { dir: string; cleanup: () => Promise<void> };
  let wb: LocalWorkbench;
  let server: ScriptedLlm | undefined;
  const saved: Record<string, string | undefined> = {};
  let logText = '';
  let stderrText = '';
  let restoreStderr: () => void;

  beforeAll(async () => {
    for (const k of ['OPENAI_API_KEY', 'SWT_PLANTED_TOKEN', 'OPENAI_BASE_URL']) saved[k] = process.env[k];
    process.env.OPENAI_API_KEY = FAKE_KEY;
    process.env.SWT_PLANTED_TOKEN = FAKE_TOKEN;
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
      stderrText += String(chunk);
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    restoreStderr = () => {
      process.stderr.write = write;
    };
    repo = await writeRepo({
      'pyproject.toml': '[project]\nname = "vault"\nversion = "0.1.0"\n',
      'vault/__init__.py': '',
      'vault/config.py': `# deployment settings\nAPI_TOKEN = "${FAKE_TOKEN}"\n\n\ndef token_length():\n    """Length of the configured token."""\n    return len(API_TOKEN) + 1\n`,
      'tests/test_config.py': 'from vault.config import token_length\n\n\ndef test_positive():\n    assert token_length() > 0\n',
    });
    wb = await createLocalWorkbench(repo.dir);
  });

  afterAll(async () => {
    restoreStderr();
    await wb.cleanup();
    await repo.cleanup();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const issue = {
    title: 'token_length is off by one',
    body: `With API_TOKEN = "${FAKE_TOKEN}" and my key ${FAKE_KEY} exported, token_length() returns one more than len(API_TOKEN), so this assertion fails:\n\`\`\`python\nfrom vault.config import token_length, API_TOKEN\nassert token_length() == len(API_TOKEN)\n\`\`\``,
  };

  function capturingLogger() {
    return createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk, _enc, cb) {
          logText += String(chunk);
          cb();
        },
      }),
    });
  }

  it('the agent: prompts, tool outputs, sandbox environment, result and logs hold no planted secret', async () => {
    const leakyTest = [
      'import os',
      'from vault.config import token_length, API_TOKEN',
      '',
      '',
      'def test_token_length_matches():',
      '    print("ENV", dict(os.environ))',
      '    print("TOKEN", API_TOKEN)',
      '    assert token_length() == len(API_TOKEN)',
      '',
    ].join('\n');
    server = await startScriptedLlm([
      toolCall('read_file', { path: 'vault/config.py' }),
      toolCall('grep', { pattern: 'tok-PLANTED' }),
      toolCall('write_file', { path: 'tests/test_issue_repro.py', content: leakyTest }),
      toolCall('run_tests', { files: ['tests/test_issue_repro.py'] }),
      toolCall('submit', {}),
    ]);
    const logger = capturingLogger();
    const llm = new LlmClient(llmSettingsFrom(process.env, { baseURL: server.baseURL, model: 'gpt-4o-mini' }), { logger });
    const r = await reproduce(wb, issue, { strategy: 'agent', llm, logger });
    expect(r.status).toBe('reproduced');

    // The key authenticated the calls…
    expect(server.requests.every((q) => q.headers.authorization === `Bearer ${FAKE_KEY}`)).toBe(true);
    // …and appears in no request body, nor does the other secret.
    for (const q of server.requests) {
      expect(q.raw).not.toContain(FAKE_KEY);
      expect(q.raw).not.toContain(FAKE_TOKEN);
    }
    // The redaction did happen where the values would have been.
    expect(server.requests[0].raw).toContain('[REDACTED]');
    expect(lastMessage(server.requests[1]).content).toContain('API_TOKEN = "[REDACTED]"');
    expect(lastMessage(server.requests[4]).content).toContain('TOKEN [REDACTED]');
    // The sandbox's environment never had them: the test printed os.environ.
    expect(lastMessage(server.requests[4]).content).toContain('ENV {');
    const session = await wb.openSession();
    const env = await session.exec('env');
    await session.close();
    expect(env.output).not.toContain(FAKE_KEY);
    expect(env.output).not.toContain(FAKE_TOKEN);
    expect(env.output).not.toMatch(/OPENAI_API_KEY|SWT_PLANTED_TOKEN/);
    // Nothing in the result or the logs.
    expect(JSON.stringify(r)).not.toContain(FAKE_KEY);
    expect(JSON.stringify(r)).not.toContain(FAKE_TOKEN);
    expect(logText.length).toBeGreaterThan(0);
    expect(logText).not.toContain(FAKE_KEY);
    expect(logText).not.toContain(FAKE_TOKEN);
    expect(stderrText).not.toContain(FAKE_KEY);
    expect(stderrText).not.toContain(FAKE_TOKEN);
  });

  it('zero-shot-plus and the LLM client: retrieved files, the issue and error messages are scrubbed', async () => {
    server = await startScriptedLlm([
      { kind: 'status', status: 429, body: { error: { message: `rate limited for key ${FAKE_KEY}` } }, headers: { 'retry-after-ms': '10' } },
      { kind: 'status', status: 400, body: { error: { message: `bad request from ${FAKE_KEY}` } } },
    ]);
    const logger = capturingLogger();
    const llm = new LlmClient(llmSettingsFrom(process.env, { baseURL: server.baseURL, model: 'gpt-4o-mini', maxRetries: 2, retryBaseDelayMs: 5 }), { logger });
    const r = await reproduce(wb, issue, { strategy: 'zero-shot-plus', llm, logger });
    expect(r.status).toBe('not-reproduced');
    expect(r.reason).toMatch(/the LLM failed: .*\(400\)/);
    expect(r.reason).not.toContain(FAKE_KEY);
    const prompt = server.requests[0].raw;
    expect(prompt).toContain('[start of vault/config.py]');
    expect(prompt).not.toContain(FAKE_TOKEN);
    expect(prompt).not.toContain(FAKE_KEY);
    expect(logText).not.toContain(FAKE_KEY);
    expect(stderrText).not.toContain(FAKE_KEY);
  });

  it('the snippet strategy needs no key and leaks nothing either', async () => {
    const r = await reproduce(wb, issue, { strategy: 'snippet', llm: null, logger: capturingLogger() });
    expect(r.status).toBe('reproduced');
    expect(JSON.stringify(r)).not.toContain(FAKE_TOKEN);
    expect(JSON.stringify(r)).not.toContain(FAKE_KEY);
    void msg;
  });
});
