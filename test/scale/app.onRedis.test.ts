/**
 * The App at scale, end to end: a web process (`npm start`'s entry with SWT_ROLE=web) and a worker
 * process (`swt worker`), each with its own SWT_DATA_DIR, sharing nothing but a real redis-server
 * and the fake GitHub; real containers. An issue is reproduced, a bot's fix PR is checked, the PR
 * is merged and the stored test confirms it at the merge commit (live accuracy), `/swt stats`
 * answers with the table, Redis restarts in the middle without harm, and the status page renders
 * in headless Chromium behind its token; /metrics sums the worker's counters.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RedisStore } from '../../src/store/redisStore.js';
import { connectRedis } from '../../src/queue/redis.js';
import { containersOfOurs, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { artifactsDir, withPage } from '../helpers/browser.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redisServer.js';
import { tsChildRunner, type TsChild } from '../helpers/tsChild.js';
import { fixtureOnFakeGitHub, OWNER, REPO, WEBHOOK_SECRET, type FixtureGitHub } from '../helpers/fixtureGitHub.js';
import { appKey } from '../helpers/webhooks.js';

const TOKEN = 'status-token-for-the-scale-test';
const PREFIX = `e2e${process.pid}`;
let fx: FixtureGitHub;
let redis: RedisServer;
let webUrl: string;
let web: TsChild;
let worker: TsChild;
const dirs: string[] = [];
const runner = tsChildRunner();

const src = (f: string) => JSON.stringify(pathToFileURL(resolve(f)).href);

function commonEnv(dataDir: string): NodeJS.ProcessEnv {
  return {
    APP_ID: String(fx.fake.appId),
    PRIVATE_KEY: appKey(),
    WEBHOOK_SECRET,
    GHE_HOST: fx.fake.host,
    GHE_PROTOCOL: 'http',
    REDIS_URL: redis.url,
    SWT_REDIS_PREFIX: PREFIX,
    SWT_DATA_DIR: dataDir,
    SWT_GITHUB_THROTTLE: 'off',
    SWT_HEARTBEAT_SECONDS: '1',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
  };
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs = 8 * 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (web.child.exitCode !== null || worker.child.exitCode !== null) throw new Error(`a process exited while waiting for ${what}\nweb:\n${web.output().slice(-3000)}\nworker:\n${worker.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nworker:\n${worker.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  redis = await startRedis();
  fx = await fixtureOnFakeGitHub('snippet');
  const port = await freePort();
  webUrl = `http://127.0.0.1:${port}`;
  fx.fake.appUrl = webUrl;
  const [webDir, workerDir] = [mkdtempSync(join(tmpdir(), `swt-web-${process.pid}-`)), mkdtempSync(join(tmpdir(), `swt-worker-${process.pid}-`))];
  dirs.push(webDir, workerDir);
  web = runner.start('web', `import ${src('src/app/index.ts')};\n`, [], { ...commonEnv(webDir), SWT_ROLE: 'web', HOST: '127.0.0.1', PORT: String(port), SWT_STATUS_TOKEN: TOKEN });
  worker = runner.start('worker', `import { main } from ${src('src/cli/main.ts')};\nprocess.exitCode = await main(['node', 'swt', 'worker']);\n`, [], commonEnv(workerDir));
  await until('the web process', async () => (await fetch(`${webUrl}/healthz`).then((r) => r.ok, () => false)) || undefined, 60_000);
  await worker.waitFor('taking jobs from the Redis queue', 60_000);
});

afterAll(async () => {
  for (const c of [web, worker]) if (c && c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGTERM');
  await Promise.all([web?.exited, worker?.exited]);
  runner.cleanup();
  await fx?.cleanup();
  await redis?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await removeEnvImagesBuiltFrom([fx.base]);
  expect(containersOfOurs(worker.child.pid!)).toBe('');
});

describe('web and worker processes sharing only Redis', () => {
  it('reproduce, check, merge, confirm at the merge commit, /swt stats; the status page in Chromium; /metrics', async () => {
    const health = await (await fetch(`${webUrl}/healthz`)).json();
    expect(health).toMatchObject({ status: 'ok', role: 'web', engine: 'redis' });

    // 1. The issue: the worker reproduces it.
    const issue = fx.fake.addIssue(OWNER, REPO, { title: fx.fx.issue.title, body: fx.fx.issue.body });
    const opened = await fx.fake.deliver('issues', fx.fake.issuePayload(OWNER, REPO, issue.number, 'opened'), { id: 'scale-issue-opened' });
    expect(opened.status).toBe(200);
    await until('the reproduction', () => fx.fake.issue(OWNER, REPO, issue.number).labels.includes('reproduced') || undefined);
    expect(fx.fake.issue(OWNER, REPO, issue.number).comments.filter((c) => c.body.startsWith('<!-- swt-bot:reproduction -->'))).toHaveLength(1);
    // The worker's logs carry the delivery id of the webhook the web process received.
    expect(worker.output()).toMatch(/"delivery":"scale-issue-opened"[^\n]*"msg":"reproduction done"|"msg":"reproduction done"[^\n]*"delivery":"scale-issue-opened"/);

    // Redis restarts; the web process (Probot's throttling uses it too) and the worker carry on.
    await redis.restart(800);
    await until('the web process after the Redis restart', async () => (await fetch(`${webUrl}/healthz`).then((r) => r.ok, () => false)) || undefined, 60_000);

    // 2. A bot's fix PR: checked, success.
    const pr = await fx.fake.addPull(OWNER, REPO, { title: 'Parse combined units', body: `Closes #${issue.number}`, user: { login: 'fixer[bot]', type: 'Bot' }, headSha: fx.goodFix, headRef: 'fix' });
    expect((await fx.fake.deliver('pull_request', await fx.fake.pullPayload(OWNER, REPO, pr.number, 'opened'))).status).toBe(200);
    const run = await until('the check run', () => fx.fake.checkRuns(OWNER, REPO).find((c) => c.head_sha === fx.goodFix && c.status === 'completed'));
    expect(run.conclusion).toBe('success');

    // 3. Merged: the stored test runs at the merge commit, off the hot path.
    const mergeSha = await fx.fake.mergePull(OWNER, REPO, pr.number);
    expect((await fx.fake.deliver('pull_request', await fx.fake.pullPayload(OWNER, REPO, pr.number, 'closed'))).status).toBe(200);
    const conn = connectRedis(redis.url);
    try {
      const store = new RedisStore(conn, { prefix: PREFIX });
      const confirmation = await until('the confirmation', async () => (await store.confirmations({ owner: OWNER, repo: REPO }))[0]);
      expect(confirmation).toMatchObject({ issue: issue.number, pr: pr.number, mergeSha, strategy: 'snippet', confirmed: true, transitions: ['F2P'] });
      expect(await store.merges({ owner: OWNER, repo: REPO })).toMatchObject([{ pr: pr.number, gated: true, author: 'fixer[bot]', issues: [issue.number], strategy: 'snippet', followUp: null }]);
    } finally {
      conn.disconnect();
    }

    // 4. /swt stats answers with the table.
    const statsAsked = await fx.fake.deliver('issue_comment', fx.fake.commentPayload(OWNER, REPO, issue.number, '/swt stats', { login: 'maintainer', type: 'User' }, 'OWNER'));
    expect(statsAsked.status).toBe(200);
    const stats = await until('the stats comment', () => fx.fake.issue(OWNER, REPO, issue.number).comments.find((c) => c.body.startsWith('<!-- swt-bot:stats -->')));
    expect(stats.body).toContain(`### swt-bot on ${OWNER}/${REPO}: live accuracy`);
    expect(stats.body).toContain('| snippet | 1 / 1 | 100 % | 0 / 1 | 0 % | 1 | $0.000 |');

    // 5. The status page: refused without the token, rendered in Chromium with it.
    // The token in the URL is refused, the right one too: it would be in access logs.
    for (const bad of [`${webUrl}/swt`, `${webUrl}/swt?token=wrong`, `${webUrl}/swt?token=${TOKEN}`, `${webUrl}/metrics`]) expect((await fetch(bad)).status).toBe(401);
    expect((await fetch(`${webUrl}/swt`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    expect((await fetch(`${webUrl}/swt`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    // The worker's heartbeat (every second) has brought its counters, the confirmation's included.
    const metricsNow = () => fetch(`${webUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
    await until('the worker\'s counters', async () => (/^swt_job_phase_seconds_count\{kind="confirm",phase="confirm"\} 1$/m.test(await metricsNow()) ? true : undefined), 30_000);
    // The ranking refresh after the check is a delayed job (up to 5 s, rankWindowMs): the page is
    // read once the queue has settled, so every job has run.
    await until('a settled queue', async () => {
      const m = await metricsNow();
      return /^swt_jobs\{state="queued"\} 0$/m.test(m) && /^swt_jobs\{state="running"\} 0$/m.test(m) ? true : undefined;
    }, 60_000);
    const shot = join(await artifactsDir(), 'status-page.png');
    const { value, requested } = await withPage(`${webUrl}/swt`, async (page) => {
      await page.screenshot({ path: shot, fullPage: true });
      const text = (sel: string) => page.locator(sel).innerText();
      return {
        title: await page.title(),
        waiting: await text('[data-testid=count-waiting] b'),
        failed: await text('[data-testid=count-failed] b'),
        done: Number(await text('[data-testid=count-done] b')),
        jobs: await page.locator('#jobs tbody tr').evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => (td as unknown as { innerText: string }).innerText.trim()))),
        accuracy: await page.locator('#accuracy tbody tr').evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => (td as unknown as { innerText: string }).innerText.trim()))),
        workers: await page.locator('#workers tbody tr').count(),
      };
    }, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(value.title).toBe('swt-bot status');
    // Every job has run: its row says which one did not.
    expect(value.jobs.filter((r) => r[4] !== 'done')).toEqual([]);
    expect([value.waiting, value.failed]).toEqual(['0', '0']);
    expect(value.done).toBeGreaterThanOrEqual(6);
    // id, kind, repository, target, state, verdict, queued at, time, cost
    const byKind = (kind: string) => value.jobs.find((r) => r[1] === kind);
    expect(byKind('reproduce')).toEqual([expect.any(String), 'reproduce', `${OWNER}/${REPO}`, `#${issue.number}`, 'done', 'reproduced', expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/), expect.stringMatching(/\d+ s|min/), '$0.000']);
    expect(byKind('validate')).toEqual([expect.any(String), 'validate', `${OWNER}/${REPO}`, `#${pr.number}`, 'done', 'success', expect.any(String), expect.stringMatching(/\d+ s|min/), '$0.000']);
    expect(byKind('confirm')).toEqual([expect.any(String), 'confirm', `${OWNER}/${REPO}`, `#${issue.number} by #${pr.number}`, 'done', 'confirmed', expect.any(String), expect.stringMatching(/\d+ s|min/), '$0.000']);
    expect(value.accuracy).toEqual([[`${OWNER}/${REPO}`, 'snippet', '1 / 1', '100 %', '0 / 1', '0 %', '1', '$0.000']]);
    expect(value.workers).toBe(1);
    // Self-contained: the page asked for nothing but itself.
    expect(requested).toEqual([`${webUrl}/swt`]);

    // 6. /metrics: the web process's view of the queue and live accuracy, plus the worker's counters.
    const metrics = await metricsNow();
    expect(metrics).toMatch(/^swt_jobs\{state="failed"\} 0$/m);
    expect(metrics).toMatch(new RegExp(`^swt_live_s\\{repository="${OWNER}/${REPO}",strategy="snippet"\\} 1$`, 'm'));
    expect(metrics).toMatch(/^swt_job_runs_total\{kind="validate",outcome="done"\} 1$/m);
    expect(metrics).toMatch(/^swt_job_phase_seconds_count\{kind="confirm",phase="confirm"\} 1$/m);
    expect(metrics).toMatch(/^swt_job_phase_seconds_count\{kind="reproduce",phase="fetch"\} 1$/m);
    writeFileSync(join(await artifactsDir(), 'metrics.txt'), metrics);
  });
});
