/**
 * For the App's handler tests: the App started with a test Octokit, and nock scopes that record
 * every GitHub API call (importing nock turns its interception on: only handler tests import this).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { ProbotOctokit } from 'probot';
import { startApp, type RunningApp, type StartAppOptions } from '../../src/app/app.js';
import { appKey, INSTALLATION, SECRET, TOKEN } from './webhooks.js';

export { appKey, deliver, example, INSTALLATION, SECRET, sign, TOKEN } from './webhooks.js';

// nock patches Node's own http module, which every test file run by the same jest process shares:
// left on, it would turn the next file's Docker socket requests into requests to 127.0.0.1:80.
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
  nock.restore();
});

/**
 * Octokit as Probot builds it, with the retry plugin's 1 s base delay cut to 1 ms, and throttling
 * (1 s between writes, 3 s between comments) off unless asked. Merged into Probot's own options
 * (an object given to defaults() would be replaced by them).
 */
export function testOctokit(throttle = false): typeof ProbotOctokit {
  return ProbotOctokit.defaults((o: Record<string, any>) => ({
    ...o,
    retry: { ...o.retry, retryAfterBaseValue: 1 },
    throttle: throttle ? { ...o.throttle, retryAfterBaseValue: 1 } : { ...o.throttle, enabled: false },
  })) as typeof ProbotOctokit;
}

export interface TestApp extends RunningApp {
  dataDir: string;
  /** The reproductions and validations decided, in the order they would have run (no container runs here). */
  ran: Array<{ kind: string; payload: any }>;
  /** While true, decided work holds its job running until a newer one supersedes it. */
  hold: boolean;
}

export async function startTestApp(opts: Partial<StartAppOptions> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), `swt-apptest-${process.pid}-`));
  const ran: TestApp['ran'] = [];
  const state = { hold: false };
  const app = await startApp({
    appId: 1,
    privateKey: appKey(),
    secret: SECRET,
    dataDir,
    // Both lanes: a delivery's one job decides and then runs its work, which this stand-in records.
    lanes: ['fast', 'heavy'],
    runWork: async ({ job, signal }) => {
      ran.push({ kind: job.kind, payload: job.payload });
      if (state.hold && !signal.aborted) await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    },
    Octokit: testOctokit(),
    sandbox: {
      ensureEnvironment: () => Promise.reject(new Error('no sandbox in this test')),
      run: () => Promise.reject(new Error('no sandbox in this test')),
      openSession: () => Promise.reject(new Error('no sandbox in this test')),
    },
    ...opts,
  });
  return {
    ...app,
    dataDir,
    ran,
    get hold() {
      return state.hold;
    },
    set hold(v: boolean) {
      state.hold = v;
    },
    async stop() {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RecordedCall {
  method: string;
  path: string;
  body?: any;
}

/**
 * nock on api.github.com that records calls in order. `calls` holds every request answered,
 * without the installation token requests (answered for any installation).
 */
export function mockGitHub(base = 'https://api.github.com') {
  const calls: RecordedCall[] = [];
  const scope = nock(base);
  // persist() holds for every interceptor of a scope: the token endpoint gets a scope of its own.
  nock(base)
    .persist()
    .post(`/app/installations/${INSTALLATION}/access_tokens`)
    .reply(201, { token: TOKEN, expires_at: new Date(Date.now() + 3600_000).toISOString(), permissions: { issues: 'write', checks: 'write' } });
  // nock 15 hands reply functions the request as a fetch Request.
  const record = (status: number, response: unknown | ((body: any, path: string) => unknown), headers: Record<string, string> = {}) =>
    async function (req: Request): Promise<[number, any, Record<string, string>]> {
      const text = await req.text();
      const parsed = text ? safeJson(text) : undefined;
      const url = new URL(req.url);
      const path = decodeURIComponent(url.pathname + url.search);
      calls.push({ method: req.method, path, ...(parsed !== undefined ? { body: parsed } : {}) });
      return [status, typeof response === 'function' ? (response as (b: any, p: string) => unknown)(parsed, path) : response, headers];
    };
  return {
    calls,
    scope,
    /** One answer to one request. */
    on(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string | RegExp, status: number, response: unknown | ((body: any, path: string) => unknown) = {}, headers: Record<string, string> = {}) {
      scope.intercept(path, method).reply(record(status, response, headers) as never);
      return this;
    },
    /** No .github/swt.yml in the repository nor in the owner's .github repository. */
    noConfig(owner: string, repo: string) {
      return this.on('GET', `/repos/${owner}/${repo}/contents/.github%2Fswt.yml`, 404, { message: 'Not Found' }).on('GET', `/repos/${owner}/.github/contents/.github%2Fswt.yml`, 404, {
        message: 'Not Found',
      });
    },
    config(owner: string, repo: string, yaml: string) {
      scope.intercept(`/repos/${owner}/${repo}/contents/.github%2Fswt.yml`, 'GET').reply(record(200, yaml, { 'content-type': 'text/plain; charset=utf-8' }) as never);
      return this;
    },
    /**
     * The comments of an issue or PR, kept like GitHub keeps them: listed, created (by the App's
     * bot account), edited in place. Returns the live list.
     */
    thread(owner: string, repo: string, n: number, firstId = n * 1000, opts: { createThen500?: number } = {}) {
      const comments: Array<{ id: number; body: string; user: { login: string; type: string } }> = [];
      let next = firstId;
      // The first `createThen500` POSTs create the comment and still answer 500, as GitHub can.
      let ambiguous = opts.createThen500 ?? 0;
      scope
        .intercept(`/repos/${owner}/${repo}/issues/${n}/comments?per_page=100`, 'GET')
        .times(1000)
        .reply(record(200, () => comments) as never);
      scope
        .intercept(`/repos/${owner}/${repo}/issues/${n}/comments`, 'POST')
        .times(1000)
        .reply((async (req: Request) => {
          const [, c] = await record(201, (body: { body: string }) => {
            const made = { id: next++, body: body.body, user: { login: 'swt-bot[bot]', type: 'Bot' } };
            comments.push(made);
            return made;
          })(req);
          if (ambiguous > 0) {
            ambiguous--;
            return [500, { message: 'Server Error' }, {}];
          }
          return [201, c, {}];
        }) as never);
      scope
        .intercept(new RegExp(`^/repos/${owner}/${repo}/issues/comments/(${firstId}|${firstId + 1}|${firstId + 2}|${firstId + 3})$`), 'PATCH')
        .times(1000)
        .reply(
          record(200, (body: { body: string }, path: string) => {
            const c = comments.find((x) => x.id === Number(path.split('/').pop()));
            if (c) c.body = body.body;
            return c;
          }) as never,
        );
      return comments;
    },
    /** The calls that change something on GitHub. */
    writes() {
      return calls.filter((c) => c.method !== 'GET' && !(c.method === 'POST' && c.path === '/graphql' && !/mutation/.test(c.body?.query ?? '')));
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
