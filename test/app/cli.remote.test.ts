/**
 * `swt reproduce <issue URL>` and `swt validate <PR URL>` with GITHUB_TOKEN against the fake
 * GitHub (as a GHES): the App's jobs on real containers, printed without --post, posted with it.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { parseGitHubUrl } from '../../src/cli/remote.js';
import { containersOfOursOnceRetired, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { fixtureOnFakeGitHub, MAINTAINER_TOKEN, OWNER, REPO, type FixtureGitHub } from '../helpers/fixtureGitHub.js';

let fx: FixtureGitHub;
let dataDir: string;
const saved = { token: process.env.GITHUB_TOKEN, data: process.env.SWT_DATA_DIR };

beforeAll(async () => {
  fx = await fixtureOnFakeGitHub('snippet');
  fx.fake.addIssue(OWNER, REPO, { title: fx.fx.issue.title, body: fx.fx.issue.body });
  await fx.fake.addPull(OWNER, REPO, { title: 'Parse combined units', body: 'Fixes #1', user: { login: 'alice', type: 'User' }, headSha: fx.goodFix, headRef: 'fix' });
  dataDir = mkdtempSync(join(tmpdir(), `swt-clitest-${process.pid}-`));
  process.env.SWT_DATA_DIR = dataDir;
  process.env.GITHUB_TOKEN = MAINTAINER_TOKEN;
});

afterAll(async () => {
  await fx?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
  for (const [k, v] of [['GITHUB_TOKEN', saved.token], ['SWT_DATA_DIR', saved.data]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await removeEnvImagesBuiltFrom([fx.base]);
  expect(containersOfOursOnceRetired()).toBe('');
});

async function swt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((stdout += c.toString()), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((stderr += c.toString()), true));
  const before = process.exitCode;
  try {
    const code = await main(['node', 'swt', '--quiet', ...args]);
    const exit = code || Number(process.exitCode ?? 0);
    return { code: exit, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = before;
  }
}

const writes = () => fx.fake.calls.filter((c) => c.method !== 'GET' && c.path !== '/graphql' && !c.path.includes('.git/'));

describe('swt reproduce|validate <URL> with GITHUB_TOKEN', () => {
  it('reads github.com and GHES URLs', () => {
    expect(parseGitHubUrl('https://github.com/octo/app/issues/12')).toEqual({ owner: 'octo', repo: 'app', kind: 'issue', number: 12, web: 'https://github.com', api: 'https://api.github.com' });
    expect(parseGitHubUrl('http://ghe.corp:8080/octo/app/pull/3')).toMatchObject({ kind: 'pull', number: 3, web: 'http://ghe.corp:8080', api: 'http://ghe.corp:8080/api/v3' });
  });

  it('bad input: a clear one-line error, exit 2, nothing posted', async () => {
    expect(await swt('reproduce', 'https://github.com/octo/app/wiki/12')).toMatchObject({ code: 2, stderr: 'swt: error: not an issue or pull request URL: https://github.com/octo/app/wiki/12 (e.g. https://github.com/owner/repo/issues/12)\n' });
    expect(await swt('validate', `${fx.fake.url}/${OWNER}/${REPO}/issues/1`)).toMatchObject({ code: 2, stderr: `swt: error: ${fx.fake.url}/${OWNER}/${REPO}/issues/1 is an issue: use swt reproduce\n` });
    expect(await swt('reproduce', '--repo', '.')).toMatchObject({ code: 2, stderr: "swt: error: required option '--rev <rev>' not specified (or give an issue URL)\n" });
    delete process.env.GITHUB_TOKEN;
    try {
      expect((await swt('reproduce', `${fx.fake.url}/${OWNER}/${REPO}/issues/1`)).stderr).toMatch(/^swt: error: GITHUB_TOKEN is not set \(/);
    } finally {
      process.env.GITHUB_TOKEN = MAINTAINER_TOKEN;
    }
    expect(writes()).toEqual([]);
  });

  it('swt reproduce <issue URL>: prints the comment and the label, posts nothing; with --post it posts them', async () => {
    const url = `${fx.fake.url}/${OWNER}/${REPO}/issues/1`;
    const dry = await swt('reproduce', url);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^Would post \(nothing was posted; add --post to post it\):\n\n### Comment on #1\n\n<!-- swt-bot:reproduction -->\n### 🧪 swt-bot reproduced this issue\n/);
    expect(dry.stdout).toContain('### Labels on #1: +reproduced');
    expect(writes()).toEqual([]);
    expect(fx.fake.issue(OWNER, REPO, 1).comments).toEqual([]);

    const posted = await swt('reproduce', url, '--post', '--json');
    expect(posted.code).toBe(0);
    const result = JSON.parse(posted.stdout.trim().split('\n').pop()!);
    expect(result).toMatchObject({ posted: true, state: 'done', reproduced: true });
    const comments = fx.fake.issue(OWNER, REPO, 1).comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.user).toEqual({ login: 'maintainer', type: 'User' });
    expect(comments[0]!.body).toBe(result.posts.filter((p: { kind: string }) => p.kind === 'comment').pop().body);
    expect(fx.fake.issue(OWNER, REPO, 1).labels).toEqual(['reproduced']);
  });

  it('swt validate <PR URL>: prints the check and the comment; with --post it posts the comment (a check run needs the App)', async () => {
    const url = `${fx.fake.url}/${OWNER}/${REPO}/pull/2`;
    const before = writes().length;
    const dry = await swt('validate', url);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/### Check run "swt: reproduction" on [0-9a-f]{7}: success\n\n\*\*The fix passes the reproducing tests\*\*\n/);
    expect(dry.stdout).toContain('| **F→P** |');
    expect(dry.stdout).toContain('### Comment on #2\n\n<!-- swt-bot:validation -->\n### ✅ swt-bot: the fix passes the reproducing tests');
    expect(writes()).toHaveLength(before);

    const posted = await swt('validate', url, '--post');
    expect(posted.code).toBe(0);
    expect(posted.stdout.split('\n')[0]).toBe('Posted the comment (a check run needs the GitHub App; here it is printed):');
    const comments = fx.fake.issue(OWNER, REPO, 2).comments;
    expect(comments.map((c) => c.body.split('\n')[0])).toEqual(['<!-- swt-bot:validation -->']);
    expect(fx.fake.checkRuns(OWNER, REPO)).toEqual([]);
  });
});
