/**
 * The webhook handlers and the fast lane, at the HTTP level: real payloads from
 * @octokit/webhooks-examples, signed and POSTed to the running App; GitHub is nock, and every
 * API call and body is asserted.
 */
import nock from 'nock';
import { JOB } from '../../src/jobs/payloads.js';
import { renderCheckProgress, renderConfigError, renderHelp, renderIssueTooLarge, renderNoLinkedIssue, renderRefusal, renderReproductionStarted, RERUN_ACTION } from '../../src/github/render.js';
import { deliver, example, INSTALLATION, mockGitHub, startTestApp, testOctokit, type TestApp } from '../helpers/handlerApp.js';

const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const MAIN_SHA = '6dcb09b5b57875f334f61aebed695e2e4193db5e';
const HEAD_SHA = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';

let app: TestApp;

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => {
  nock.enableNetConnect();
});
beforeEach(async () => {
  app = await startTestApp();
});
afterEach(async () => {
  await app.stop();
  nock.cleanAll();
});

const defaultBranch = (gh: ReturnType<typeof mockGitHub>) =>
  gh.on('GET', `/repos/${OWNER}/${REPO}`, 200, { default_branch: 'main', full_name: `${OWNER}/${REPO}` }).on('GET', `/repos/${OWNER}/${REPO}/branches/main`, 200, {
    name: 'main',
    commit: { sha: MAIN_SHA },
  });

async function settle(): Promise<void> {
  await app.services.queue.drain(20_000);
}

/** The job that became the work under this key (a delivery's `work` job takes the work's key as it decides). */
const workUnder = async (key: string) => (await app.services.queue.findByKey(key))?.kind;

describe('issues', () => {
  it('issues.opened: says at once that it started (one comment, hidden marker) and becomes the reproduction at the default branch sha', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    defaultBranch(gh).thread(OWNER, REPO, 1);
    const r = await deliver(app.url, 'issues', example('issues', 'opened'));
    expect(r.status).toBe(200);
    await settle();
    expect(gh.calls).toEqual([
      { method: 'GET', path: `/repos/${OWNER}/${REPO}/contents/.github/swt.yml` },
      { method: 'GET', path: `/repos/${OWNER}/.github/contents/.github/swt.yml` },
      { method: 'GET', path: `/repos/${OWNER}/${REPO}` },
      { method: 'GET', path: `/repos/${OWNER}/${REPO}/branches/main` },
      { method: 'GET', path: `/repos/${OWNER}/${REPO}/issues/1/comments?per_page=100` },
      { method: 'POST', path: `/repos/${OWNER}/${REPO}/issues/1/comments`, body: { body: renderReproductionStarted({ branch: 'main', sha: MAIN_SHA }) } },
    ]);
    expect((await app.services.queue.list({ kind: JOB.reproduce })).map((j) => ({ payload: j.payload, group: j.group }))).toEqual([
      {
        payload: { target: { owner: OWNER, repo: REPO, installationId: INSTALLATION }, issue: 1, config: {}, branch: 'main', sha: MAIN_SHA, delivery: expect.any(String) },
        group: `${OWNER}/${REPO}#issue1`,
      },
    ]);
    expect(await workUnder(`reproduce:${OWNER}/${REPO}#1@${MAIN_SHA}`)).toBe(JOB.reproduce);
    expect(app.ran.map((w) => w.kind)).toEqual([JOB.reproduce]);
  });

  it('the same delivery 5 times: one comment and one reproduction job', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    defaultBranch(gh).thread(OWNER, REPO, 1);
    const payload = example('issues', 'opened');
    const first = await deliver(app.url, 'issues', payload, { id: 'delivery-x' });
    await settle();
    const again = await Promise.all([1, 2, 3, 4].map(() => deliver(app.url, 'issues', payload, { id: 'delivery-x' })));
    await settle();
    expect([first, ...again].map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(gh.writes()).toHaveLength(1);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
    expect(await app.services.queue.list()).toHaveLength(1);
    expect(app.ran).toHaveLength(1);
  });

  it('noise control: a question, a bot, a locked issue, issues.auto off — no API write, no job', async () => {
    const gh = mockGitHub();
    for (let i = 0; i < 3; i++) gh.noConfig(OWNER, REPO);
    gh.config(OWNER, REPO, 'issues:\n  auto: false\n');
    await deliver(app.url, 'issues', example('issues', 'opened', (p) => (p.issue.title = 'How do I parse weeks?')));
    await deliver(app.url, 'issues', example('issues', 'opened', (p) => (p.issue.user = { ...p.issue.user, login: 'renovate[bot]', type: 'Bot' })));
    await deliver(app.url, 'issues', example('issues', 'opened', (p) => (p.issue.locked = true)));
    await deliver(app.url, 'issues', example('issues', 'opened'));
    await settle();
    expect(gh.writes()).toEqual([]);
    // The four webhooks were queued into the heavy lane (an issue may lead to a reproduction), and nothing came of them.
    expect((await app.services.queue.list()).map((j) => [j.kind, j.state])).toEqual([1, 2, 3, 4].map(() => ['work', 'done']));
    expect(app.ran).toEqual([]);
  });

  it('the trigger label starts it when issues.auto is off; another label does nothing', async () => {
    const gh = mockGitHub().config(OWNER, REPO, 'issues: { auto: false }\n').config(OWNER, REPO, 'issues: { auto: false }\n');
    defaultBranch(gh).thread(OWNER, REPO, 1);
    await deliver(app.url, 'issues', example('issues', 'labeled', (p) => (p.label.name = 'bug')));
    await deliver(app.url, 'issues', example('issues', 'labeled', (p) => (p.label.name = 'swt:reproduce')));
    await settle();
    expect(gh.writes()).toEqual([{ method: 'POST', path: `/repos/${OWNER}/${REPO}/issues/1/comments`, body: { body: renderReproductionStarted({ branch: 'main', sha: MAIN_SHA }) } }]);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
  });

  it('an issue with a 1 MB body: a clear comment, nothing run', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    gh.thread(OWNER, REPO, 1);
    const r = await deliver(app.url, 'issues', example('issues', 'opened', (p) => (p.issue.body = 'x'.repeat(1024 * 1024))));
    expect(r.status).toBe(200);
    await settle();
    expect(gh.writes()).toEqual([{ method: 'POST', path: `/repos/${OWNER}/${REPO}/issues/1/comments`, body: { body: renderIssueTooLarge(1024 * 1024) } }]);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
  });

  it("an organisation's config through _extends: the reproduction job carries the merged config, which its runs use", async () => {
    const gh = mockGitHub()
      .config(OWNER, REPO, '_extends: .github\nlabels:\n  reproduced: confirmed\n')
      .config(OWNER, '.github', 'image: node:22\ntest_command: npx vitest run {files}\nlabels:\n  reproduced: org-label\n');
    defaultBranch(gh).thread(OWNER, REPO, 1);
    expect((await deliver(app.url, 'issues', example('issues', 'opened'))).status).toBe(200);
    await settle();
    const jobs = await app.services.queue.list({ kind: JOB.reproduce });
    expect(jobs.map((j) => (j.payload as { config: unknown }).config)).toEqual([{ image: 'node:22', test_command: 'npx vitest run {files}', labels: { reproduced: 'confirmed' } }]);
  });

  it('a bad .github/swt.yml: the comment names the wrong key; broken YAML names the line', async () => {
    const gh = mockGitHub().config(OWNER, REPO, 'gate:\n  mode: sometimes\n').config(OWNER, REPO, 'issues:\n  auto: [true\n');
    gh.thread(OWNER, REPO, 1);
    await deliver(app.url, 'issues', example('issues', 'opened'));
    await settle();
    // A later event (the same body again would be a replay, and ignored).
    await deliver(app.url, 'issues', example('issues', 'opened', (p) => (p.issue.updated_at = '2019-05-15T16:00:00Z')));
    await settle();
    const writes = gh.writes();
    expect(writes).toHaveLength(2);
    expect(writes[0]!.body.body).toBe(renderConfigError('.github/swt.yml: gate.mode: Invalid option: expected one of "authors"|"all"|"off"'));
    expect(writes[1]).toMatchObject({ method: 'PATCH', path: `/repos/${OWNER}/${REPO}/issues/comments/1000` });
    expect(writes[1]!.body.body).toBe(
      renderConfigError('.github/swt.yml:3: not valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1)'),
    );
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
  });
});

describe('commands', () => {
  const comment = (body: string, association: string, login = 'Codertocat', pr = false) =>
    example('issue_comment', 'created', (p) => {
      p.comment.body = body;
      p.comment.author_association = association;
      p.comment.user = { ...p.comment.user, login, type: 'User' };
      if (pr) p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/1` };
    });

  it('a reader gets one polite refusal per thread, never more', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO).noConfig(OWNER, REPO);
    // One question to GitHub: the answer is kept a minute.
    gh.on('GET', `/repos/${OWNER}/${REPO}/collaborators/mallory/permission`, 200, { permission: 'read' }).thread(OWNER, REPO, 1);
    await deliver(app.url, 'issue_comment', comment('/swt reproduce', 'NONE', 'mallory'));
    await settle();
    await deliver(app.url, 'issue_comment', comment('/swt reproduce please', 'CONTRIBUTOR', 'mallory'));
    await settle();
    expect(gh.writes()).toEqual([{ method: 'POST', path: `/repos/${OWNER}/${REPO}/issues/1/comments`, body: { body: renderRefusal('mallory') } }]);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toEqual([]);
  });

  it('a collaborator found by the permission check may run /swt reproduce; the maintainer re-run is forced', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    gh.on('GET', `/repos/${OWNER}/${REPO}/collaborators/octocat/permission`, 200, { permission: 'write' });
    defaultBranch(gh).thread(OWNER, REPO, 1);
    const payload = comment('/swt reproduce', 'CONTRIBUTOR', 'octocat');
    await deliver(app.url, 'issue_comment', payload);
    await settle();
    expect(gh.writes()).toEqual([{ method: 'POST', path: `/repos/${OWNER}/${REPO}/issues/1/comments`, body: { body: renderReproductionStarted({ branch: 'main', sha: MAIN_SHA }) } }]);
    // Forced, and keyed on the comment (not the delivery): a replayed comment runs nothing more.
    expect(await workUnder(`reproduce:${OWNER}/${REPO}#1@${MAIN_SHA}:comment:${OWNER}/${REPO}#${payload.comment.id}`)).toBe(JOB.reproduce);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
  });

  it('/swt help, an unknown word, and a command on the wrong kind of thread get help; comments by bots are ignored', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO).noConfig(OWNER, REPO).noConfig(OWNER, REPO);
    // Asked once: the answer is kept a minute for this installation, repository and user.
    gh.on('GET', `/repos/${OWNER}/${REPO}/collaborators/Codertocat/permission`, 200, { permission: 'admin' });
    gh.thread(OWNER, REPO, 1);
    await deliver(app.url, 'issue_comment', comment('/swt help', 'OWNER'));
    await settle();
    await deliver(app.url, 'issue_comment', comment('/swt deploy', 'MEMBER'));
    await settle();
    await deliver(app.url, 'issue_comment', comment('/swt validate', 'COLLABORATOR'));
    await settle();
    await deliver(app.url, 'issue_comment', example('issue_comment', 'created', (p) => ((p.comment.body = '/swt help'), (p.comment.user = { login: 'swt-bot[bot]', type: 'Bot' }))));
    await settle();
    expect(gh.writes().map((w) => [w.method, w.body.body])).toEqual([
      ['POST', renderHelp()],
      ['PATCH', renderHelp({ unknown: 'deploy' })],
      ['PATCH', renderHelp({ misplaced: 'validate' })],
    ]);
  });
});

const pullOpened = (patch: (p: any) => void = () => {}) =>
  example('pull_request', 'opened', (p) => {
    p.pull_request.body = 'Fixes #1';
    patch(p);
  }, 1);

const closingIssues = (numbers: number[]) => ({
  data: { repository: { pullRequest: { closingIssuesReferences: { nodes: numbers.map((number) => ({ number, repository: { nameWithOwner: `${OWNER}/${REPO}` } })) } } } },
});

describe('pull requests', () => {
  it('pull_request.opened linking an issue: check run in_progress at once (one write), the links from body and GraphQL, and the job becomes the validation', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    gh.on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 501 }).on('POST', '/graphql', 200, closingIssues([3]));
    await deliver(app.url, 'pull_request', pullOpened());
    await settle();
    expect(gh.calls.slice(2)).toEqual([
      {
        method: 'POST',
        path: `/repos/${OWNER}/${REPO}/check-runs`,
        body: { head_sha: HEAD_SHA, name: 'swt: reproduction', status: 'in_progress', output: renderCheckProgress('queued: finding the linked issues, then waiting for a free worker', []) },
      },
      { method: 'POST', path: '/graphql', body: { query: expect.stringContaining('closingIssuesReferences(first: 50)'), variables: { owner: OWNER, repo: REPO, number: 2 } } },
    ]);
    const jobs = await app.services.queue.list({ kind: JOB.validate });
    expect(jobs.map((j) => ({ payload: j.payload, group: j.group }))).toEqual([
      {
        payload: { target: { owner: OWNER, repo: REPO, installationId: INSTALLATION }, pr: 2, config: {}, headSha: HEAD_SHA, issues: [1, 3], checkRunId: 501, delivery: expect.any(String) },
        group: `${OWNER}/${REPO}#pr2`,
      },
    ]);
    expect(await workUnder(`validate:${OWNER}/${REPO}#2@${HEAD_SHA}:1,3`)).toBe(JOB.validate);
    expect(app.ran).toEqual([{ kind: JOB.validate, payload: jobs[0]!.payload }]);
  });

  it('the queue trips from a delivery to the job that runs the validation: one (the job posts the check run, then runs the validation)', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    gh.on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 509 }).on('POST', '/graphql', 200, closingIssues([1]));
    const trips: Array<[string, string]> = [];
    app.services.queue.on('started', (j) => trips.push([j.kind, (j.payload as { delivery?: string }).delivery ?? '']));
    const { id } = await deliver(app.url, 'pull_request', pullOpened());
    await settle();
    // Every job carries the delivery it descends from: one job, queued into the heavy lane, which became the validation and ran it.
    const chain = (await app.services.queue.list()).filter((j) => (j.payload as { delivery?: string }).delivery === id).map((j) => [j.kind, j.state]);
    expect(chain).toEqual([['validate', 'done']]);
    expect(trips).toEqual([['work', id]]);
    expect(app.ran.map((w) => [w.kind, w.payload.delivery, w.payload.checkRunId])).toEqual([['validate', id, 509]]);
  });

  it('a newer push supersedes the running check of the older head: it stops, and its check run is closed as cancelled', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO).noConfig(OWNER, REPO);
    const NEW_HEAD = 'a'.repeat(40);
    gh.on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 701 })
      .on('POST', '/graphql', 200, closingIssues([]))
      .on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 702 })
      .on('POST', '/graphql', 200, closingIssues([]))
      .on('PATCH', `/repos/${OWNER}/${REPO}/check-runs/701`, 200, {});
    // The older head's validation is still running when the push comes.
    app.hold = true;
    await deliver(app.url, 'pull_request', pullOpened());
    while (app.ran.length === 0) await new Promise((r) => setTimeout(r, 20));
    app.hold = false;
    await deliver(app.url, 'pull_request', example('pull_request', 'synchronize', (p) => ((p.pull_request.body = 'Fixes #1'), (p.pull_request.head.sha = NEW_HEAD))));
    await settle();
    expect(gh.writes().map((w) => [w.method, w.path, w.body.head_sha ?? w.body.conclusion])).toEqual([
      ['POST', `/repos/${OWNER}/${REPO}/check-runs`, HEAD_SHA],
      ['POST', `/repos/${OWNER}/${REPO}/check-runs`, NEW_HEAD],
      ['PATCH', `/repos/${OWNER}/${REPO}/check-runs/701`, 'cancelled'],
    ]);
    expect(gh.writes()[2]!.body.output).toEqual({ title: 'Superseded', summary: 'A newer push to this pull request (aaaaaaa) is checked instead.' });
    expect((await app.services.queue.list({ kind: JOB.validate })).map((j) => [j.state, (j.payload as { headSha: string }).headSha])).toEqual([
      ['cancelled', HEAD_SHA],
      ['done', NEW_HEAD],
    ]);
  });

  it('a PR with no linked issue: the check completes neutral and says how to link one', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    gh.on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 502 }).on('POST', '/graphql', 200, closingIssues([])).on('PATCH', `/repos/${OWNER}/${REPO}/check-runs/502`, 200, {});
    await deliver(app.url, 'pull_request', pullOpened((p) => (p.pull_request.body = 'A simple change.')));
    await settle();
    expect(gh.writes().at(-1)).toEqual({
      method: 'PATCH',
      path: `/repos/${OWNER}/${REPO}/check-runs/502`,
      body: { status: 'completed', conclusion: 'neutral', completed_at: expect.any(String), output: renderNoLinkedIssue() },
    });
    expect(await app.services.queue.list({ kind: JOB.validate })).toEqual([]);
  });

  it("a fork's PR goes to the heavy lane, which gates it on the git diff; /swt validate approves the head seen before the comment, once per comment", async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    const fork = (p: any) => {
      p.pull_request.head.repo = { ...p.pull_request.head.repo, full_name: 'mallory/Hello-World', fork: true };
    };
    gh.on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 503 }).on('POST', '/graphql', 200, closingIssues([1]));
    // Its validation is still running (waiting for the heavy lane's containers) when the maintainer comments.
    app.hold = true;
    await deliver(app.url, 'pull_request', pullOpened(fork));
    while (app.ran.length === 0) await new Promise((r) => setTimeout(r, 20));
    app.hold = false;
    // No list of the PR's files is asked for: that list stops at 3,000 files and leaves out the base's own changes.
    expect(gh.calls.some((c) => c.path.includes('/files'))).toBe(false);
    expect((await app.services.queue.list({ kind: JOB.validate })).map((j) => (j.payload as { checkRunId: number }).checkRunId)).toEqual([503]);
    expect(await app.services.store.isApproved({ owner: OWNER, repo: REPO }, 2, HEAD_SHA)).toBe(false);

    // The maintainer approves after seeing that head: a new check run, and a forced validation.
    const pull = pullOpened(fork).pull_request;
    gh.noConfig(OWNER, REPO)
      .on('GET', `/repos/${OWNER}/${REPO}/collaborators/Codertocat/permission`, 200, { permission: 'admin' })
      .on('GET', `/repos/${OWNER}/${REPO}/pulls/2`, 200, pull)
      .on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 504 })
      .on('POST', '/graphql', 200, closingIssues([1]))
      // The forced run supersedes the running one: its check run is closed.
      .on('PATCH', `/repos/${OWNER}/${REPO}/check-runs/503`, 200, {});
    const approval = example('issue_comment', 'created', (p) => {
      p.issue.number = 2;
      p.issue.pull_request = { url: 'x' };
      p.comment.body = '/swt validate';
      p.comment.created_at = new Date(Date.now() + 1000).toISOString();
      p.comment.author_association = 'OWNER';
    });
    await deliver(app.url, 'issue_comment', approval);
    await settle();
    expect(await app.services.store.isApproved({ owner: OWNER, repo: REPO }, 2, HEAD_SHA)).toBe(true);
    // The same comment again, under a new delivery id: nothing more is asked or queued.
    gh.noConfig(OWNER, REPO);
    await deliver(app.url, 'issue_comment', approval, { id: 'replayed-delivery' });
    await settle();
    expect(gh.writes().filter((w) => w.path.endsWith('/check-runs/503')).map((w) => w.body.conclusion)).toEqual(['cancelled']);
    expect((await app.services.queue.list({ kind: JOB.validate })).map((j) => [(j.payload as { checkRunId: number }).checkRunId, j.state])).toEqual([
      [503, 'cancelled'],
      [504, 'done'],
    ]);
    // The replay added no job: its body is the comment's.
    expect(await app.services.queue.list()).toHaveLength(2);
    expect(gh.calls.filter((c) => c.path === `/repos/${OWNER}/${REPO}/pulls/2`)).toHaveLength(1);
  });

  it('a bad config on a PR: the check says which key, with action_required', async () => {
    const gh = mockGitHub().config(OWNER, REPO, 'gate:\n  autors: [x]\n');
    gh.on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id: 505 });
    await deliver(app.url, 'pull_request', pullOpened());
    await settle();
    expect(gh.writes()).toEqual([
      {
        method: 'POST',
        path: `/repos/${OWNER}/${REPO}/check-runs`,
        body: {
          head_sha: HEAD_SHA,
          name: 'swt: reproduction',
          status: 'completed',
          conclusion: 'action_required',
          completed_at: expect.any(String),
          details_url: `https://github.com/${OWNER}/${REPO}/blob/HEAD/.github/swt.yml`,
          output: { title: 'Invalid .github/swt.yml', summary: 'swt-bot cannot run: the configuration is invalid.\n\n```text\n.github/swt.yml: gate.autors: unknown key\n```' },
        },
      },
    ]);
  });

  it('check_run.rerequested and the Re-run button queue a fresh run of the same head', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO).noConfig(OWNER, REPO);
    const pull = pullOpened().pull_request;
    for (const id of [601, 602]) {
      gh.on('GET', `/repos/${OWNER}/${REPO}/pulls/2`, 200, pull)
        .on('POST', `/repos/${OWNER}/${REPO}/check-runs`, 201, { id })
        .on('POST', '/graphql', 200, closingIssues([]))
        .on('PATCH', `/repos/${OWNER}/${REPO}/check-runs/${id}`, 200, {});
    }
    const rerun = (action: string) =>
      example('check_run', action, (p) => {
        p.check_run.name = 'swt: reproduction';
        p.check_run.head_sha = HEAD_SHA;
        p.check_run.pull_requests = [{ number: 2 }];
        p.repository.owner.login = OWNER;
        p.repository.name = REPO;
        if (action === 'requested_action') p.requested_action = { identifier: RERUN_ACTION.identifier };
      });
    await deliver(app.url, 'check_run', rerun('rerequested'));
    await settle();
    await deliver(app.url, 'check_run', rerun('requested_action'));
    await settle();
    expect(gh.writes().filter((w) => w.path.endsWith('/check-runs')).map((w) => w.body.head_sha)).toEqual([HEAD_SHA, HEAD_SHA]);
    // Another app's check run, or another button: nothing.
    await deliver(app.url, 'check_run', example('check_run', 'rerequested', (p) => (p.check_run.name = 'CI')));
    await settle();
    expect(gh.writes().filter((w) => w.path.endsWith('/check-runs'))).toHaveLength(2);
    expect((await app.services.queue.list({ kind: JOB.validate })).map((j) => j.state)).toEqual(['done', 'done']);
    expect((await app.services.queue.list({ kind: JOB.work })).map((j) => j.state)).toEqual(['done']);
  });
});

describe('GitHub misbehaving', () => {
  it('500 then 200: the request is tried again and the comment posted once', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    defaultBranch(gh).on('POST', `/repos/${OWNER}/${REPO}/issues/1/comments`, 500, { message: 'Server Error' });
    const comments = gh.thread(OWNER, REPO, 1);
    await deliver(app.url, 'issues', example('issues', 'opened'));
    await settle();
    // The failed POST created nothing; the thread was looked at, and the comment posted once.
    expect(gh.writes().map((w) => w.method + ' ' + w.path)).toEqual([`POST /repos/${OWNER}/${REPO}/issues/1/comments`, `POST /repos/${OWNER}/${REPO}/issues/1/comments`]);
    expect(comments.map((c) => c.body)).toEqual([renderReproductionStarted({ branch: 'main', sha: MAIN_SHA })]);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
    expect((await app.services.queue.list({ kind: JOB.reproduce }))[0]).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('a POST that GitHub carried out but answered 500: nothing is posted twice (counted on the thread)', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    defaultBranch(gh);
    const comments = gh.thread(OWNER, REPO, 1, 1000, { createThen500: 1 });
    await deliver(app.url, 'issues', example('issues', 'opened'));
    await settle();
    // Octokit's retry would have posted it again; the App looks for its marker first and finds it.
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toBe(renderReproductionStarted({ branch: 'main', sha: MAIN_SHA }));
    expect(gh.writes().map((w) => w.method + ' ' + w.path)).toEqual([`POST /repos/${OWNER}/${REPO}/issues/1/comments`]);
    expect(await app.services.queue.list({ kind: JOB.reproduce })).toHaveLength(1);
    expect((await app.services.queue.list({ kind: JOB.reproduce }))[0]).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('403 with x-ratelimit-remaining: 0: throttled until the reset, then done', async () => {
    await app.stop();
    app = await startTestApp({ Octokit: testOctokit(true) });
    const gh = mockGitHub().noConfig(OWNER, REPO);
    const reset = String(Math.floor(Date.now() / 1000));
    defaultBranch(gh)
      .on('POST', `/repos/${OWNER}/${REPO}/issues/1/comments`, 403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset })
      .thread(OWNER, REPO, 1);
    await deliver(app.url, 'issues', example('issues', 'opened'));
    await settle();
    expect(gh.writes()).toHaveLength(2);
    expect((await app.services.queue.list({ kind: JOB.reproduce }))[0]).toMatchObject({ state: 'done' });
  });

  it('GitHub down for every attempt: the job fails after its retries with a one-line error, and nothing is half-posted', async () => {
    const gh = mockGitHub().noConfig(OWNER, REPO);
    // Each attempt reads the config again, then meets the outage.
    gh.noConfig(OWNER, REPO).noConfig(OWNER, REPO);
    for (let i = 0; i < 12; i++) gh.on('GET', `/repos/${OWNER}/${REPO}`, 503, { message: 'Service Unavailable' });
    await deliver(app.url, 'issues', example('issues', 'opened'));
    // The queue retries with backoff; give it its three attempts.
    await app.services.queue.drain(60_000);
    const [event] = await app.services.queue.list({ kind: JOB.work });
    expect(event).toMatchObject({ state: 'failed', attempts: 3 });
    expect(event!.error).toMatch(/^Service Unavailable/);
    expect(gh.writes()).toEqual([]);
  }, 60_000);

  it('a worker process takes no webhook (404, nothing queued); any process answers 404 off its routes', async () => {
    const worker = await startTestApp({ role: 'worker' });
    try {
      const r = await deliver(worker.url, 'issues', example('issues', 'opened'));
      expect(r.status).toBe(404);
      expect(await worker.services.queue.list()).toEqual([]);
      expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    } finally {
      await worker.stop();
    }
    const off = await fetch(`${app.url}/no-such-route`);
    expect([off.status, await off.text()]).toEqual([404, 'not found\n']);
  });

  it('a webhook with a wrong signature is refused, and nothing is recorded', async () => {
    const r = await deliver(app.url, 'issues', example('issues', 'opened'), { secret: 'not-the-secret' });
    expect(r.status).toBe(400);
    expect(await app.services.queue.list()).toEqual([]);
  });
});
