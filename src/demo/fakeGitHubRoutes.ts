/** Routes of the fake GitHub's REST API that need no more than a repository's records (fakeGitHub.ts serves them). */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { git, runGit } from '../repo/gitExec.js';
import { CHECK_TEXT_MAX, checkLength, COMMENT_MAX, fullName, HttpError, now, type Caller, type CheckRun, type Comment, type Issue, type Repo, type User } from './fakeGitHubModel.js';

export interface RouteResult {
  status?: number;
  json?: unknown;
  raw?: string;
}

/** The check-runs API: create one, update one (GitHub's limits on output text checked). */
export function checkRunRoute(method: string, rest: string, body: any, repo: Repo, nextId: () => number): RouteResult | undefined {
  let m: RegExpExecArray | null;
  if ((method === 'POST' && rest === '/check-runs') || (method === 'PATCH' && rest.startsWith('/check-runs/'))) {
    checkLength('output.summary', body?.output?.summary, CHECK_TEXT_MAX);
    checkLength('output.text', body?.output?.text, CHECK_TEXT_MAX);
  }
  if (method === 'POST' && rest === '/check-runs') {
    const run: CheckRun = {
      id: nextId(),
      head_sha: body.head_sha,
      name: body.name,
      status: body.conclusion ? 'completed' : (body.status ?? 'queued'),
      conclusion: body.conclusion ?? null,
      output: body.output ?? null,
      annotations: [...(body.output?.annotations ?? [])],
      actions: body.actions ?? [],
      details_url: body.details_url,
      history: [],
    };
    run.history.push({ status: run.status, conclusion: run.conclusion, title: run.output?.title, summary: run.output?.summary, at: Date.now() });
    repo.checkRuns.push(run);
    return { status: 201, json: run };
  }
  if (method === 'PATCH' && (m = /^\/check-runs\/(\d+)$/.exec(rest))) {
    const run = repo.checkRuns.find((c) => c.id === Number(m![1]));
    if (!run) throw new HttpError(404, 'Not Found');
    if (body.status) run.status = body.status;
    if (body.conclusion) (run.conclusion = body.conclusion), (run.status = 'completed');
    if (body.output) {
      const { annotations, ...output } = body.output;
      run.output = output;
      run.annotations.push(...(annotations ?? []));
    }
    if (body.actions) run.actions = body.actions;
    if (body.details_url) run.details_url = body.details_url;
    run.history.push({ status: run.status, conclusion: run.conclusion, title: run.output?.title, summary: run.output?.summary, at: Date.now() });
    return { json: run };
  }
  return undefined;
}

/** Issues and pulls by number: a pull and its files, an issue, its comments and labels; a comment edited by its author. */
export async function issueRoute(method: string, rest: string, body: any, repo: Repo, actor: User, nextId: () => number, json: { pull: (i: Issue) => Promise<unknown>; issue: (i: Issue) => unknown }): Promise<RouteResult | undefined> {
  let m: RegExpExecArray | null;
  if ((m = /^\/(issues|pulls)\/(\d+)(\/.*)?$/.exec(rest))) {
    const i = repo.issues.get(Number(m[2]));
    if (!i || (m[1] === 'pulls' && !i.pull)) throw new HttpError(404, 'Not Found');
    const sub = m[3] ?? '';
    if (m[1] === 'pulls') {
      if (method === 'GET' && sub === '') return { json: await json.pull(i) };
      if (method === 'GET' && sub === '/files') {
        const base = (await git(repo.dir, ['rev-parse', `refs/heads/${i.pull!.baseRef}`])).trim();
        const names = (await git(repo.dir, ['diff', '--name-only', `${base}...${i.pull!.headSha}`])).split('\n').filter(Boolean);
        // As GitHub: the PR's own changes since the merge base, at most 3,000 files.
        return { json: names.slice(0, 3000).map((filename) => ({ filename, status: 'modified' })) };
      }
      throw new HttpError(404, 'Not Found');
    }
    if (method === 'GET' && sub === '') return { json: json.issue(i) };
    if (method === 'GET' && sub === '/comments') return { json: i.comments };
    if (method === 'POST' && sub === '/comments') {
      checkLength('body', body.body, COMMENT_MAX);
      const c: Comment = { id: nextId(), body: body.body, user: actor, created_at: now(), updated_at: now() };
      i.comments.push(c);
      return { status: 201, json: c };
    }
    if (method === 'POST' && sub === '/labels') {
      for (const l of body.labels as string[]) if (!i.labels.includes(l)) i.labels.push(l);
      return { json: i.labels.map((name) => ({ name })) };
    }
    if (method === 'DELETE' && (m = /^\/labels\/(.+)$/.exec(sub))) {
      const at = i.labels.indexOf(m[1]!);
      if (at < 0) throw new HttpError(404, 'Label does not exist');
      i.labels.splice(at, 1);
      return { json: i.labels.map((name) => ({ name })) };
    }
    throw new HttpError(404, 'Not Found');
  }
  if (method === 'PATCH' && (m = /^\/issues\/comments\/(\d+)$/.exec(rest))) {
    for (const i of repo.issues.values()) {
      const c = i.comments.find((x) => x.id === Number(m![1]));
      if (!c) continue;
      if (c.user.login !== actor.login) throw new HttpError(403, 'Must have admin rights to Repository.');
      checkLength('body', body.body, COMMENT_MAX);
      c.body = body.body;
      c.updated_at = now();
      return { json: c };
    }
    throw new HttpError(404, 'Not Found');
  }
  return undefined;
}

/** The one GraphQL query the App asks: a pull's closing issue references. */
export function graphql(body: { query: string; variables: { owner: string; repo: string; number: number } }, repoOf: (owner: string, name: string) => Repo) {
  if (!/closingIssuesReferences/.test(body?.query ?? '')) return { errors: [{ message: 'the fake GitHub answers closingIssuesReferences only' }] };
  const { owner, repo, number } = body.variables;
  const r = repoOf(owner, repo);
  const i = r.issues.get(number);
  if (!i?.pull) return { data: { repository: { pullRequest: null } } };
  const nodes = i.pull.linked.map((n) => ({ number: n, repository: { nameWithOwner: fullName(r) } }));
  return { data: { repository: { pullRequest: { closingIssuesReferences: { nodes } } } } };
}

/** The contents API's commit of one file onto a branch, done with git in the bare repository. */
export async function putContents(repo: Repo, path: string, body: { message: string; content: string; branch: string; sha?: string }, root: string, botLogin: string) {
  const ref = `refs/heads/${body.branch}`;
  const parent = (await git(repo.dir, ['rev-parse', ref])).trim();
  const current = await runGit(repo.dir, ['rev-parse', '--verify', '--quiet', `${parent}:${path}`]);
  const existing = current.code === 0 ? current.stdout.toString().trim() : undefined;
  if (existing !== body.sha) throw new HttpError(409, `${path} does not match ${body.sha ?? 'a new file'}`);
  const blob = (await git(repo.dir, ['hash-object', '-w', '--stdin'], { input: Buffer.from(body.content, 'base64') })).trim();
  const index = join(root, `index-${randomUUID()}`);
  const env = { GIT_INDEX_FILE: index };
  await git(repo.dir, ['read-tree', parent], { env });
  await git(repo.dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
  const tree = (await git(repo.dir, ['write-tree'], { env })).trim();
  await rm(index, { force: true });
  const commit = (
    await git(repo.dir, ['commit-tree', tree, '-p', parent, '-m', body.message], {
      env: { GIT_AUTHOR_NAME: botLogin, GIT_AUTHOR_EMAIL: 'bot@fake.invalid', GIT_COMMITTER_NAME: botLogin, GIT_COMMITTER_EMAIL: 'bot@fake.invalid' },
    })
  ).trim();
  await git(repo.dir, ['update-ref', ref, commit, parent]);
  return { content: { path, sha: blob }, commit: { sha: commit } };
}

/** One API request, as the routes see it. */
export interface Call {
  method: string;
  /** Without the query. */
  path: string;
  query: URLSearchParams;
  body: any;
  auth: Caller;
  /** Who a write is made by: the user of a personal token, else the App's bot. */
  actor: User;
  req: IncomingMessage;
}

export interface RepoCall extends Call {
  repo: Repo;
  /** The path after `/repos/<owner>/<name>`. */
  rest: string;
}

/** A route: its method (`*` any) and path pattern; `serve` may pass (undefined) to answer 404. */
export interface Route<C extends Call> {
  method: string;
  path: RegExp;
  serve(m: RegExpExecArray, call: C): RouteResult | undefined | Promise<RouteResult | undefined>;
}

/** The answer of the first route that matches the method and path, or undefined. */
export async function serve<C extends Call>(routes: ReadonlyArray<Route<C>>, path: string, call: C): Promise<RouteResult | undefined> {
  for (const r of routes) {
    const m = r.method === '*' || r.method === call.method ? r.path.exec(path) : null;
    if (m) return r.serve(m, call);
  }
  return undefined;
}
