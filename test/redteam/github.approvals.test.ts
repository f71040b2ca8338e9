/**
 * Attacks on the approval gate, the command permissions and draft PRs, against the App as it runs:
 * signed webhooks over HTTP from the loopback fake GitHub (REST and git), real git repositories,
 * the scripted model, and real containers wherever an install would run.
 *
 * "Nothing installed" is read from the Docker engine: no environment image was built with the
 * attacker's head as its snapshot, and no image built here holds the marker the head's install
 * script writes. The control in the push-after-approval attack shows that the same look does find
 * the marker once a maintainer approves that head.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import type { CheckRun } from '../../src/demo/fakeGitHubModel.js';
import { JOB } from '../../src/jobs/payloads.js';
import { connectDocker } from '../../src/sandbox/docker.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { appKey } from '../helpers/webhooks.js';
import { containersOfOursOnceRetired, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { msg, startScriptedLlm, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const SECRET = 'swt-redteam-approvals-secret';
const OWNER = 'acme';
const REPO = 'adder';
const MARKER = 'PWNED-by-fork-install';
const MAINTAINER = { login: 'maintainer', type: 'User' } as const;
const MALLORY = { login: 'mallory', type: 'User' } as const;

const CONFIG = stringify({
  image: 'node:22',
  install: 'npm install --no-audit --no-fund',
  test_command: 'node --test {files}',
  generation: { strategy: 'zero-shot-plus' },
  issues: { draft_pr: true },
});
const pkg = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'adder', version: '1.0.0', private: true, scripts: { postinstall: 'node scripts/setup.js' }, ...extra }, null, 2) + '\n';
const lock = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'adder', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'adder', version: '1.0.0', hasInstallScript: true, ...extra } } }, null, 2) + '\n';
const BENIGN_SETUP = "console.log('setup: nothing to do');\n";
// What a fork's install script does: anything, with registry egress and the package cache mounted. Here: leave a mark.
const EVIL_SETUP = `require('node:fs').writeFileSync('${MARKER}', 'a fork head was installed');\n`;
const TEST_FILE = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../lib.js');\ntest('adds zero', () => assert.strictEqual(add(0, 0), 0));\n";
const MODEL_TEST = "```custom-diff\ndiff\ntest/add.test.js\ninsert\nEOF\ntest('adds two numbers', () => assert.strictEqual(add(1, 2), 3));\nend diff\n```";

let fake: FakeGitHub;
let app: RunningApp;
let llm: ScriptedLlm;
let dataDir: string;
let source: TempRepo;
let oldMain: string;
let main: string;
const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };

beforeAll(async () => {
  llm = await startScriptedLlm(() => msg(MODEL_TEST));
  process.env.OPENAI_BASE_URL = llm.baseURL;
  process.env.OPENAI_API_KEY = 'sk-redteam-scripted-model-key';
  source = createGitRepo({
    '.github/swt.yml': CONFIG,
    'package.json': pkg(),
    'package-lock.json': lock(),
    'scripts/setup.js': BENIGN_SETUP,
    'lib.js': 'exports.add = (a, b) => a - b;\n',
    'test/add.test.js': TEST_FILE,
  });
  oldMain = source.sha;
  // main moves on: a lockfile bump, after which forks of the old main differ from it in a manifest they never touched.
  main = source.commit({ 'package-lock.json': lock({ license: 'MIT' }) }, 'Bump the lockfile');
  fake = await new FakeGitHub({ webhookSecret: SECRET, appPrivateKey: appKey() }).start();
  await fake.addRepo(OWNER, REPO, source.path);
  fake.setPermission(OWNER, REPO, MAINTAINER.login, 'admin');
  // The issue every PR here says it fixes.
  fake.addIssue(OWNER, REPO, { title: 'add(1, 2) returns -1', body: 'add(1, 2) should be 3 but it returns -1.', user: { login: 'reporter', type: 'User' } });
  dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-${process.pid}-`));
  app = await startApp({
    appId: fake.appId,
    privateKey: appKey(),
    secret: SECRET,
    dataDir,
    env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http' },
    sandbox: createDockerSandbox(),
    progressIntervalMs: 200,
  });
  fake.appUrl = app.url;
});

afterAll(async () => {
  await app?.stop();
  await fake?.close();
  await llm?.close();
  rmSync(dataDir, { recursive: true, force: true });
  for (const [k, v] of [['OPENAI_BASE_URL', saved.url], ['OPENAI_API_KEY', saved.key]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expect(containersOfOursOnceRetired()).toBe('');
});

const settle = () => app.services.queue.drain(15 * 60_000);

// Every attack ends with each job done (or superseded), none failed on the way.
afterEach(async () => {
  expect((await app.services.queue.list()).filter((j) => j.state === 'failed').map((j) => [j.kind, j.error])).toEqual([]);
});

/** A fork's head: a commit on `parent` in the source repository, pushed only as the PR's ref. */
function forkCommit(parent: string, files: Record<string, string>, message: string): string {
  source.git('checkout', '-q', parent);
  try {
    return source.commit(files, message);
  } finally {
    source.git('checkout', '-q', 'main');
  }
}

async function openForkPull(head: string, title: string): Promise<number> {
  await fake.pushRef(OWNER, REPO, source.path, head, `refs/heads/swt-redteam-${head.slice(0, 12)}`);
  const pr = await fake.addPull(OWNER, REPO, { title, body: 'Fixes #1', user: MALLORY, headSha: head, headRef: 'patch-1', fork: true });
  expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, REPO, pr.number, 'opened'))).status).toBe(200);
  return pr.number;
}

const runsOf = (sha: string): CheckRun[] => fake.checkRuns(OWNER, REPO).filter((c) => c.head_sha === sha);

/** The environment images this process's commits were built from (label `swt-bot.env.snapshotRev`). */
async function envImages(): Promise<Array<{ id: string; snapshot: string }>> {
  const ours = new Set(commitsMade());
  const images = await connectDocker().listImages({ filters: { label: ['swt-bot.env.snapshotRev'] } });
  return images.map((i) => ({ id: i.Id, snapshot: i.Labels?.['swt-bot.env.snapshotRev'] ?? '' })).filter((i) => ours.has(i.snapshot));
}

/** Does the image hold /testbed/<MARKER>? Read with `docker cp` from a created (never started) container of it. */
function holdsMarker(image: string): boolean {
  const id = execFileSync('docker', ['create', '--network', 'none', '--label', 'swt-bot', '--label', `swt-bot.pid=${process.pid}`, image, 'true'], { encoding: 'utf8' }).trim();
  try {
    const r = spawnSync('docker', ['cp', `${id}:/testbed/${MARKER}`, '-'], { encoding: 'utf8' });
    if (r.status === 0) return true;
    if (/Could not find the file|No such container:path/i.test(r.stderr)) return false;
    throw new Error(`docker cp failed: ${r.stderr.trim()}`);
  } finally {
    execFileSync('docker', ['rm', '-f', id], { stdio: 'ignore' });
  }
}

/** Nothing of `head` was installed: no environment image of it, and no image built here holds the marker. */
async function expectNotInstalled(head: string): Promise<void> {
  const images = await envImages();
  expect(images.filter((i) => i.snapshot === head)).toEqual([]);
  for (const i of images) expect(holdsMarker(i.id)).toBe(false);
}

function expectAwaitingApproval(head: string, manifests: string[]): void {
  const runs = runsOf(head);
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ status: 'completed', conclusion: 'action_required', output: { title: 'Waiting for a maintainer' } });
  expect(runs[0]!.output!.summary).toContain(manifests.map((m) => `- \`${m}\``).join('\n'));
  expect(runs[0]!.output!.summary).toContain(`\`/swt validate ${head}\``);
}

describe('redteam: fork approvals, command permissions, draft PRs', () => {
  it('attack: a fork branched before a lockfile bump, whose head changes only its install script, installs nothing unapproved', async () => {
    const head = forkCommit(oldMain, { 'scripts/setup.js': EVIL_SETUP }, 'Speed up setup');
    // GitHub's list of the PR's changes (the three-dot diff) shows no manifest; the head still differs from main in the lockfile.
    expect(source.git('diff', '--name-only', `${main}...${head}`).trim().split('\n')).toEqual(['scripts/setup.js']);
    expect(source.git('diff', '--name-only', main, head).trim().split('\n')).toEqual(['package-lock.json', 'scripts/setup.js']);
    const pr = await openForkPull(head, 'Speed up setup');
    await settle();
    expectAwaitingApproval(head, ['package-lock.json']);
    expect(await app.services.store.isApproved({ owner: OWNER, repo: REPO }, pr, head)).toBe(false);
    await expectNotInstalled(head);
    expect(llm.requests).toHaveLength(0);
  });

  it('attack: a fork PR of 3,001 files, its manifest change past GitHub\'s 3,000-file list, installs nothing unapproved', async () => {
    const filler = Object.fromEntries(Array.from({ length: 3000 }, (_, n) => [`gen/f${String(n).padStart(4, '0')}.js`, `module.exports = ${n};\n`]));
    const head = forkCommit(main, { ...filler, 'package.json': pkg({ description: 'generated' }), 'scripts/setup.js': EVIL_SETUP }, 'Generated tables');
    const changed = source.git('diff', '--name-only', `${main}...${head}`).trim().split('\n');
    expect(changed).toHaveLength(3002);
    // GitHub lists the first 3,000: package.json is not among them.
    expect(changed.slice(0, 3000).includes('package.json')).toBe(false);
    const pr = await openForkPull(head, 'Generated tables');
    await settle();
    expectAwaitingApproval(head, ['package.json']);
    expect(await app.services.store.isApproved({ owner: OWNER, repo: REPO }, pr, head)).toBe(false);
    await expectNotInstalled(head);
  });

  it('attack: a push right after `/swt validate` is not approved by it: the pushed head installs nothing until approved by its sha', async () => {
    const seen = forkCommit(main, { 'package.json': pkg({ description: 'faster add' }), 'lib.js': 'exports.add = (a, b) => a + b;\n' }, 'Fix add');
    const pr = await openForkPull(seen, 'Fix add');
    await settle();
    expectAwaitingApproval(seen, ['package.json']);
    // The maintainer approves what they saw; the attacker pushes before the App reads the comment.
    const approval = fake.commentPayload(OWNER, REPO, pr, '/swt validate', MAINTAINER, 'MEMBER');
    await new Promise((r) => setTimeout(r, 20));
    const pushed = forkCommit(seen, { 'scripts/setup.js': EVIL_SETUP }, 'Tidy setup');
    await fake.pushToPull(OWNER, REPO, pr, source.path, pushed);
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, REPO, pr, 'synchronize'))).status).toBe(200);
    expect((await fake.deliver('issue_comment', approval)).status).toBe(200);
    await settle();
    expect(await app.services.store.isApproved({ owner: OWNER, repo: REPO }, pr, pushed)).toBe(false);
    // Its check runs (the push's, and the comment's forced one) end waiting for a maintainer, or superseded by each other.
    const runs = runsOf(pushed);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs.every((r) => r.status === 'completed' && ['action_required', 'cancelled'].includes(r.conclusion ?? ''))).toBe(true);
    expect(runs.some((r) => r.conclusion === 'action_required')).toBe(true);
    const notice = fake.issue(OWNER, REPO, pr).comments.filter((c) => c.user.type === 'Bot').map((c) => c.body);
    expect(notice).toEqual([
      `<!-- swt-bot:notice -->\n@maintainer: \`/swt validate\` came before the head ${pushed.slice(0, 7)} was pushed (or before swt-bot saw it), so it does not approve that head. To approve it, comment \`/swt validate ${pushed}\`.`,
    ]);
    await expectNotInstalled(pushed);
    expect(llm.requests).toHaveLength(0);

    // Control: approved by its sha, the same head is installed, and the same look finds its marker.
    expect((await fake.deliver('issue_comment', fake.commentPayload(OWNER, REPO, pr, `/swt validate ${pushed}`, MAINTAINER, 'MEMBER'))).status).toBe(200);
    await settle();
    expect(await app.services.store.isApproved({ owner: OWNER, repo: REPO }, pr, pushed)).toBe(true);
    const last = runsOf(pushed).at(-1)!;
    expect(last.status).toBe('completed');
    expect(last.output!.title).not.toBe('Waiting for a maintainer');
    const installed = (await envImages()).filter((i) => i.snapshot === pushed);
    expect(installed).toHaveLength(1);
    expect(holdsMarker(installed[0]!.id)).toBe(true);
  });

  it("attack: a read-only MEMBER's `/swt validate` is refused (GitHub's permission API is asked); a writer's is accepted", async () => {
    const head = source.commit({ 'README.md': 'adder\n' }, 'Docs');
    await fake.pushRef(OWNER, REPO, source.path, head, 'refs/heads/docs');
    const pr = await fake.addPull(OWNER, REPO, { title: 'Docs', body: 'Just docs.', user: MAINTAINER, headSha: head, headRef: 'docs' });
    fake.setPermission(OWNER, REPO, 'reader', 'read');
    const reader = { login: 'reader', type: 'User' } as const;
    expect((await fake.deliver('issue_comment', fake.commentPayload(OWNER, REPO, pr.number, '/swt validate', reader, 'MEMBER'))).status).toBe(200);
    await settle();
    expect(fake.calls.some((c) => c.method === 'GET' && c.path.endsWith(`/repos/${OWNER}/${REPO}/collaborators/reader/permission`))).toBe(true);
    const bot = () => fake.issue(OWNER, REPO, pr.number).comments.filter((c) => c.user.type === 'Bot');
    expect(bot().map((c) => c.body)).toEqual([
      '<!-- swt-bot:refusal -->\nSorry @reader, only people with write access to this repository can run swt-bot commands. A maintainer can run `/swt reproduce` or `/swt validate` here for you. (swt-bot says this once per thread.)',
    ]);
    expect(runsOf(head)).toEqual([]);

    expect((await fake.deliver('issue_comment', fake.commentPayload(OWNER, REPO, pr.number, '/swt validate', MAINTAINER, 'MEMBER'))).status).toBe(200);
    await settle();
    // Accepted: a check run for the head (it links no issue, so it says how to link one).
    expect(runsOf(head).map((r) => [r.conclusion, r.output?.title])).toEqual([['neutral', 'No linked issue']]);
    expect(bot()).toHaveLength(1);
  });

  it('attack: a replayed `/swt validate` (same comment id, new delivery id) runs once', async () => {
    const head = source.commit({ 'README.md': 'adder: adds\n' }, 'More docs');
    await fake.pushRef(OWNER, REPO, source.path, head, 'refs/heads/more-docs');
    const pr = await fake.addPull(OWNER, REPO, { title: 'More docs', body: 'Just docs.', user: MAINTAINER, headSha: head, headRef: 'more-docs' });
    const command = fake.commentPayload(OWNER, REPO, pr.number, '/swt validate', MAINTAINER, 'MEMBER');
    const deliveries = await Promise.all(['first', 'replay-1', 'replay-2'].map((id) => fake.deliver('issue_comment', command, { id: `redteam-${id}` })));
    expect(deliveries.map((d) => d.status).every((s) => s === 200 || s === 202)).toBe(true);
    await settle();
    expect(runsOf(head)).toHaveLength(1);
    // One job for the three deliveries of one body: it became the validation.
    expect((await app.services.queue.list<{ delivery?: string }>()).filter((j) => j.payload.delivery?.startsWith('redteam-'))).toHaveLength(1);
  });

  it('attack: `issues.draft_pr` does not push model-written code to a branch for an issue opened by a non-writer', async () => {
    // issue #1 was opened by "reporter", who has read access only (the fake GitHub's default).
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, REPO, 1, 'opened'))).status).toBe(200);
    await settle();
    const issue = fake.issue(OWNER, REPO, 1);
    expect(issue.labels).toEqual(['reproduced']);
    const comment = issue.comments.find((c) => c.body.startsWith('<!-- swt-bot:reproduction -->'))!.body;
    expect(comment).toContain(
      "Could not open a draft pull request with the test: not for an issue opened by @reporter, who cannot write to this repository: a branch here would run its push workflows, with its secrets, on code a model wrote.",
    );
    // Nothing was pushed: no branch, no content write, no pull request by the App.
    expect(fake.calls.filter((c) => c.method !== 'GET' && /\/git\/refs|\/contents\/|\/pulls$/.test(c.path))).toEqual([]);
    expect(await fake.readFile(OWNER, REPO, 'refs/heads/swt/reproduce-1', 'test/add.test.js')).toBeUndefined();
  });
});
