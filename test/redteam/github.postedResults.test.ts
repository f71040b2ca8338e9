/**
 * What the App posts and what it pays for: a reproducing test far larger than a GitHub comment,
 * and a reproduction whose job is retried after GitHub failed its comment. The App (and its
 * GitHub port, as an installation) talks to the loopback fake GitHub, which refuses texts over
 * GitHub's limits as GitHub does; the retried reproduction runs in real containers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Probot } from 'probot';
import { installationPort, startApp, type RunningApp } from '../../src/app/app.js';
import { fixtureConfig, publishFixture, type PublishedFixture } from '../../src/demo/appDemo.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import type { Reproduction } from '../../src/generation/types.js';
import { CHECK_NAME, renderReproductionResult } from '../../src/github/render.js';
import { JOB } from '../../src/jobs/payloads.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { appKey } from '../helpers/webhooks.js';
import { containersOfOursOnceRetired, removeEnvImagesBuiltFrom } from '../helpers/docker.js';

const SECRET = 'redteam-results-webhook-secret';
const OWNER = 'acme';

let fake: FakeGitHub;
let fx: PublishedFixture;

beforeAll(async () => {
  fake = await new FakeGitHub({ webhookSecret: SECRET, appPrivateKey: appKey() }).start();
  fx = await publishFixture(fake, 'py-durations', { owner: OWNER, repo: 'durations', config: (f) => fixtureConfig(f, { generation: { strategy: 'snippet' } }) });
});

afterAll(async () => {
  await fake?.close();
  await fx?.cleanup();
  if (fx) await removeEnvImagesBuiltFrom([fx.base]);
  expect(containersOfOursOnceRetired()).toBe('');
});

describe('what the App posts', () => {
  it('attack: a 118k-character reproducing test posts a clipped comment of at most 65,536 characters (and a check text of at most 65,535)', async () => {
    const probot = new Probot({ appId: fake.appId, privateKey: appKey(), baseUrl: `${fake.url}/api/v3` });
    const gh = await installationPort(probot, { owner: OWNER, repo: fx.repo, installationId: fake.installationId });
    const issue = fake.addIssue(OWNER, fx.repo, { title: 'parse_duration("1h30m") returns 0', body: 'Combined units are ignored.' });
    const lines = Array.from({ length: 2400 }, (_, i) => `+    assert parse_duration("${i}h") == ${i * 3600}  # case ${i}`);
    const testPatch = `diff --git a/tests/test_many.py b/tests/test_many.py\n--- /dev/null\n+++ b/tests/test_many.py\n@@ -0,0 +1,${lines.length + 1} @@\n+def test_many():\n${lines.join('\n')}\n`;
    expect(testPatch.length).toBeGreaterThan(118_000);
    const rep: Reproduction = { status: 'reproduced', strategy: 'agent', testPatch, failureExcerpt: 'AssertionError', reason: 'fails on base', usage: { promptTokens: 1, completionTokens: 1, costUsd: 0, steps: 1, wallMs: 1 } };

    await gh.upsertComment({ owner: OWNER, repo: fx.repo }, issue.number, 'reproduction', renderReproductionResult(rep, { branch: 'main', sha: fx.base }));
    const [comment] = fake.issue(OWNER, fx.repo, issue.number).comments;
    expect(comment!.body.length).toBeLessThanOrEqual(65_536);
    expect(comment!.body).toContain(`_The test is clipped: 50,000 of its ${testPatch.length.toLocaleString('en-US')} characters are shown (GitHub refuses comments over 65,536)`);
    expect(comment!.body).toContain('`/swt/reproduction/<owner>/<repo>/<issue>`');
    // The fence around the test is closed, and the comment ends as it always does.
    expect(comment!.body).toMatch(/\n`{3,}\n\n<\/details>\n/);
    expect(comment!.body).toMatch(/<sub>Strategy `agent` · .*<\/sub>$/);

    // Any text at all, through the port: a 200k comment and a 100k check summary are clipped, saying so.
    await gh.upsertComment({ owner: OWNER, repo: fx.repo }, issue.number, 'notice', `<!-- swt-bot:notice -->\n${'y'.repeat(200_000)}`);
    const notice = fake.issue(OWNER, fx.repo, issue.number).comments.find((c) => c.body.startsWith('<!-- swt-bot:notice -->'))!;
    expect(notice.body.length).toBeLessThanOrEqual(65_536);
    expect(notice.body).toMatch(/_…clipped to GitHub's limit of 65,536 characters \(200,024 in all\); the whole is kept by swt-bot/);
    const id = await gh.createCheckRun({ owner: OWNER, repo: fx.repo }, fx.goodFix, CHECK_NAME, { status: 'completed', conclusion: 'neutral', output: { title: 't', summary: 'z'.repeat(100_000) } });
    const run = fake.checkRuns(OWNER, fx.repo).find((c) => c.id === id)!;
    expect(run.output!.summary!.length).toBeLessThanOrEqual(65_535);
    expect(run.output!.summary).toContain("clipped to GitHub's limit of 65,535 characters");
  });
});

describe('what the App pays for', () => {
  let app: RunningApp | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await app?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('attack: a reproduction whose job is retried after GitHub failed its comment does not run (or pay) again', async () => {
    const docker = createDockerSandbox();
    let runs = 0;
    const counted: Sandbox = { ...docker, ceilings: docker.ceilings, ensureEnvironment: (...a) => docker.ensureEnvironment(...a), run: (r) => ((runs += 1), docker.run(r)), openSession: (r) => ((runs += 1), docker.openSession(r)) };
    dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-results-${process.pid}-`));
    app = await startApp({
      appId: fake.appId,
      privateKey: appKey(),
      secret: SECRET,
      dataDir,
      env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http', SWT_GITHUB_THROTTLE: 'off' },
      sandbox: counted,
      generation: { llm: null, strategy: 'snippet' },
    });
    fake.appUrl = app.url;
    const issue = fake.addIssue(OWNER, fx.repo, { title: fx.fx.issue.title, body: fx.fx.issue.body });
    // The result's edit of the "started" comment fails, Octokit's own retries included: the job's attempt fails after the runs.
    let runsWhenGitHubFailed = -1;
    fake.failNext('PATCH', /^\/repos\/acme\/durations\/issues\/comments\/\d+$/, 500, { times: 4 });
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, fx.repo, issue.number, 'opened'))).status).toBe(200);
    // Wait for the first attempt to end in the failure, then for the retry to finish.
    for (let i = 0; ; i++) {
      const [job] = await app.services.queue.list({ kind: JOB.reproduce });
      if (job && job.attempts >= 1 && job.state !== 'running' && runsWhenGitHubFailed < 0 && job.error) runsWhenGitHubFailed = runs;
      if (job?.state === 'done') break;
      if (i > 6000 || job?.state === 'failed') throw new Error(`the reproduction did not complete: ${JSON.stringify(job)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const [job] = await app.services.queue.list({ kind: JOB.reproduce });
    expect(job).toMatchObject({ state: 'done', attempts: 2 });
    expect(runsWhenGitHubFailed).toBeGreaterThan(0);
    // The second attempt ran nothing: it posted what the first had stored.
    expect(runs).toBe(runsWhenGitHubFailed);
    expect(await app.services.store.countReproductions({ owner: OWNER, repo: fx.repo }, issue.number)).toBe(1);
    const comments = fake.issue(OWNER, fx.repo, issue.number).comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('### 🧪 swt-bot reproduced this issue');
  });
});
