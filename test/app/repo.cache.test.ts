/** The repository cache: fetches exact commits over smart HTTP with a token that never shows. */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handleGitHttp } from '../../src/demo/gitHttp.js';
import { authEnv, cloneUrl, RepoCache, webBaseUrl } from '../../src/repo/cache.js';
import { isSwtError } from '../../src/util/errors.js';
import { cleanupGitRepos, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

const TOKEN = 'ghs_CacheTestToken0123456789abcdefXYZ';
let work: string;
let server: Server;
let base: string;
let source: TempRepo;
let prHead: string;
const seen: Array<{ token: string | null; path: string; argvWithToken: string[] }> = [];

/** Command lines of every process on the machine that contain the string. */
function processesShowing(text: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(text)) out.push(cmd);
    } catch {
      /* gone */
    }
  }
  return out;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), `swt-cachetest-${process.pid}-`));
  source = createGitRepo({ 'a.py': 'x = 1\n' });
  const root = join(work, 'served');
  mkdirSync(join(root, 'octo'), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', source.path, join(root, 'octo', 'app.git')]);
  // A commit only a PR ref holds, as a fork's head is in the base repository.
  prHead = source.commit({ 'a.py': 'x = 2\n' }, 'fork change');
  execFileSync('git', ['-C', source.path, 'push', '-q', join(root, 'octo', 'app.git'), `${prHead}:refs/pull/1/head`]);
  execFileSync('git', ['-C', join(root, 'octo', 'app.git'), 'config', 'uploadpack.allowReachableSHA1InWant', 'false']);
  base = source.git('rev-parse', 'HEAD~1').trim();
  server = createServer((req, res) => {
    const handled = handleGitHttp(req, res, {
      projectRoot: root,
      authorize: (token, owner, repo) => {
        seen.push({ token, path: req.url ?? '', argvWithToken: processesShowing(TOKEN) });
        return token === TOKEN && owner === 'octo' && repo === 'app';
      },
    });
    if (!handled) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(work, { recursive: true, force: true });
  cleanupGitRepos();
});

const url = () => cloneUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { owner: 'octo', repo: 'app' });

describe('RepoCache', () => {
  it('GHES: the clone URL is <protocol>://<host>/<owner>/<repo>.git from GHE_HOST and GHE_PROTOCOL', () => {
    expect(webBaseUrl({})).toBe('https://github.com');
    expect(webBaseUrl({ GHE_HOST: 'ghe.corp.example', GHE_PROTOCOL: 'http' })).toBe('http://ghe.corp.example');
    expect(cloneUrl(webBaseUrl({ GHE_HOST: 'ghe.corp.example' }), { owner: 'octo', repo: 'app' })).toBe('https://ghe.corp.example/octo/app.git');
    expect(authEnv(TOKEN).env.GIT_CONFIG_VALUE_1).toBe(`Authorization: Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`);
  });

  it('fetches the exact commits with the token, then answers from the cache without the network', async () => {
    const cache = new RepoCache({ root: join(work, 'cache1') });
    const dir = await cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: base }] });
    expect(dir).toBe(join(work, 'cache1', `127.0.0.1_${(server.address() as AddressInfo).port}`, 'octo', 'app.git'));
    expect(execFileSync('git', ['-C', dir, 'cat-file', '-t', base], { encoding: 'utf8' }).trim()).toBe('commit');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.token === TOKEN)).toBe(true);
    // While git talked to the server, no process on the machine had the token on its command line.
    expect(seen.flatMap((s) => s.argvWithToken)).toEqual([]);
    // Nor is it anywhere in the cached repository (config, FETCH_HEAD, logs).
    const grep = spawnSync('grep', ['-rl', TOKEN, dir], { encoding: 'utf8' });
    expect([grep.status, grep.stdout]).toEqual([1, '']);
    const requests = seen.length;
    await cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: base }] });
    expect(seen.length).toBe(requests);
  });

  it('a commit only a PR ref holds is fetched through that ref', async () => {
    const cache = new RepoCache({ root: join(work, 'cache2') });
    const dir = await cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: base }, { sha: prHead, ref: 'refs/pull/1/head' }] });
    expect(execFileSync('git', ['-C', dir, 'cat-file', '-t', prHead], { encoding: 'utf8' }).trim()).toBe('commit');
  });

  it('two jobs fetching into the same repository at once both get it', async () => {
    const cache = new RepoCache({ root: join(work, 'cache3') });
    const [a, b] = await Promise.all([
      cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: base }] }),
      cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: prHead, ref: 'refs/pull/1/head' }] }),
    ]);
    expect(a).toBe(b);
    expect(execFileSync('git', ['-C', a, 'cat-file', '-t', prHead], { encoding: 'utf8' }).trim()).toBe('commit');
  });

  it('a wrong token or a missing commit is a one-line error without the token', async () => {
    const cache = new RepoCache({ root: join(work, 'cache4') });
    const bad = 'ghs_WrongTokenWrongToken0123456789';
    const err = await cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: bad, want: [{ sha: base }] }).catch((e) => e);
    expect(isSwtError(err, 'UNKNOWN_REVISION')).toBe(true);
    expect(err.message).toMatch(/^cannot fetch [0-9a-f]{12} from octo\/app/);
    expect(err.message).not.toContain(bad);
    expect(err.message).not.toContain(Buffer.from(`x-access-token:${bad}`).toString('base64'));
    expect(err.message.split('\n')).toHaveLength(1);
    const missing = 'f'.repeat(40);
    const err2 = await cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: missing }] }).catch((e) => e);
    expect(err2.message).toMatch(/^cannot fetch ffffffffffff from octo\/app/);
    expect(err2.message).not.toContain(TOKEN);
    await expect(cache.ensure({ owner: 'octo', repo: 'app', url: url(), token: TOKEN, want: [{ sha: '--upload-pack=evil' }] })).rejects.toThrow('not a commit id');
  });
});
