/**
 * The model a repository's config picks, and what it costs: an unpriced model (one the price
 * table would have matched by prefix, or not at all) and one the operator did not allow are
 * refused before any call reaches the LLM endpoint (a scripted OpenAI-compatible server on
 * 127.0.0.1 that records every request). The App runs against the loopback fake GitHub.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { fixtureConfig, publishFixture, type PublishedFixture } from '../../src/demo/appDemo.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import { createLlmFromEnv, LlmClient, llmSettingsFrom } from '../../src/generation/index.js';
import { JOB } from '../../src/jobs/payloads.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { isSwtError, SwtError } from '../../src/util/errors.js';
import { appKey } from '../helpers/webhooks.js';
import { msg, startScriptedLlm, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const SECRET = 'redteam-model-webhook-secret';
const OWNER = 'acme';

let llm: ScriptedLlm;
let fake: FakeGitHub;
const published: PublishedFixture[] = [];
let app: RunningApp | undefined;
let dataDir: string | undefined;
let asked = 0;
const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };

const tripwire: Sandbox = {
  ensureEnvironment: async () => {
    asked++;
    throw new SwtError('BAD_INPUT', 'the red-team sandbox runs nothing');
  },
  run: async () => {
    asked++;
    throw new SwtError('BAD_INPUT', 'the red-team sandbox runs nothing');
  },
  openSession: async () => {
    asked++;
    throw new SwtError('BAD_INPUT', 'the red-team sandbox runs nothing');
  },
};

beforeAll(async () => {
  // A model that would answer anything: any request that reaches it is a failure of these tests.
  llm = await startScriptedLlm(() => msg('no test here'));
  process.env.OPENAI_BASE_URL = llm.baseURL;
  process.env.OPENAI_API_KEY = 'sk-redteam-model-key';
  fake = await new FakeGitHub({ webhookSecret: SECRET, appPrivateKey: appKey() }).start();
  for (const [repo, model] of [
    ['picks-gpt-4', 'gpt-4'],
    ['picks-o1-pro', 'o1-pro'],
  ] as const) {
    published.push(await publishFixture(fake, 'py-durations', { owner: OWNER, repo, config: (fx) => fixtureConfig(fx, { generation: { strategy: 'zero-shot-plus', model } }) }));
  }
});

afterAll(async () => {
  await fake?.close();
  for (const p of published) await p.cleanup();
  await llm?.close();
  for (const [k, v] of [['OPENAI_BASE_URL', saved.url], ['OPENAI_API_KEY', saved.key]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

afterEach(async () => {
  await app?.stop();
  app = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

async function start(env: NodeJS.ProcessEnv = {}): Promise<RunningApp> {
  asked = 0;
  dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-model-${process.pid}-`));
  app = await startApp({
    appId: fake.appId,
    privateKey: appKey(),
    secret: SECRET,
    dataDir,
    env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http', SWT_GITHUB_THROTTLE: 'off', ...env },
    sandbox: tripwire,
    progressIntervalMs: 200,
  });
  fake.appUrl = app.url;
  return app;
}

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isSwtError(e, 'BAD_CONFIG')) return e.message;
    throw e;
  }
  throw new Error('not refused');
}

describe('the model and its price', () => {
  it('attack: a model the price table does not know (o1-pro, once priced as o1 by its prefix; a fine-tune) is refused before any LLM call', async () => {
    expect(refusal(() => new LlmClient(llmSettingsFrom({}, { baseURL: llm.baseURL, apiKey: 'sk-x', model: 'o1-pro' })))).toMatch(/^no price for model "o1-pro": swt-bot refuses a model it cannot price .*SWT_LLM_PRICES/);
    expect(refusal(() => createLlmFromEnv({ OPENAI_BASE_URL: llm.baseURL, SWT_LLM_MODEL: 'ft:gpt-4o-mini:acme::x1' }))).toMatch(/^no price for model "ft:gpt-4o-mini:acme::x1"/);
    // A dated snapshot of a priced model keeps its price; a priced one is accepted.
    expect(new LlmClient(llmSettingsFrom({}, { baseURL: llm.baseURL, model: 'gpt-4o-mini-2024-07-18' })).model).toBe('gpt-4o-mini-2024-07-18');
    expect(llm.requests).toEqual([]);
  });

  it("attack: a repository's config picks a model the operator did not allow: refused with a clear comment, before any LLM call", async () => {
    await start({ SWT_LLM_MODEL: 'gpt-4o-mini' });
    const repo = 'picks-gpt-4';
    const issue = fake.addIssue(OWNER, repo, { title: 'parse_duration("1h30m") returns 0', body: 'Combined units are ignored.' });
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, repo, issue.number, 'opened'))).status).toBe(200);
    // Through a pull request too: its linked issue has no test yet, so one would be written with that model.
    const other = fake.addIssue(OWNER, repo, { title: 'parse_duration("2h15m") returns 0', body: 'Combined units are ignored.' });
    const fx = published.find((p) => p.repo === repo)!;
    const pr = await fake.addPull(OWNER, repo, { title: 'Fix', body: `Fixes #${other.number}`, headSha: fx.goodFix, headRef: 'fix' });
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, repo, pr.number, 'opened'))).status).toBe(200);
    await app!.services.queue.drain(5 * 60_000);

    const comments = fake.issue(OWNER, repo, issue.number).comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('generation.model "gpt-4" is not one this swt-bot allows (gpt-4o-mini); its operator can add it to SWT_LLM_MODELS');
    expect(await app!.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
    const run = fake.checkRuns(OWNER, repo).find((c) => c.head_sha === fx.goodFix)!;
    expect(run.status).toBe('completed');
    expect(run.output?.summary).toContain('generation.model "gpt-4" is not one this swt-bot allows');
    expect(llm.requests).toEqual([]);
    expect(asked).toBe(0);
  });

  it('attack: a model on the allowlist but without a price is refused all the same', async () => {
    await start({ SWT_LLM_MODELS: 'gpt-4o-mini, o1-pro' });
    const repo = 'picks-o1-pro';
    const issue = fake.addIssue(OWNER, repo, { title: 'parse_duration("3h") returns 0', body: 'Hours are ignored.' });
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, repo, issue.number, 'opened'))).status).toBe(200);
    await app!.services.queue.drain(5 * 60_000);
    const comments = fake.issue(OWNER, repo, issue.number).comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('no price for model "o1-pro"');
    expect(await app!.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
    expect(llm.requests).toEqual([]);
  });
});
