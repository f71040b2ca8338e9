/**
 * End to end, with the real thing at every edge but GitHub and the LLM: the App serving on a
 * port, signed webhooks over HTTP, the fake GitHub (REST, GraphQL and git over smart HTTP, as a
 * GHES at GHE_HOST with GHE_PROTOCOL=http), the scripted model, and real containers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningApp } from '../../src/app/app.js';
import { fixtureConfig, publishFixture } from '../../src/demo/appDemo.js';
import { renderRanking } from '../../src/github/render.js';
import { JOB } from '../../src/jobs/payloads.js';
import { rank } from '../../src/pipeline/rank.js';
import { startAppOnFakeGitHub, type AppOnFakeGitHub } from '../helpers/appOnFakeGitHub.js';
import { containersOfOursOnceRetired, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { msg, type ScriptedLlm } from '../helpers/scriptedLlm.js';
import { fixtureOnFakeGitHub, MODEL_TEST, OWNER, REPO, WEBHOOK_SECRET, type FixtureGitHub } from '../helpers/fixtureGitHub.js';

let fx: FixtureGitHub;
let on: AppOnFakeGitHub;
let app: RunningApp;
let llm: ScriptedLlm;

beforeAll(async () => {
  // `coverage: true`: fix PRs also get ΔC of the reproducing test over their change.
  fx = await fixtureOnFakeGitHub('zero-shot-plus', { coverage: true });
  on = await startAppOnFakeGitHub(fx.fake, { secret: WEBHOOK_SECRET, model: [msg(MODEL_TEST)], apiKey: 'sk-e2e-scripted-model-key', progressIntervalMs: 200 });
  ({ app, llm } = on);
});

afterAll(async () => {
  await on?.stop();
  await fx?.cleanup();
  await removeEnvImagesBuiltFrom([fx.base]);
  expect(containersOfOursOnceRetired()).toBe('');
});

const settle = () => app.services.queue.drain(15 * 60_000);

describe('the App end to end (fake GHES, scripted model, real containers)', () => {
  it('an issue webhook gives the reproduction comment and the label; 5 redeliveries give nothing more', async () => {
    const issue = fx.fake.addIssue(OWNER, REPO, { title: fx.fx.issue.title, body: fx.fx.issue.body });
    const payload = fx.fake.issuePayload(OWNER, REPO, issue.number, 'opened');
    const first = await fx.fake.deliver('issues', payload, { id: 'e2e-issue-opened' });
    expect(first.status).toBe(200);
    await settle();

    const [comment, ...more] = fx.fake.issue(OWNER, REPO, 1).comments;
    expect(more).toEqual([]);
    expect(comment!.user).toEqual({ login: 'swt-bot[bot]', type: 'Bot' });
    const body = comment!.body;
    expect(body.split('\n').slice(0, 5)).toEqual([
      '<!-- swt-bot:reproduction -->',
      '### 🧪 swt-bot reproduced this issue',
      '',
      `This test fails on \`main\` at ${fx.base.slice(0, 7)} for the reason the issue describes (it was run twice in a sandbox).`,
      '',
    ]);
    expect(body).toContain('<details><summary>Reproducing test (<code>tests/test_parse.py</code>)</summary>\n\n```diff\ndiff --git a/tests/test_parse.py b/tests/test_parse.py\n');
    expect(body).toContain('+def test_combined_units():\n+    assert parse_duration("1h30m") == 5400\n');
    expect(body).toMatch(/<details open><summary>How it fails at [0-9a-f]{7}<\/summary>\n\n```text\n[^`]*ValueError[^`]*\n```/);
    expect(body).toMatch(/<sub>Strategy `zero-shot-plus` · \d+\.\d s · LLM cost \$\d\.\d{4} \(\d+ tokens\)<\/sub>$/);
    expect(fx.fake.issue(OWNER, REPO, 1).labels).toEqual(['reproduced']);
    expect(llm.requests).toHaveLength(1);
    // The issue text reached the model as data; no token or key did.
    expect(JSON.stringify(llm.requests[0]!.body)).toContain('parse_duration crashes on combined units');

    const again = await Promise.all([1, 2, 3, 4, 5].map(() => fx.fake.deliver('issues', payload, { id: 'e2e-issue-opened' })));
    expect(again.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // A new delivery of the same event (another id) at the same sha: nothing runs either.
    await fx.fake.deliver('issues', fx.fake.issuePayload(OWNER, REPO, 1, 'reopened'));
    await settle();
    expect(fx.fake.issue(OWNER, REPO, 1).comments).toHaveLength(1);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
    expect(llm.requests).toHaveLength(1);
  });

  it('a PR webhook gives a check run that goes in_progress, then completes with F→P and success', async () => {
    const pr = await fx.fake.addPull(OWNER, REPO, { title: 'Parse combined units', body: 'Fixes #1', user: { login: 'alice', type: 'User' }, headSha: fx.goodFix, headRef: 'fix' });
    const r = await fx.fake.deliver('pull_request', await fx.fake.pullPayload(OWNER, REPO, pr.number, 'opened'));
    expect(r.status).toBe(200);
    await settle();
    const runs = fx.fake.checkRuns(OWNER, REPO).filter((c) => c.head_sha === fx.goodFix);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.name).toBe('swt: reproduction');
    expect(run.history[0]).toMatchObject({ status: 'in_progress', title: 'Running the reproducing tests' });
    // Live progress: at most one edit an interval and the latest step wins, so which steps show depends on speed
    // (a 1.7 s validation can show only 'fetching the base and the head' and its environment).
    const steps = run.history.filter((h) => h.status === 'in_progress').map((h) => /⏳ (.*)$/.exec(h.summary ?? '')?.[1] ?? '');
    expect(steps[0]).toMatch(/^queued/);
    expect(steps.slice(1).some((s) => /^(fetching the base and the head|environment |#1: running the reproducing test on the base|running \d+ test file|confirming \d+ test)/.test(s))).toBe(true);
    expect(run.history.filter((h) => h.status === 'completed')).toHaveLength(1);
    expect(run).toMatchObject({ status: 'completed', conclusion: 'success', output: { title: 'The fix passes the reproducing tests' }, annotations: [], actions: [{ label: 'Re-run', identifier: 'swt-rerun', description: 'Run the reproduction check again' }] });
    expect(run.output!.summary).toMatch(/^Every reproducing test fails on the base and passes on the head, and none fails on the head\.\n\n#### #1: base [0-9a-f]{7} → head [0-9a-f]{7}\n/);
    expect(run.output!.summary).toContain(
      "| `tests/test_parse.py::test_combined_units` | ❌ fail (error) | ✅ pass | **F→P** | before: error `ValueError: invalid literal for int() with base 10: '1h30'` |",
    );
    expect(run.output!.summary).toContain('F→P 1 · P→F 0 · F→F 0 · P→P 4');
    expect(run.output!.summary).toContain('- ✅ **Fix likely correct: yes**');
    const comments = fx.fake.issue(OWNER, REPO, pr.number).comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body.startsWith('<!-- swt-bot:validation -->\n### ✅ swt-bot: the fix passes the reproducing tests\n')).toBe(true);
    expect(comments[0]!.body).toContain('| `tests/test_parse.py::test_combined_units` | ❌ fail (error) | ✅ pass | **F→P** |');
    // The reproducing test runs the lines the fix changes: ΔC is measured (python trace) and above zero.
    const dC = /📏 change coverage ΔC ([\d.]+)%: the tests run (\d+) of (\d+) executable changed lines more often \(of the code this pull request changes\)\./.exec(comments[0]!.body);
    expect(dC).not.toBeNull();
    expect(Number(dC![2])).toBeGreaterThan(0);
    expect(run.output!.summary).toContain(dC![0]);
  });

  it('a second PR by a bot with an incorrect fix gives failure with an annotation, and the issue ranks both', async () => {
    const pr = await fx.fake.addPull(OWNER, REPO, {
      title: 'Handle more input',
      body: 'An attempt at the parser.',
      user: { login: 'swt-fixer[bot]', type: 'Bot' },
      headSha: fx.badFix,
      headRef: 'no-fix',
      // Linked in GitHub's sidebar, not in the body: only closingIssuesReferences knows.
      linked: [1],
    });
    await fx.fake.deliver('pull_request', await fx.fake.pullPayload(OWNER, REPO, pr.number, 'opened'));
    await settle();
    const run = fx.fake.checkRuns(OWNER, REPO).find((c) => c.head_sha === fx.badFix)!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure', output: { title: 'The fix does not pass the reproducing tests' } });
    expect(run.output!.summary!.split('\n')[0]).toBe(
      'The fix filter (at least one test from failing to passing, and no test failing on the head) does not pass; pull requests by swt-fixer[bot] must pass it (`gate` in `.github/swt.yml`).',
    );
    expect(run.output!.summary).toContain(
      "| `tests/test_parse.py::test_combined_units` | ❌ fail (error) | ❌ fail (error) | F→F | after: error `ValueError: invalid literal for int() with base 10: '1h30'` |",
    );
    expect(run.annotations).toEqual([
      { path: 'tests/test_parse.py', start_line: 25, end_line: 25, annotation_level: 'failure', title: 'F→F: test_combined_units', message: "error: ValueError: invalid literal for int() with base 10: '1h30'" },
    ]);
    const ranking = fx.fake.issue(OWNER, REPO, 1).comments.filter((c) => c.body.startsWith('<!-- swt-bot:ranking -->'));
    expect(ranking).toHaveLength(1);
    const candidates = rank(await app.services.store.candidates({ owner: OWNER, repo: REPO }, 1));
    expect(candidates.map((c) => [c.pr, c.author, c.verdict])).toEqual([
      [2, 'alice', 'likely-correct'],
      [3, 'swt-fixer[bot]', 'does-not-fix'],
    ]);
    expect(ranking[0]!.body).toBe(renderRanking(1, candidates));
    expect(ranking[0]!.body).toContain('| 1 | #2 | alice | **likely correct** | 1 | 0 |');
    expect(ranking[0]!.body).toContain('| 2 | #3 | swt-fixer[bot] | does not fix | 0 | 1 |');
  });

  it('the LLM endpoint down: "could not reproduce" says so, the label is not-reproduced, nothing crashes', async () => {
    const savedRetries = process.env.SWT_LLM_MAX_RETRIES;
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((r) => dead.close(r));
    process.env.OPENAI_BASE_URL = `http://127.0.0.1:${port}/v1`;
    process.env.SWT_LLM_MAX_RETRIES = '0';
    try {
      const issue = fx.fake.addIssue(OWNER, REPO, { title: 'format_duration drops the seconds', body: 'format_duration(3661) gives "1h1m" but the docs say "1h1m1s".' });
      expect((await fx.fake.deliver('issues', fx.fake.issuePayload(OWNER, REPO, issue.number, 'opened'))).status).toBe(200);
      await settle();
      const comments = fx.fake.issue(OWNER, REPO, issue.number).comments;
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body.split('\n').slice(0, 6)).toEqual([
        '<!-- swt-bot:reproduction -->',
        '### swt-bot could not reproduce this issue',
        '',
        `No test it wrote failed on \`main\` at ${fx.base.slice(0, 7)} for the reason the issue gives. What was tried:`,
        '',
        '```text',
      ]);
      expect(comments[0]!.body.split('\n')[6]).toMatch(/^zero-shot-plus: the LLM failed: /);
      expect(fx.fake.issue(OWNER, REPO, issue.number).labels).toEqual(['not-reproduced']);
      const jobs = await app.services.queue.list({ kind: JOB.reproduce });
      expect(jobs.at(-1)).toMatchObject({ state: 'done', attempts: 1 });
    } finally {
      process.env.OPENAI_BASE_URL = llm.baseURL;
      if (savedRetries === undefined) delete process.env.SWT_LLM_MAX_RETRIES;
      else process.env.SWT_LLM_MAX_RETRIES = savedRetries;
    }
  });

  it('issues.draft_pr: the reproducing test is pushed to a branch and opened as a draft pull request', async () => {
    const other = await publishFixture(fx.fake, 'py-durations', {
      owner: OWNER,
      repo: 'durations-draft',
      config: (f) => fixtureConfig(f, { generation: { strategy: 'snippet' }, issues: { draft_pr: true } }),
    });
    // A draft PR pushes model-written code to a branch here: only for an issue by someone with write access.
    fx.fake.setPermission(OWNER, 'durations-draft', 'reporter', 'write');
    try {
      const issue = fx.fake.addIssue(OWNER, 'durations-draft', { title: other.fx.issue.title, body: other.fx.issue.body });
      await fx.fake.deliver('issues', fx.fake.issuePayload(OWNER, 'durations-draft', issue.number, 'opened'));
      await settle();
      const draft = fx.fake.issue(OWNER, 'durations-draft', 2);
      expect(draft).toMatchObject({ title: 'Test reproducing #1', user: { login: 'swt-bot[bot]', type: 'Bot' }, pull: { draft: true, headRef: 'swt/reproduce-1' } });
      const stored = (await app.services.store.latestReproduction({ owner: OWNER, repo: 'durations-draft' }, 1))!;
      const file = /^\+\+\+ b\/(\S+)/m.exec(stored.testPatch)![1]!;
      expect(await fx.fake.readFile(OWNER, 'durations-draft', 'refs/heads/swt/reproduce-1', file)).toContain('def test_');
      const comment = fx.fake.issue(OWNER, 'durations-draft', 1).comments[0]!.body;
      expect(comment).toContain('\nThe test is in draft pull request #2.\n');
    } finally {
      await other.cleanup();
      await removeEnvImagesBuiltFrom([other.base]);
    }
  });

  it('the installation token went to git and the API only: never into a comment, a check run, a prompt or the database', async () => {
    const tokens = fx.fake.issuedTokens();
    expect(tokens.length).toBeGreaterThan(0);
    const posted = JSON.stringify([[1, 2, 3, 4].map((n) => fx.fake.issue(OWNER, REPO, n)), fx.fake.checkRuns(OWNER, REPO), llm.requests.map((r) => r.body)]);
    const jobs = JSON.stringify(await app.services.queue.list());
    for (const t of tokens) {
      expect(posted).not.toContain(t);
      expect(jobs).not.toContain(t);
    }
    // Clones went through git's smart HTTP at <protocol>://<host>/<owner>/<repo>.git.
    expect(fx.fake.calls.some((c) => c.path.startsWith(`/${OWNER}/${REPO}.git/info/refs?service=git-upload-pack`))).toBe(true);
  });
});
