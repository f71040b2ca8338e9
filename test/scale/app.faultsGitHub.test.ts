/**
 * Faults, on the Redis engine (a real redis-server, BullMQ), GitHub faked by nock: rate limits.
 * Each ends with the job retried or throttled and done, the comment posted exactly once; or, when
 * GitHub never recovers, failed with a one-line error and nothing posted.
 */
import nock from 'nock';
import { JOB } from '../../src/jobs/payloads.js';
import { renderReproductionStarted } from '../../src/github/render.js';
import { deliver, example, mockGitHub, startTestApp, testOctokit, type TestApp } from '../helpers/handlerApp.js';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';

const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const MAIN_SHA = '6dcb09b5b57875f334f61aebed695e2e4193db5e';

let redis: RedisServer;
let app: TestApp;
let round = 0;

const defaultBranch = (gh: ReturnType<typeof mockGitHub>) =>
  gh.on('GET', `/repos/${OWNER}/${REPO}`, 200, { default_branch: 'main', full_name: `${OWNER}/${REPO}` }).on('GET', `/repos/${OWNER}/${REPO}/branches/main`, 200, { name: 'main', commit: { sha: MAIN_SHA } });

async function startOnRedis(throttle: boolean): Promise<TestApp> {
  round++;
  return startTestApp({
    redisUrl: redis.url,
    env: { ...process.env, SWT_REDIS_PREFIX: `f${process.pid}-${round}` },
    Octokit: testOctokit(throttle),
    bull: { backoff: { baseMs: 200 }, lockDurationMs: 5000, stalledIntervalMs: 2000 },
  });
}

beforeAll(async () => {
  redis = await startRedis();
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(async () => {
  nock.enableNetConnect();
  await redis?.stop();
});
afterEach(async () => {
  await app?.stop();
  nock.cleanAll();
});

describe('GitHub rate limits on the Redis engine', () => {
  it('403 with x-ratelimit-remaining: 0: Probot throttles until the reset, retries, and the comment is posted once', async () => {
    app = await startOnRedis(true);
    expect(app.services.engine).toBe('redis');
    const gh = mockGitHub().noConfig(OWNER, REPO);
    const reset = String(Math.floor(Date.now() / 1000) + 1);
    const comments = defaultBranch(gh)
      .on('POST', `/repos/${OWNER}/${REPO}/issues/1/comments`, 403, { message: 'API rate limit exceeded for installation ID 4242.' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset })
      .thread(OWNER, REPO, 1);
    expect((await deliver(app.url, 'issues', example('issues', 'opened'))).status).toBe(200);
    await app.services.queue.drain(30_000);
    const posted = gh.writes().filter((w) => w.method === 'POST');
    expect(posted.map((w) => w.body.body)).toEqual([renderReproductionStarted({ branch: 'main', sha: MAIN_SHA }), renderReproductionStarted({ branch: 'main', sha: MAIN_SHA })]);
    // The first POST was refused: one comment exists.
    expect(comments.map((c) => c.body)).toEqual([renderReproductionStarted({ branch: 'main', sha: MAIN_SHA })]);
    // The delivery's one job: it decided, posted, and became the reproduction.
    expect((await app.services.queue.list({ kind: JOB.reproduce }))[0]).toMatchObject({ state: 'done', attempts: 1 });
    expect(await app.services.queue.list()).toHaveLength(1);
  });

  it('a secondary rate limit (403 with retry-after): the queue retries the job after its backoff; one comment', async () => {
    app = await startOnRedis(true);
    const gh = mockGitHub().noConfig(OWNER, REPO).noConfig(OWNER, REPO);
    defaultBranch(gh);
    defaultBranch(gh);
    gh.on(
      'POST',
      `/repos/${OWNER}/${REPO}/issues/1/comments`,
      403,
      { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
      { 'retry-after': '1' },
    );
    const comments = gh.thread(OWNER, REPO, 1);
    expect((await deliver(app.url, 'issues', example('issues', 'opened'))).status).toBe(200);
    await app.services.queue.drain(30_000);
    const [event] = await app.services.queue.list({ kind: JOB.reproduce });
    // Attempt 1 hit the limit; attempt 2, after the backoff, posted (and the job became the reproduction).
    expect(event).toMatchObject({ state: 'done', attempts: 2 });
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toBe(renderReproductionStarted({ branch: 'main', sha: MAIN_SHA }));
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
  });

  it('GitHub refusing every attempt: the job fails after its retries with a one-line error; nothing half-posted', async () => {
    app = await startOnRedis(false);
    const gh = mockGitHub();
    for (let i = 0; i < 3; i++) gh.noConfig(OWNER, REPO);
    for (let i = 0; i < 3; i++) gh.on('GET', `/repos/${OWNER}/${REPO}`, 403, { message: 'You have exceeded a secondary rate limit.' }, { 'retry-after': '60' });
    expect((await deliver(app.url, 'issues', example('issues', 'opened'))).status).toBe(200);
    await app.services.queue.drain(30_000);
    const [event] = await app.services.queue.list({ kind: JOB.work });
    expect(event).toMatchObject({ state: 'failed', attempts: 3, error: 'You have exceeded a secondary rate limit.' });
    expect(gh.writes()).toEqual([]);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
  });
});
