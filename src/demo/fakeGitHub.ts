/**
 * A loopback fake of GitHub (Enterprise Server), for the end-to-end test, `swt demo --app` and the
 * benchmark: a real HTTP server on 127.0.0.1 that answers the REST routes and the GraphQL query
 * the App uses under `/api/v3` and `/api/graphql` (as a GHES does), serves real repositories over
 * git's smart HTTP (`git http-backend`), records every call, and delivers signed webhooks.
 * Point Probot at it with GHE_HOST=127.0.0.1:<port> and GHE_PROTOCOL=http.
 */
import { createHmac, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, runGit } from '../repo/gitExec.js';
import { handleGitHttp } from './gitHttp.js';
import { fullName, HttpError, now, openIssue, readBody, type Caller, type CheckRun, type Comment, type FakeGitHubOptions, type Issue, type Pull, type RecordedCall, type Repo, type User } from './fakeGitHubModel.js';
import { issueJson, pullJson, repositoryJson } from './fakeGitHubJson.js';
import { checkRunRoute, graphql, issueRoute, putContents, serve, type Call, type RepoCall, type Route, type RouteResult } from './fakeGitHubRoutes.js';

export class FakeGitHub {
  readonly calls: RecordedCall[] = [];
  readonly appId: number;
  readonly installationId: number;
  readonly botLogin: string;
  #server: Server | undefined;
  #root = '';
  #repos = new Map<string, Repo>();
  #tokens = new Set<string>();
  #opts: FakeGitHubOptions;
  #nextId = 1000;
  /**
   * Reads of refs and files (`git rev-parse`, `git show`), kept until a ref may have moved: any
   * write to the fake, or a push. Spares a small machine a git process per API read under load.
   */
  #reads = new Map<string, { code: number | null; stdout: Buffer }>();
  #failures: Array<{ method: string; path: RegExp; status: number; headers: Record<string, string>; times: number }> = [];
  /** Where webhooks go (the App's base URL). */
  appUrl = '';

  constructor(opts: FakeGitHubOptions) {
    this.#opts = opts;
    this.appId = opts.appId ?? 1;
    this.installationId = opts.installationId ?? 42;
    this.botLogin = opts.botLogin ?? 'swt-bot[bot]';
  }

  async start(): Promise<this> {
    this.#root = await mkdtemp(join(tmpdir(), 'swt-fakegithub-'));
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((r) => this.#server!.listen(0, '127.0.0.1', r));
    return this;
  }

  get port(): number {
    return (this.#server!.address() as AddressInfo).port;
  }
  /** For GHE_HOST. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }
  get url(): string {
    return `http://${this.host}`;
  }
  get apiUrl(): string {
    return `${this.url}/api/v3`;
  }

  async close(): Promise<void> {
    if (this.#server) {
      await new Promise<void>((r) => this.#server!.close(() => r()));
      this.#server.closeAllConnections();
    }
    if (this.#root) await rm(this.#root, { recursive: true, force: true });
  }

  /** The next `times` requests matching method and path fail with this status (e.g. 500, or 403 with rate-limit headers). */
  failNext(method: string, path: RegExp, status: number, opts: { times?: number; headers?: Record<string, string> } = {}): void {
    this.#failures.push({ method, path, status, headers: opts.headers ?? {}, times: opts.times ?? 1 });
  }

  // ─── state ─────────────────────────────────────────────────────────────────────────────────

  /** A repository holding every ref of a local git repository (working tree or bare). */
  async addRepo(owner: string, name: string, source: string, defaultBranch = 'main'): Promise<void> {
    const dir = join(this.#root, 'git', owner, `${name}.git`);
    await mkdir(dir, { recursive: true });
    this.#reads.clear();
    await git(dir, ['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`]);
    await git(source, ['push', '--quiet', dir, `+HEAD:refs/heads/${defaultBranch}`]);
    this.#repos.set(fullName({ owner, name }).toLowerCase(), { owner, name, defaultBranch, dir, issues: new Map(), checkRuns: [], nextNumber: 1, permissions: new Map() });
  }

  async #read(dir: string, args: string[]): Promise<{ code: number | null; stdout: Buffer }> {
    const key = `${dir}\u0000${args.join('\u0000')}`;
    let hit = this.#reads.get(key);
    if (!hit) {
      const r = await runGit(dir, args);
      hit = { code: r.code, stdout: r.stdout };
      this.#reads.set(key, hit);
    }
    return hit;
  }

  /** Pushes a commit of a local repository to a ref (e.g. `refs/heads/fix`). */
  async pushRef(owner: string, name: string, source: string, sha: string, ref: string): Promise<void> {
    this.#reads.clear();
    await git(source, ['push', '--quiet', '--force', this.#repo(owner, name).dir, `${sha}:${ref}`]);
  }

  setPermission(owner: string, name: string, login: string, permission: string): void {
    this.#repo(owner, name).permissions.set(login, permission);
  }

  addIssue(owner: string, name: string, i: { title: string; body: string; user?: User; labels?: string[] }): Issue {
    const repo = this.#repo(owner, name);
    const issue = openIssue(repo, { title: i.title, body: i.body, user: i.user ?? { login: 'reporter', type: 'User' }, labels: i.labels ?? [] });
    repo.issues.set(issue.number, issue);
    return issue;
  }

  /** A pull request whose head commit is already in the repository (pushRef); refs/pull/<n>/head is made. */
  async addPull(
    owner: string,
    name: string,
    p: { title: string; body: string; user?: User; headSha: string; headRef: string; fork?: boolean; linked?: number[] },
  ): Promise<Issue> {
    const repo = this.#repo(owner, name);
    const pull = { headSha: p.headSha, headRef: p.headRef, baseRef: repo.defaultBranch, fork: Boolean(p.fork), linked: p.linked ?? [], draft: false };
    const issue = openIssue(repo, { title: p.title, body: p.body, user: p.user ?? { login: 'contributor', type: 'User' }, labels: [], pull });
    this.#reads.clear();
    await git(repo.dir, ['update-ref', `refs/pull/${issue.number}/head`, p.headSha]);
    repo.issues.set(issue.number, issue);
    return issue;
  }

  /** A push to a pull request's head branch: its head becomes `sha` (pushed from `source`). */
  async pushToPull(owner: string, name: string, n: number, source: string, sha: string): Promise<void> {
    const i = this.issue(owner, name, n);
    if (!i.pull) throw new Error(`#${n} is not a pull request`);
    await this.pushRef(owner, name, source, sha, `refs/pull/${n}/head`);
    i.pull.headSha = sha;
  }

  /**
   * Merges a pull request as GitHub's merge button does: a merge commit of its base and head on
   * the base branch (git merge-tree, so the bare repository needs no work tree), and the PR closed.
   */
  async mergePull(owner: string, name: string, n: number, by: User = { login: 'maintainer', type: 'User' }): Promise<string> {
    const repo = this.#repo(owner, name);
    const i = this.issue(owner, name, n);
    const p = i.pull;
    if (!p || i.state !== 'open') throw new Error(`#${n} is not an open pull request`);
    const baseSha = (await git(repo.dir, ['rev-parse', `refs/heads/${p.baseRef}`])).trim();
    const tree = (await git(repo.dir, ['merge-tree', '--write-tree', baseSha, p.headSha])).split('\n')[0]!.trim();
    const env = { GIT_AUTHOR_NAME: by.login, GIT_AUTHOR_EMAIL: `${by.login}@users.noreply`, GIT_COMMITTER_NAME: 'GitHub', GIT_COMMITTER_EMAIL: 'noreply@github.com' };
    const sha = (await git(repo.dir, ['commit-tree', tree, '-p', baseSha, '-p', p.headSha, '-m', `Merge pull request #${n} from ${p.headRef}\n\n${i.title}`], { env })).trim();
    this.#reads.clear();
    await git(repo.dir, ['update-ref', `refs/heads/${p.baseRef}`, sha, baseSha]);
    p.merged = { sha, baseSha, at: now() };
    i.state = 'closed';
    return sha;
  }

  issue(owner: string, name: string, n: number): Issue {
    const i = this.#repo(owner, name).issues.get(n);
    if (!i) throw new Error(`no issue #${n}`);
    return i;
  }

  /** A file's text at a ref of a repository, or undefined. */
  async readFile(owner: string, name: string, ref: string, path: string): Promise<string | undefined> {
    const r = await runGit(this.#repo(owner, name).dir, ['show', `${ref}:${path}`]);
    return r.code === 0 ? r.stdout.toString('utf8') : undefined;
  }

  /** Installation tokens handed out (a test checks none leaked). */
  issuedTokens(): string[] {
    return [...this.#tokens];
  }

  checkRuns(owner: string, name: string): CheckRun[] {
    return this.#repo(owner, name).checkRuns;
  }

  #repo(owner: string, name: string): Repo {
    const r = this.#repos.get(fullName({ owner, name }).toLowerCase());
    if (!r) throw new HttpError(404, 'Not Found');
    return r;
  }

  // ─── webhooks ──────────────────────────────────────────────────────────────────────────────

  /** POSTs a signed webhook to the App; resolves with its answer and how long it took. */
  async deliver(event: string, payload: unknown, opts: { id?: string } = {}): Promise<{ status: number; id: string; ms: number; at: number }> {
    const id = opts.id ?? randomUUID();
    const body = JSON.stringify(payload);
    const signature = `sha256=${createHmac('sha256', this.#opts.webhookSecret).update(body).digest('hex')}`;
    const at = Date.now();
    const started = performance.now();
    const res = await fetch(`${this.appUrl}/api/github/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': id, 'x-hub-signature-256': signature, 'user-agent': 'GitHub-Hookshot/fake' },
      body,
    });
    await res.text();
    return { status: res.status, id, ms: performance.now() - started, at };
  }

  /** issues.opened and friends, as GitHub sends them. */
  issuePayload(owner: string, name: string, n: number, action: string, extra: Record<string, unknown> = {}) {
    const r = this.#repo(owner, name);
    return { action, issue: issueJson(this.url, r, this.issue(owner, name, n)), repository: repositoryJson(this.url, r), sender: this.issue(owner, name, n).user, installation: { id: this.installationId }, ...extra };
  }

  async pullPayload(owner: string, name: string, n: number, action: string, extra: Record<string, unknown> = {}) {
    const r = this.#repo(owner, name);
    const i = this.issue(owner, name, n);
    return { action, number: n, pull_request: await pullJson(this.url, r, i), repository: repositoryJson(this.url, r), sender: i.user, installation: { id: this.installationId }, ...extra };
  }

  /** issue_comment.created: the comment is added to the thread too. */
  commentPayload(owner: string, name: string, n: number, body: string, user: User, association: string) {
    const r = this.#repo(owner, name);
    const i = this.issue(owner, name, n);
    const comment: Comment = { id: this.#nextId++, body, user, created_at: now(), updated_at: now() };
    i.comments.push(comment);
    return { action: 'created', issue: issueJson(this.url, r, i), comment: { ...comment, author_association: association }, repository: repositoryJson(this.url, r), sender: user, installation: { id: this.installationId } };
  }

  checkRunPayload(owner: string, name: string, checkRunId: number, action: 'rerequested' | 'requested_action', identifier?: string) {
    const r = this.#repo(owner, name);
    const run = r.checkRuns.find((c) => c.id === checkRunId);
    if (!run) throw new Error(`no check run ${checkRunId}`);
    const pull = [...r.issues.values()].find((i) => i.pull?.headSha === run.head_sha && !i.pull.fork);
    return {
      action,
      check_run: { id: run.id, name: run.name, head_sha: run.head_sha, status: run.status, conclusion: run.conclusion, pull_requests: pull ? [{ number: pull.number }] : [], app: { id: this.appId } },
      ...(identifier ? { requested_action: { identifier } } : {}),
      repository: repositoryJson(this.url, r),
      sender: { login: 'maintainer', type: 'User' },
      installation: { id: this.installationId },
    };
  }

  // ─── HTTP ──────────────────────────────────────────────────────────────────────────────────

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (req.method !== 'GET' && req.method !== 'HEAD' && !(req.method === 'POST' && url.pathname.endsWith('/graphql'))) this.#reads.clear();
    if (
      handleGitHttp(req, res, {
        projectRoot: join(this.#root, 'git'),
        authorize: (token, owner, repo) => token !== null && this.#knowsToken(token) && this.#repos.has(fullName({ owner, name: repo }).toLowerCase()),
      })
    ) {
      this.calls.push({ method: req.method ?? 'GET', path: url.pathname + url.search, at: Date.now() });
      return;
    }
    const body = await readBody(req);
    const path = decodeURIComponent(url.pathname.replace(/^\/api\/v3/, '').replace(/^\/api\/graphql$/, '/graphql')) + url.search;
    const method = req.method ?? 'GET';
    this.calls.push({ method, path, ...(body !== undefined ? { body } : {}), at: Date.now() });
    const failure = this.#failures.find((f) => f.method === method && f.path.test(path) && f.times > 0);
    if (failure) {
      failure.times--;
      res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers }).end(JSON.stringify({ message: `fake failure ${failure.status}` }));
      return;
    }
    try {
      const auth = this.#authenticate(req.headers.authorization, path);
      const actor: User = auth.kind === 'user' ? { login: auth.login, type: 'User' } : { login: this.botLogin, type: 'Bot' };
      const out = await this.#route({ method, path: path.split('?')[0]!, query: url.searchParams, body, auth, actor, req });
      if (out.raw !== undefined) res.writeHead(out.status ?? 200, { 'content-type': 'text/plain; charset=utf-8' }).end(out.raw);
      else if (out.status === 204) res.writeHead(204).end();
      else res.writeHead(out.status ?? 200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(out.json ?? {}));
    } catch (e) {
      const status = e instanceof HttpError ? e.status : 500;
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ message: (e as Error).message }));
    }
  }

  #knowsToken(token: string): boolean {
    return this.#tokens.has(token) || Object.hasOwn(this.#opts.personalTokens ?? {}, token);
  }

  /** The caller: the App (JWT), its installation (token), or a user (personal token). */
  #authenticate(header: string | undefined, path: string): Caller {
    const m = /^(?:token|bearer)\s+(.+)$/i.exec(header ?? '');
    if (!m) throw new HttpError(401, 'Requires authentication');
    const credential = m[1]!;
    if (credential.split('.').length === 3 && path.startsWith('/app')) {
      const [h, p, s] = credential.split('.') as [string, string, string];
      const publicKey = createPublicKey(this.#opts.appPrivateKey);
      if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'))) throw new HttpError(401, 'A JSON web token could not be decoded');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as { iss: string | number; exp: number };
      if (String(claims.iss) !== String(this.appId) || claims.exp * 1000 < Date.now()) throw new HttpError(401, "'Expiration time' claim ('exp') is too far in the future");
      return { kind: 'app' };
    }
    if (this.#tokens.has(credential)) return { kind: 'installation' };
    const login = this.#opts.personalTokens?.[credential];
    if (login) return { kind: 'user', login };
    throw new HttpError(401, 'Bad credentials');
  }

  /** Routes outside a repository: the installation token, the App, the user, GraphQL. */
  readonly #topRoutes: Array<Route<Call>> = [
    { method: 'POST', path: /^\/app\/installations\/(\d+)\/access_tokens$/, serve: (m, c) => this.#accessToken(Number(m[1]), c.auth) },
    { method: 'GET', path: /^\/app$/, serve: () => ({ json: { id: this.appId, slug: this.botLogin.replace(/\[bot\]$/, ''), name: 'swt-bot' } }) },
    { method: 'GET', path: /^\/user$/, serve: (_, { auth }) => {
      if (auth.kind !== 'user') throw new HttpError(403, 'Resource not accessible by integration');
      return { json: { login: auth.login, type: 'User' } };
    } },
    { method: 'POST', path: /^\/graphql$/, serve: (_, c) => ({ json: graphql(c.body, (o, r) => this.#repo(o, r)) }) },
  ];

  /** Routes under `/repos/<owner>/<name>`, matched against the rest of the path. */
  readonly #repoRoutes: Array<Route<RepoCall>> = [
    { method: 'GET', path: /^$/, serve: (_, c) => ({ json: repositoryJson(this.url, c.repo) }) },
    { method: 'GET', path: /^\/branches\/(.+)$/, serve: async (m, { repo }) => {
      const sha = (await this.#read(repo.dir, ['rev-parse', '--verify', '--quiet', `refs/heads/${m[1]}`])).stdout.toString().trim();
      if (!sha) throw new HttpError(404, 'Branch not found');
      return { json: { name: m[1], commit: { sha } } };
    } },
    { method: 'GET', path: /^\/contents\/(.+)$/, serve: (m, c) => this.#contents(m[1]!, c) },
    { method: 'PUT', path: /^\/contents\/(.+)$/, serve: async (m, c) => ({ status: 201, json: await putContents(c.repo, m[1]!, c.body, this.#root, this.botLogin) }) },
    { method: 'POST', path: /^\/git\/refs$/, serve: async (_, { repo, body }) => {
      const ok = await runGit(repo.dir, ['update-ref', body.ref, body.sha, '0'.repeat(40)]);
      if (ok.code !== 0) throw new HttpError(422, 'Reference already exists');
      return { status: 201, json: { ref: body.ref, object: { sha: body.sha } } };
    } },
    { method: 'PATCH', path: /^\/git\/refs\/(.+)$/, serve: async (m, { repo, body }) => {
      await git(repo.dir, ['update-ref', `refs/${m[1]}`, body.sha]);
      return { json: { ref: `refs/${m[1]}`, object: { sha: body.sha } } };
    } },
    { method: 'POST', path: /^\/pulls$/, serve: (_, c) => this.#createPull(c) },
    { method: 'GET', path: /^\/collaborators\/([^/]+)\/permission$/, serve: (m, { repo }) => ({ json: { permission: repo.permissions.get(m[1]!) ?? 'read', user: { login: m[1] } } }) },
    { method: '*', path: /^\/check-runs/, serve: (_, c) => {
      if (c.auth.kind === 'user') throw new HttpError(403, 'Resource not accessible by personal access token');
      return checkRunRoute(c.method, c.rest, c.body, c.repo, () => this.#nextId++);
    } },
    { method: '*', path: /^\/(issues|pulls)\//, serve: (_, c) =>
      issueRoute(c.method, c.rest, c.body, c.repo, c.actor, () => this.#nextId++, { pull: (i) => pullJson(this.url, c.repo, i), issue: (i) => issueJson(this.url, c.repo, i) }) },
  ];

  async #route(call: Call): Promise<RouteResult> {
    const top = await serve(this.#topRoutes, call.path, call);
    if (top) return top;
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(call.path);
    const out = m && (await serve(this.#repoRoutes, m[3] ?? '', { ...call, repo: this.#repo(m[1]!, m[2]!), rest: m[3] ?? '' }));
    if (!out) throw new HttpError(404, 'Not Found');
    return out;
  }

  #accessToken(installationId: number, auth: Caller): RouteResult {
    if (auth.kind !== 'app') throw new HttpError(401, 'needs the App JWT');
    if (installationId !== this.installationId) throw new HttpError(404, 'Not Found');
    const token = `ghs_fake${randomBytes(16).toString('hex')}`;
    this.#tokens.add(token);
    return { status: 201, json: { token, expires_at: new Date(Date.now() + 3600_000).toISOString(), permissions: {} } };
  }

  async #contents(path: string, { repo, query, req }: RepoCall): Promise<RouteResult> {
    const r = await this.#read(repo.dir, ['show', `${query.get('ref') ?? `refs/heads/${repo.defaultBranch}`}:${path}`]);
    if (r.code !== 0) throw new HttpError(404, 'Not Found');
    if (!/raw/.test(String(req.headers.accept))) return { json: { type: 'file', path, encoding: 'base64', content: r.stdout.toString('base64') } };
    return { raw: r.stdout.toString('utf8') };
  }

  async #createPull({ repo, body, actor }: RepoCall): Promise<RouteResult> {
    const headSha = (await git(repo.dir, ['rev-parse', `refs/heads/${body.head}`])).trim();
    const i = await this.addPull(repo.owner, repo.name, { title: body.title, body: body.body ?? '', user: actor, headSha, headRef: body.head });
    i.pull!.draft = Boolean(body.draft);
    return { status: 201, json: await pullJson(this.url, repo, i) };
  }
}
