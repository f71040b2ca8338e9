/**
 * Faults of the Docker engine, on an engine of the test's own (never the machine's): restarted in
 * the middle of a PR check, and out of disk while an environment image is built. The App runs on
 * the Redis engine with the fake GitHub. Each fault ends with the job retried and right, or failed
 * with a clear message, and never a second comment or a second completed check.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { fixtureConfig, publishFixture } from '../../src/demo/appDemo.js';
import { JOB } from '../../src/jobs/payloads.js';
import { ensureEgressImage } from '../../src/sandbox/egress/egress.js';
import { connectDocker, createDockerSandbox, ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';
import { createLogger } from '../../src/util/logger.js';
import { canRunPrivateDockerd, startPrivateDockerd, type PrivateDockerd } from '../helpers/privateDockerd.js';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';
import { fixtureOnFakeGitHub, OWNER, REPO, WEBHOOK_SECRET, type FixtureGitHub } from '../helpers/fixtureGitHub.js';
import { appKey } from '../helpers/webhooks.js';

if (!canRunPrivateDockerd()) throw new Error('the Docker fault tests run a dockerd of their own: they need root and dockerd (scripts/dev installs docker.io)');

let redis: RedisServer;
let fx: FixtureGitHub;
let engine: PrivateDockerd;
let app: RunningApp;
let dataDir: string;
let baseImage: string;
let egressImage: string;

async function startOn(pd: PrivateDockerd, prefix: string, backoffMs = 500): Promise<RunningApp> {
  const a = await startApp({
    appId: fx.fake.appId,
    privateKey: appKey(),
    secret: WEBHOOK_SECRET,
    dataDir,
    redisUrl: redis.url,
    env: { ...process.env, GHE_HOST: fx.fake.host, GHE_PROTOCOL: 'http', SWT_GITHUB_THROTTLE: 'off', SWT_REDIS_PREFIX: prefix, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' },
    sandbox: createDockerSandbox({ docker: pd.docker }),
    generation: { strategy: 'snippet', llm: null },
    progressIntervalMs: 200,
    bull: { backoff: { baseMs: backoffMs } },
  });
  fx.fake.appUrl = a.url;
  return a;
}

beforeAll(async () => {
  redis = await startRedis();
  fx = await fixtureOnFakeGitHub('snippet');
  dataDir = mkdtempSync(join(tmpdir(), `swt-faults-${process.pid}-`));
  // The base image comes from the machine's engine (built offline there if missing).
  baseImage = await ensureBaseImage(fx.fx.instance.image, { docker: connectDocker(), caBundle: await loadCaBundle() });
  // So is the installs' egress proxy: the test's engine has no network to build it with.
  egressImage = await ensureEgressImage(connectDocker(), createLogger({ level: 'silent' }));
});

afterAll(async () => {
  await app?.stop();
  await engine?.stop();
  await fx?.cleanup();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the Docker engine', () => {
  it('restarted during a PR check: the attempt fails, the job is retried and completes once', async () => {
    engine = await startPrivateDockerd();
    await engine.loadFrom(connectDocker(), [baseImage, egressImage]);
    // Retries 3 s and 6 s apart: a restarted engine (graceful stop, 1 s down, start) can take
    // longer than 500 ms + 1 s to answer on a loaded machine, and 3 attempts must outlast it.
    app = await startOn(engine, `d${process.pid}`, 3000);
    const issue = fx.fake.addIssue(OWNER, REPO, { title: fx.fx.issue.title, body: fx.fx.issue.body });
    await fx.fake.deliver('issues', fx.fake.issuePayload(OWNER, REPO, issue.number, 'opened'));
    await app.services.queue.drain(10 * 60_000);
    expect(fx.fake.issue(OWNER, REPO, issue.number).labels).toEqual(['reproduced']);

    const pr = await fx.fake.addPull(OWNER, REPO, { title: 'Parse combined units', body: `Fixes #${issue.number}`, headSha: fx.goodFix, headRef: 'fix' });
    await fx.fake.deliver('pull_request', await fx.fake.pullPayload(OWNER, REPO, pr.number, 'opened'));
    // Mid-run: a test container is running on the engine; the engine goes down and comes back.
    const deadline = Date.now() + 5 * 60_000;
    while ((await engine.docker.listContainers({ filters: { label: ['swt-bot'], status: ['running'] } })).length === 0) {
      if (Date.now() > deadline) throw new Error('no container started');
      await new Promise((r) => setTimeout(r, 50));
    }
    await engine.restart(1000);
    await app.services.queue.drain(10 * 60_000);

    const runs = fx.fake.checkRuns(OWNER, REPO).filter((c) => c.head_sha === fx.goodFix);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(runs[0]!.history.filter((h) => h.status === 'completed')).toHaveLength(1);
    expect(fx.fake.issue(OWNER, REPO, pr.number).comments.filter((c) => c.body.startsWith('<!-- swt-bot:validation -->'))).toHaveLength(1);
    const [validateJob] = await app.services.queue.list({ kind: JOB.validate });
    // The attempt the restart cut failed as INTERRUPTED (or, started while the engine was down, as
    // DOCKER_UNREACHABLE); a later one completed.
    expect(validateJob).toMatchObject({ state: 'done' });
    expect(validateJob!.attempts).toBeGreaterThanOrEqual(2);
    expect(validateJob!.error).toBeNull();
    expect(await engine.docker.listContainers({ all: true, filters: { label: ['swt-bot'] } })).toEqual([]);
    await app.stop();
    await engine.stop();
  });

  it('out of disk while an environment image is built: the job fails with a clear message, one comment', async () => {
    // A 1.5 GB data root: the base image fits, an install step writing 2 GB does not.
    engine = await startPrivateDockerd({ tmpfsBytes: 1536 * 1024 ** 2 });
    await engine.loadFrom(connectDocker(), [baseImage, egressImage]);
    expect((await engine.docker.getImage(baseImage).inspect()).Id).toMatch(/^sha256:/);
    const big = await publishFixture(fx.fake, 'py-durations', {
      owner: OWNER,
      repo: 'durations-big',
      config: (f) => fixtureConfig(f, { generation: { strategy: 'snippet' }, install: 'head -c 2000000000 /dev/zero > /testbed/.filler' }),
    });
    try {
      app = await startOn(engine, `k${process.pid}`);
      const issue = fx.fake.addIssue(OWNER, 'durations-big', { title: big.fx.issue.title, body: big.fx.issue.body });
      await fx.fake.deliver('issues', fx.fake.issuePayload(OWNER, 'durations-big', issue.number, 'opened'));
      await app.services.queue.drain(10 * 60_000);
      const [job] = await app.services.queue.list({ kind: JOB.reproduce });
      expect(job).toMatchObject({ state: 'failed', attempts: 3 });
      // The engine's disk is full: the install step cannot write, and the message says so.
      expect(job!.error).toMatch(/^install command `head -c 2000000000 \/dev\/zero > \/testbed\/\.filler` exited with 1: no space left on the Docker engine's disk/);
      const comments = fx.fake.issue(OWNER, 'durations-big', issue.number).comments;
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).toContain('swt-bot hit an error while reproducing this issue');
      expect(comments[0]!.body).toContain('install command `head -c 2000000000');
      expect(await engine.docker.listContainers({ all: true, filters: { label: ['swt-bot'] } })).toEqual([]);
    } finally {
      await app.stop();
      await big.cleanup();
    }
  });
});
