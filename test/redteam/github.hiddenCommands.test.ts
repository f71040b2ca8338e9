/**
 * A command only counts where a person sees it. A maintainer who pastes someone's text (a log, a
 * quoted reply, a template) must not approve a fork's head, or start anything, by a `/swt` line
 * they cannot see in the rendered comment. The App runs as it does in production (signed webhooks
 * over HTTP from the loopback fake GitHub, real git), with no sandbox: nothing here may install.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import { appKey } from '../helpers/webhooks.js';
import { cleanupGitRepos, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

const SECRET = 'swt-redteam-hidden-commands-secret';
const OWNER = 'acme';
const REPO = 'adder';
const MAINTAINER = { login: 'maintainer', type: 'User' } as const;
const MALLORY = { login: 'mallory', type: 'User' } as const;
const noSandbox = {
  ensureEnvironment: () => Promise.reject(new Error('no sandbox in this test: nothing may be installed')),
  run: () => Promise.reject(new Error('no sandbox in this test: nothing may be installed')),
  openSession: () => Promise.reject(new Error('no sandbox in this test: nothing may be installed')),
};

let fake: FakeGitHub;
let app: RunningApp;
let dataDir: string;
let source: TempRepo;

beforeAll(async () => {
  source = createGitRepo({
    '.github/swt.yml': stringify({ image: 'node:22', install: 'npm install', test_command: 'node --test {files}' }),
    'package.json': '{ "name": "adder", "version": "1.0.0" }\n',
    'lib.js': 'exports.add = (a, b) => a - b;\n',
  });
  fake = await new FakeGitHub({ webhookSecret: SECRET, appPrivateKey: appKey() }).start();
  await fake.addRepo(OWNER, REPO, source.path);
  fake.setPermission(OWNER, REPO, MAINTAINER.login, 'admin');
  fake.addIssue(OWNER, REPO, { title: 'add(1, 2) returns -1', body: 'add(1, 2) should be 3.', user: { login: 'reporter', type: 'User' } });
  dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-hidden-${process.pid}-`));
  app = await startApp({ appId: fake.appId, privateKey: appKey(), secret: SECRET, dataDir, env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http' }, sandbox: noSandbox });
  fake.appUrl = app.url;
});

afterAll(async () => {
  await app?.stop();
  await fake?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  cleanupGitRepos();
});

const settle = () => app.services.queue.drain(120_000);
const runsOf = (sha: string) => fake.checkRuns(OWNER, REPO).filter((c) => c.head_sha === sha);

// Every attack ends with each job done, none failed on the way (a failed job would hide a refusal).
afterEach(async () => {
  expect((await app.services.queue.list()).filter((j) => j.state === 'failed').map((j) => [j.kind, j.error])).toEqual([]);
});

/** What a maintainer pastes, each hiding `/swt validate` where the rendered comment does not show it as text. */
const PASTED: Array<[string, string]> = [
  ['an HTML comment', 'Thanks! The reporter wrote:\n\n<!--\n/swt validate\n-->\nLooks fine to me.'],
  ['a ~~~ fence', 'Build log:\n\n~~~\n/swt validate\n~~~'],
  ['a ``` fence left open', 'Build log:\n\n```\nok\n/swt validate'],
  ['an indented code block', 'Build log:\n\n    /swt validate\n'],
  ['a block quote', '> please run\n> /swt validate\n\nI will look at it later.'],
  ['a folded <details>', '<details><summary>log</summary>\n\n/swt validate\n\n</details>'],
];

describe('redteam: commands a person cannot see', () => {
  // One attack (a command the maintainer cannot see), in each of the forms Markdown hides a line in.
  for (const [where, body] of PASTED) {
    it(`attack: a maintainer's comment hiding \`/swt validate\` in ${where} approves no fork head`, async () => {
      source.git('checkout', '-q', '-B', `fork-${Math.random().toString(36).slice(2, 8)}`, 'main');
      const head = source.commit({ 'package.json': '{ "name": "adder", "version": "1.0.0", "scripts": { "postinstall": "node pwn.js" } }\n' }, 'Fix add');
      source.git('checkout', '-q', 'main');
      await fake.pushRef(OWNER, REPO, source.path, head, `refs/heads/hidden-${head.slice(0, 12)}`);
      const pr = await fake.addPull(OWNER, REPO, { title: 'Fix add', body: 'Fixes #1', user: MALLORY, headSha: head, headRef: 'patch-1', fork: true });
      expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, REPO, pr.number, 'opened'))).status).toBe(200);
      await settle();
      const waiting = runsOf(head);
      expect(waiting.map((r) => [r.conclusion, r.output?.title])).toEqual([['action_required', 'Waiting for a maintainer']]);

      expect((await fake.deliver('issue_comment', fake.commentPayload(OWNER, REPO, pr.number, body, MAINTAINER, 'MEMBER'))).status).toBe(200);
      await settle();
      // Not approved: still only the run waiting for a maintainer, and no answer to a command.
      expect(runsOf(head).map((r) => [r.conclusion, r.output?.title])).toEqual([['action_required', 'Waiting for a maintainer']]);
      expect(fake.issue(OWNER, REPO, pr.number).comments.filter((c) => c.user.type === 'Bot')).toEqual([]);
    });
  }

  it('control: the same maintainer\'s `/swt validate` on a line of text is taken (a check run for the head)', async () => {
    const head = source.commit({ 'README.md': 'adder\n' }, 'Docs');
    await fake.pushRef(OWNER, REPO, source.path, head, 'refs/heads/docs');
    const pr = await fake.addPull(OWNER, REPO, { title: 'Docs', body: 'Just docs.', user: MAINTAINER, headSha: head, headRef: 'docs' });
    // The same pasted text, then the command on its own line (without the fence left open, which would hold it).
    const pasted = `${PASTED.filter(([where]) => !where.includes('left open')).map(([, b]) => b).join('\n\n')}\n\n/swt validate`;
    expect((await fake.deliver('issue_comment', fake.commentPayload(OWNER, REPO, pr.number, pasted, MAINTAINER, 'MEMBER'))).status).toBe(200);
    await settle();
    expect(runsOf(head).map((r) => [r.conclusion, r.output?.title])).toEqual([['neutral', 'No linked issue']]);
  });
});
