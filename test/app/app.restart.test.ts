/**
 * The App as `npm start` runs it (configured by the environment as Probot's `run` is: APP_ID,
 * PRIVATE_KEY, WEBHOOK_SECRET, WEBHOOK_PATH, WEBHOOK_PROXY_URL, GHE_HOST, GHE_PROTOCOL=http, PORT,
 * SWT_DATA_DIR): Probot's setup flow without credentials, a clear exit without a webhook secret,
 * webhooks through a smee channel, and a kill in the middle of a check: the job resumes and
 * completes once.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { containersOfOurs, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { tsChildRunner, type TsChild } from '../helpers/tsChild.js';
import { fixtureOnFakeGitHub, OWNER, REPO, WEBHOOK_SECRET, type FixtureGitHub } from '../helpers/fixtureGitHub.js';
import { appKey, sign } from '../helpers/webhooks.js';

let fx: FixtureGitHub;
let dataDir: string;
const runner = tsChildRunner();
const children: TsChild[] = [];

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

function startAppProcess(port: number, extra: NodeJS.ProcessEnv = {}): TsChild {
  const env: NodeJS.ProcessEnv = {
    APP_ID: String(fx.fake.appId),
    PRIVATE_KEY: appKey(),
    WEBHOOK_SECRET,
    GHE_HOST: fx.fake.host,
    GHE_PROTOCOL: 'http',
    HOST: '127.0.0.1',
    PORT: String(port),
    SWT_DATA_DIR: dataDir,
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    ...extra,
  };
  const child = runner.start(`app-${children.length}`, `import ${JSON.stringify(pathToFileURL(resolve('src/app/index.ts')).href)};\n`, [], env);
  children.push(child);
  return child;
}

async function waitHealthy(url: string, child: TsChild): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.child.exitCode !== null) throw new Error(`the App exited: ${child.output()}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the App never answered /healthz: ${child.output()}`);
}

beforeAll(async () => {
  // No model: the snippet strategy writes the test when the check finds none stored.
  fx = await fixtureOnFakeGitHub('snippet');
  dataDir = mkdtempSync(join(tmpdir(), `swt-restart-${process.pid}-`));
});

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  await fx?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
  runner.cleanup();
  await removeEnvImagesBuiltFrom([fx.base]);
});

describe('npm start', () => {
  it('with no credentials: serves Probot\'s setup flow, which registers the App from app.yml', async () => {
    const port = await freePort();
    const child = runner.start(`setup-${children.length}`, `import ${JSON.stringify(pathToFileURL(resolve('src/app/index.ts')).href)};\n`, [], {
      APP_ID: '',
      PRIVATE_KEY: '',
      PRIVATE_KEY_PATH: '',
      HOST: '127.0.0.1',
      PORT: String(port),
      SWT_DATA_DIR: dataDir,
      // No smee.io channel from a test: the network is loopback only.
      NO_SMEE_SETUP: 'true',
    });
    children.push(child);
    let html = '';
    for (let i = 0; i < 300 && !html; i++) {
      html = await fetch(`http://127.0.0.1:${port}/probot`).then(
        (r) => (r.ok ? r.text() : ''),
        () => '',
      );
      if (!html) await new Promise((r) => setTimeout(r, 100));
    }
    expect(html).toContain('Register GitHub App');
    const manifest = JSON.parse(/id="manifest" value='([^']+)'/.exec(html)![1]!);
    expect(manifest).toMatchObject({ name: 'swt-bot', default_events: ['issues', 'issue_comment', 'pull_request', 'check_run'], default_permissions: { checks: 'write', contents: 'read' } });
    child.child.kill('SIGTERM');
    await child.exited;
  });
});

describe('npm start with credentials', () => {
  it('without WEBHOOK_SECRET: exits 2 with one line that names it, and listens nowhere', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), `swt-nosecret-${process.pid}-`));
    try {
      const child = startAppProcess(port, { WEBHOOK_SECRET: '', SWT_DATA_DIR: dir });
      const exit = await child.exited;
      expect(exit.code).toBe(2);
      expect(child.output()).toContain('swt-bot: error: the App receives webhooks only with its webhook secret: set WEBHOOK_SECRET');
      expect(await fetch(`http://127.0.0.1:${port}/healthz`).then(() => 'answered', () => 'refused')).toBe('refused');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('WEBHOOK_PROXY_URL: a delivery on the smee channel (a loopback event stream of the test) reaches WEBHOOK_PATH and is handled', async () => {
    // The channel: an event stream, as smee.io serves one, that the test writes deliveries to.
    const streams: ServerResponse[] = [];
    const channel = createHttpServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(': ready\n\n');
      streams.push(res);
    });
    await new Promise<void>((r) => channel.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), `swt-smee-${process.pid}-`));
    try {
      const port = await freePort();
      const child = startAppProcess(port, { SWT_DATA_DIR: dir, WEBHOOK_PATH: '/swt-hooks', WEBHOOK_PROXY_URL: `http://127.0.0.1:${(channel.address() as { port: number }).port}/channel` });
      await waitHealthy(`http://127.0.0.1:${port}`, child);
      for (let i = 0; i < 100 && streams.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(streams).toHaveLength(1);
      const issue = fx.fake.addIssue(OWNER, REPO, { title: 'How do I use it?', body: 'A question.' });
      const body = fx.fake.commentPayload(OWNER, REPO, issue.number, '/swt help', { login: 'maintainer', type: 'User' }, 'OWNER');
      const message = { 'x-github-event': 'issue_comment', 'x-github-delivery': 'smee-delivery-1', 'x-hub-signature-256': sign(JSON.stringify(body), WEBHOOK_SECRET), body, query: {} };
      streams[0]!.write(`data: ${JSON.stringify(message)}\n\n`);
      const comments = () => fx.fake.issue(OWNER, REPO, issue.number).comments.map((c) => c.body);
      for (let i = 0; i < 300 && comments().length < 2; i++) await new Promise((r) => setTimeout(r, 100));
      // The maintainer's command, then the App's help.
      expect(comments()).toEqual(['/swt help', expect.stringContaining('/swt reproduce')]);
      // The default path is not the App's webhook path any more.
      expect((await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, { method: 'POST' })).status).toBe(404);
      child.child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    } finally {
      for (const s of streams) s.end();
      channel.closeAllConnections();
      await new Promise((r) => channel.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kill and restart', () => {
  it('a check cut by SIGKILL resumes after a restart and completes once; the dead process leaves no container', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    fx.fake.appUrl = url;
    const first = startAppProcess(port);
    await waitHealthy(url, first);

    const issue = fx.fake.addIssue(OWNER, REPO, { title: fx.fx.issue.title, body: fx.fx.issue.body });
    const pr = await fx.fake.addPull(OWNER, REPO, { title: 'Parse combined units', body: `Closes #${issue.number}`, user: { login: 'alice', type: 'User' }, headSha: fx.goodFix, headRef: 'fix' });
    const r = await fx.fake.deliver('pull_request', await fx.fake.pullPayload(OWNER, REPO, pr.number, 'opened'));
    expect(r.status).toBe(200);

    // Mid-run: the first process has a test container running.
    const deadline = Date.now() + 5 * 60_000;
    while (containersOfOurs(first.child.pid!) === '') {
      if (Date.now() > deadline) throw new Error(`no container started: ${first.output()}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const run = () => fx.fake.checkRuns(OWNER, REPO).find((c) => c.head_sha === fx.goodFix)!;
    expect(run().status).toBe('in_progress');

    const second = startAppProcess(port);
    await waitHealthy(url, second);
    while (run().status !== 'completed') {
      if (Date.now() > deadline + 5 * 60_000) throw new Error(`the check never completed: ${second.output()}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(run()).toMatchObject({ conclusion: 'success', output: { title: 'The fix passes the reproducing tests' } });
    expect(run().history.filter((h) => h.status === 'completed')).toHaveLength(1);
    expect(fx.fake.checkRuns(OWNER, REPO)).toHaveLength(1);
    // Give a late duplicate every chance to show, then look again.
    await new Promise((res) => setTimeout(res, 1500));
    expect(fx.fake.issue(OWNER, REPO, pr.number).comments.filter((c) => c.body.startsWith('<!-- swt-bot:validation -->'))).toHaveLength(1);
    expect(run().history.filter((h) => h.status === 'completed')).toHaveLength(1);

    const db = new Database(join(dataDir, 'swt.db'), { readonly: true });
    try {
      expect(db.prepare(`SELECT kind, state, attempts FROM jobs WHERE kind = 'validate'`).all()).toEqual([{ kind: 'validate', state: 'done', attempts: 1 }]);
    } finally {
      db.close();
    }
    // The restarted process removed what the killed one left running.
    expect(containersOfOurs(first.child.pid!)).toBe('');
    second.child.kill('SIGTERM');
    await second.exited;
    expect(containersOfOurs(second.child.pid!)).toBe('');
  });
});
