/**
 * Spend a stranger can trigger: a pull request that links hundreds of issues, linked issues the
 * repository would never reproduce, an installation's daily budget, one author's flood. The App
 * runs on a port against the loopback fake GitHub (REST, GraphQL, git over HTTP) with its real
 * SQLite store; its sandbox is a tripwire that counts what would have run and runs nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { fixtureConfig, publishFixture, type PublishedFixture } from '../../src/demo/appDemo.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import { JOB } from '../../src/jobs/payloads.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { SwtError } from '../../src/util/errors.js';
import { appKey } from '../helpers/webhooks.js';
import type { ValidatePayload } from '../../src/jobs/validate.js';

const SECRET = 'redteam-spend-webhook-secret';
const OWNER = 'acme';
const MALLORY = { login: 'mallory', type: 'User' as const };

let fake: FakeGitHub;
const published: PublishedFixture[] = [];
let app: RunningApp | undefined;
let dataDir: string | undefined;
/** What the sandbox was asked to do: nothing may run in these tests, and a run would be counted. */
let asked: string[] = [];

const tripwire: Sandbox = {
  ensureEnvironment: async () => {
    asked.push('ensureEnvironment');
    throw new SwtError('BAD_INPUT', 'the red-team sandbox runs nothing');
  },
  run: async () => {
    asked.push('run');
    throw new SwtError('BAD_INPUT', 'the red-team sandbox runs nothing');
  },
  openSession: async () => {
    asked.push('openSession');
    throw new SwtError('BAD_INPUT', 'the red-team sandbox runs nothing');
  },
};

beforeAll(async () => {
  fake = await new FakeGitHub({ webhookSecret: SECRET, appPrivateKey: appKey() }).start();
  // One repository per set of issue rules: the defaults, issues.auto off, events.issues off.
  for (const [repo, extra] of [
    ['defaults', {}],
    ['auto-off', { issues: { auto: false } }],
    ['events-off', { events: { issues: false } }],
  ] as const) {
    published.push(await publishFixture(fake, 'py-durations', { owner: OWNER, repo, config: (fx) => fixtureConfig(fx, extra) }));
  }
});

afterAll(async () => {
  await fake?.close();
  for (const p of published) await p.cleanup();
});

afterEach(async () => {
  await app?.stop();
  app = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** `decideOnly`: a delivery's job decides, posts and applies the limits, and the work it becomes runs nothing (no container). */
async function start(env: NodeJS.ProcessEnv = {}, decideOnly = false): Promise<RunningApp> {
  asked = [];
  dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-spend-${process.pid}-`));
  app = await startApp({
    appId: fake.appId,
    privateKey: appKey(),
    secret: SECRET,
    dataDir,
    ...(decideOnly ? { runWork: async () => {} } : {}),
    env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http', SWT_GITHUB_THROTTLE: 'off', ...env },
    sandbox: tripwire,
    progressIntervalMs: 200,
  });
  fake.appUrl = app.url;
  return app;
}

const fixtureOf = (repo: string) => published.find((p) => p.repo === repo)!;
const settle = () => app!.services.queue.drain(5 * 60_000);
/** Issue numbers the App read one by one (GET /repos/o/r/issues/N). */
const issuesRead = (repo: string, since: number) =>
  fake.calls.filter((c) => c.at >= since && c.method === 'GET').flatMap((c) => {
    const m = new RegExp(`^/repos/${OWNER}/${repo}/issues/(\\d+)$`).exec(c.path);
    return m ? [Number(m[1])] : [];
  });

describe('spend a stranger can trigger', () => {
  it('attack: a pull request whose body says "fixes #1 … fixes #500" starts at most SWT_MAX_LINKED_ISSUES reproductions', async () => {
    await start({ SWT_MAX_LINKED_ISSUES: '5' });
    const fx = fixtureOf('defaults');
    const issues = Array.from({ length: 500 }, (_, i) => fake.addIssue(OWNER, fx.repo, { title: `parse_duration("${i}h") raises ValueError`, body: 'It should return seconds.' }).number);
    const body = issues.map((n) => `fixes #${n}`).join('\n');
    const pr = await fake.addPull(OWNER, fx.repo, { title: 'Fix everything', body, user: MALLORY, headSha: fx.goodFix, headRef: 'fix' });
    const since = Date.now();
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, fx.repo, pr.number, 'opened'))).status).toBe(200);
    await settle();

    const [job] = await app!.services.queue.list({ kind: JOB.validate });
    const p = job!.payload as ValidatePayload;
    expect(p.issues).toEqual(issues.slice(0, 5));
    expect(p.linksLeftOut).toHaveLength(495);
    // Five issues were read to be reproduced, and the sandbox was asked five times at most: never 500.
    expect([...new Set(issuesRead(fx.repo, since))].sort((a, b) => a - b)).toEqual(issues.slice(0, 5));
    expect(asked.filter((a) => a === 'ensureEnvironment').length).toBeLessThanOrEqual(5);
    const run = fake.checkRuns(OWNER, fx.repo).filter((c) => (c.history[0]?.at ?? 0) >= since).at(-1)!;
    expect(run.status).toBe('completed');
    expect(run.output?.summary).toContain('This pull request links 500 issues; swt-bot checks the first 5 (`SWT_MAX_LINKED_ISSUES`)');
  });

  it('attack: linked issues that issues.auto: false, a skip label or events.issues: false keep from reproduction are not reproduced through a pull request', async () => {
    await start();
    const since = Date.now();
    const cases = [
      { repo: 'auto-off', labels: [] as string[], reason: 'issues.auto is off' },
      { repo: 'defaults', labels: ['wontfix'], reason: 'labelled "wontfix"' },
      { repo: 'events-off', labels: [] as string[], reason: 'events.issues is off' },
    ];
    const prs: Array<{ repo: string; issue: number; reason: string }> = [];
    for (const c of cases) {
      const fx = fixtureOf(c.repo);
      const issue = fake.addIssue(OWNER, c.repo, { title: 'parse_duration("1h30m") returns 0', body: 'Combined units are ignored.', labels: c.labels });
      const pr = await fake.addPull(OWNER, c.repo, { title: 'Fix it', body: `Fixes #${issue.number}`, user: MALLORY, headSha: fx.goodFix, headRef: 'fix' });
      expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, c.repo, pr.number, 'opened'))).status).toBe(200);
      prs.push({ repo: c.repo, issue: issue.number, reason: c.reason });
    }
    await settle();
    for (const x of prs) {
      const run = fake.checkRuns(OWNER, x.repo).filter((c) => (c.history[0]?.at ?? 0) >= since).at(-1)!;
      expect(run).toMatchObject({ status: 'completed', conclusion: 'neutral' });
      expect(run.output?.summary).toContain(`#${x.issue} is not reproduced automatically here (${x.reason}`);
      expect(fake.issue(OWNER, x.repo, x.issue).comments).toEqual([]);
    }
    // Nothing was built or run for any of them.
    expect(asked).toEqual([]);
    expect(await app!.services.store.countReproductions({ owner: OWNER, repo: 'defaults' }, prs[1]!.issue)).toBe(0);
  });

  it('attack: one author opening issue after issue is stopped by the per-author rate, with one clear comment, and starts nothing more', async () => {
    await start({ SWT_AUTHOR_RUNS_PER_HOUR: '2' }, true);
    const fx = fixtureOf('defaults');
    const opened = [1, 2, 3].map((i) => fake.addIssue(OWNER, fx.repo, { title: `parse_duration("${i}d") is wrong`, body: 'Days are ignored.', user: MALLORY }).number);
    for (const n of opened) expect((await fake.deliver('issues', fake.issuePayload(OWNER, fx.repo, n, 'opened'))).status).toBe(200);
    await settle();
    // Two of the three started (the heavy lane takes them in any order); the third was stopped.
    const started = (await app!.services.queue.list({ kind: JOB.reproduce })).map((j) => (j.payload as { issue: number }).issue);
    expect(started).toHaveLength(2);
    const stopped = opened.find((n) => !started.includes(n))!;
    // Reopening it asks again: the same comment is edited, nothing new is started.
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, fx.repo, stopped, 'reopened'))).status).toBe(200);
    const pr = await fake.addPull(OWNER, fx.repo, { title: 'And a fix', body: `Fixes #${opened[0]}`, user: MALLORY, headSha: fx.goodFix, headRef: 'fix' });
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, fx.repo, pr.number, 'opened'))).status).toBe(200);
    await settle();

    const reproductions = await app!.services.queue.list({ kind: JOB.reproduce });
    expect(reproductions.map((j) => (j.payload as { issue: number }).issue).sort((a, b) => a - b)).toEqual([...started].sort((a, b) => a - b));
    const third = fake.issue(OWNER, fx.repo, stopped).comments;
    expect(third).toHaveLength(1);
    expect(third[0]!.body).toContain('<!-- swt-bot:limit -->');
    expect(third[0]!.body).toContain('@mallory has started 2 runs of swt-bot in the last hour, the most this installation allows (`SWT_AUTHOR_RUNS_PER_HOUR`)');
    expect(await app!.services.queue.list({ kind: JOB.validate })).toEqual([]);
    const run = fake.checkRuns(OWNER, fx.repo).find((c) => c.head_sha === fx.goodFix && c.output?.title === 'Rate limit reached');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(fake.issue(OWNER, fx.repo, pr.number).comments.filter((c) => c.body.startsWith('<!-- swt-bot:limit -->'))).toHaveLength(1);
  });

  it("attack: work past the installation's daily budget posts one clear comment and starts nothing more", async () => {
    await start({ SWT_DAILY_USD: '5' }, true);
    const fx = fixtureOf('defaults');
    // Earlier runs today used the budget up.
    await app!.services.store.addSpend(`installation:${fake.installationId}`, new Date().toISOString().slice(0, 10), { tokens: 90_000, usd: 5.2, containerMs: 60_000 });
    const issue = fake.addIssue(OWNER, fx.repo, { title: 'parse_duration("2w") is wrong', body: 'Weeks are ignored.', user: MALLORY });
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, fx.repo, issue.number, 'opened'))).status).toBe(200);
    await settle();
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, fx.repo, issue.number, 'reopened'))).status).toBe(200);
    const since = Date.now();
    const pr = await fake.addPull(OWNER, fx.repo, { title: 'Weeks', body: `Fixes #${issue.number}`, user: MALLORY, headSha: fx.goodFix, headRef: 'fix' });
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, fx.repo, pr.number, 'opened'))).status).toBe(200);
    // A gated author (a bot) gets no free pass through the gate while nothing can be checked.
    const botPr = await fake.addPull(OWNER, fx.repo, { title: 'Weeks, by a bot', body: `Fixes #${issue.number}`, user: { login: 'fixer[bot]', type: 'Bot' }, headSha: fx.badFix, headRef: 'no-fix' });
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, fx.repo, botPr.number, 'opened'))).status).toBe(200);
    await settle();

    expect(await app!.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
    expect(await app!.services.queue.list({ kind: JOB.validate })).toEqual([]);
    const comments = fake.issue(OWNER, fx.repo, issue.number).comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("swt-bot has used this installation's budget for today (UTC): $5.20 of $5.00 (`SWT_DAILY_USD`)");
    const runs = fake.checkRuns(OWNER, fx.repo).filter((c) => (c.history[0]?.at ?? 0) >= since);
    // (In whichever order the heavy lane took the two.)
    expect(runs.map((c) => [c.head_sha, c.status, c.conclusion, c.output?.title]).sort((a, b) => String(a[2]).localeCompare(String(b[2])))).toEqual([
      [fx.badFix, 'completed', 'failure', 'Daily budget reached'],
      [fx.goodFix, 'completed', 'neutral', 'Daily budget reached'],
    ]);
    expect(asked).toEqual([]);
  });
});
