/**
 * The App on the loopback fake GitHub, as the App end-to-end tests run it: served on a port, the
 * fake GitHub as a GHES over http (GHE_HOST, GHE_PROTOCOL=http) delivering signed webhooks to it,
 * the scripted model as the OpenAI endpoint (OPENAI_BASE_URL and OPENAI_API_KEY set, and put back
 * at stop), real containers, and a data directory of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp, type StartAppOptions } from '../../src/app/app.js';
import { stringify } from 'yaml';
import { publishFixture, type PublishedFixture } from '../../src/demo/appDemo.js';
import { FakeGitHub as FakeGitHubServer, type FakeGitHub } from '../../src/demo/fakeGitHub.js';
import type { FixtureName } from '../../src/demo/fixtureRepos.js';
import type { CheckRun } from '../../src/demo/fakeGitHubModel.js';
import { containersOfOursOnceRetired, removeEnvImagesBuiltFrom } from './docker.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { appKey } from './webhooks.js';
import { msg, startScriptedLlm, type Responder, type ScriptedLlm, type ScriptStep } from './scriptedLlm.js';

export interface AppOnFakeGitHub {
  app: RunningApp;
  llm: ScriptedLlm;
  /** Resolves once nothing is queued or running. */
  settle(timeoutMs: number): Promise<void>;
  /** Stops the App and the model, removes the data directory, and puts the OpenAI variables back. */
  stop(): Promise<void>;
}

export async function startAppOnFakeGitHub(fake: FakeGitHub, o: { secret: string; model: ScriptStep[] | Responder; apiKey: string } & Partial<StartAppOptions>): Promise<AppOnFakeGitHub> {
  const { secret, model, apiKey, ...rest } = o;
  const saved = { OPENAI_BASE_URL: process.env.OPENAI_BASE_URL, OPENAI_API_KEY: process.env.OPENAI_API_KEY };
  const llm = await startScriptedLlm(model);
  process.env.OPENAI_BASE_URL = llm.baseURL;
  process.env.OPENAI_API_KEY = apiKey;
  const dataDir = mkdtempSync(join(tmpdir(), `swt-e2e-${process.pid}-`));
  const restore = async () => {
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  let app: RunningApp;
  try {
    app = await startApp({ appId: fake.appId, privateKey: appKey(), secret, dataDir, env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http' }, sandbox: createDockerSandbox(), ...rest });
  } catch (e) {
    await restore();
    throw e;
  }
  fake.appUrl = app.url;
  return {
    app,
    llm,
    settle: (timeoutMs) => app.services.queue.drain(timeoutMs),
    async stop() {
      await app.stop();
      await restore();
    },
  };
}

/** The App, the fake GitHub and the fixture an end-to-end file runs against (set before its tests). */
export interface FixtureApp {
  fake: FakeGitHub;
  published: PublishedFixture;
  app: RunningApp;
  llm: ScriptedLlm;
  /** Opens the fixture's issue, delivered and worked to the end; its number and the one comment posted on it. */
  openIssue(): Promise<{ number: number; comment: string }>;
  /** Opens a PR fixing the issue with the fixture's good fix, delivered and worked to the end; the one check run on its head. */
  openFixPull(issue: number, title: string): Promise<CheckRun>;
}

/**
 * An end-to-end file's set-up: the fake GitHub, `fixture` published with only the strategy
 * configured (image, install and runner come from its manifests), and the App with a scripted
 * model answering `answer`; all removed after the file, its environment images too.
 */
export function appOnPublishedFixture(fixture: FixtureName, o: { owner: string; repo: string; secret: string; apiKey: string; answer: string }): FixtureApp {
  const e = {} as FixtureApp;
  let on: AppOnFakeGitHub | undefined;
  const settle = () => e.app.services.queue.drain(20 * 60_000);
  e.openIssue = async () => {
    const issue = e.fake.addIssue(o.owner, o.repo, { title: e.published.fx.issue.title, body: e.published.fx.issue.body });
    expect((await e.fake.deliver('issues', e.fake.issuePayload(o.owner, o.repo, issue.number, 'opened'))).status).toBe(200);
    await settle();
    const [comment, ...more] = e.fake.issue(o.owner, o.repo, issue.number).comments;
    expect(more).toEqual([]);
    return { number: issue.number, comment: comment!.body };
  };
  e.openFixPull = async (issue, title) => {
    const pr = await e.fake.addPull(o.owner, o.repo, { title, body: `Fixes #${issue}`, user: { login: 'alice', type: 'User' }, headSha: e.published.goodFix, headRef: 'fix' });
    expect((await e.fake.deliver('pull_request', await e.fake.pullPayload(o.owner, o.repo, pr.number, 'opened'))).status).toBe(200);
    await settle();
    const runs = e.fake.checkRuns(o.owner, o.repo).filter((c) => c.head_sha === e.published.goodFix);
    expect(runs).toHaveLength(1);
    return runs[0]!;
  };
  beforeAll(async () => {
    e.fake = await new FakeGitHubServer({ webhookSecret: o.secret, appPrivateKey: appKey() }).start();
    e.published = await publishFixture(e.fake, fixture, { owner: o.owner, repo: o.repo, config: () => stringify({ generation: { strategy: 'zero-shot-plus' } }) });
    on = await startAppOnFakeGitHub(e.fake, { secret: o.secret, model: [msg(o.answer)], apiKey: o.apiKey, progressIntervalMs: 500 });
    ({ app: e.app, llm: e.llm } = on);
  });
  afterAll(async () => {
    await on?.stop();
    await e.published?.cleanup();
    await e.fake?.close();
    if (e.published) await removeEnvImagesBuiltFrom([e.published.base]);
    expect(containersOfOursOnceRetired()).toBe('');
  });
  return e;
}
