/**
 * `swt reproduce <issue URL>` and `swt validate <PR URL>`: the App's own jobs (the same workers,
 * queue and store, in memory) run from a terminal against github.com or a GHES, with @octokit/rest
 * and GITHUB_TOKEN. What the App would post is recorded and printed; it is posted only with --post.
 */
import { config as configPlugin } from '@probot/octokit-plugin-config';
import { Octokit } from '@octokit/rest';
import { join } from 'node:path';
import { readRepoConfig } from '../github/config.js';
import { OctokitPort } from '../github/port.js';
import { SqliteJobQueue } from '../queue/sqliteQueue.js';
import type { Progress } from '../pipeline/progress.js';
import { RepoCache } from '../repo/cache.js';
import type { Sandbox } from '../sandbox/types.js';
import { SwtError } from '../util/errors.js';
import { logger as rootLogger } from '../util/logger.js';
import { defaultDataDir } from '../settings/index.js';
import { openDatabase, SqliteStore } from '../store/sqliteStore.js';
import { registerWorkers } from '../jobs/index.js';
import type { CheckRunFields, DraftPullRequest, GitHubPort, IssueData, PullData, RepoRef } from '../github/types.js';
import type { MarkerKind } from '../github/types.js';
import { jobDeps } from '../jobs/deps.js';
import { startIssue, startPull } from '../jobs/start.js';

export interface ParsedUrl extends RepoRef {
  kind: 'issue' | 'pull';
  number: number;
  /** `<protocol>://<host>` */
  web: string;
  /** REST base URL. */
  api: string;
}

/** `https://github.com/o/r/issues/1`, `https://ghe.example/o/r/pull/2` (and `/pulls/2`). */
export function parseGitHubUrl(text: string): ParsedUrl {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new SwtError('BAD_INPUT', `not a URL: ${text}`, { hint: 'e.g. https://github.com/owner/repo/issues/12' });
  }
  const m = /^\/([^/]+)\/([^/]+)\/(issues|pull|pulls)\/(\d+)\/?$/.exec(u.pathname);
  if (!m || !/^https?:$/.test(u.protocol)) throw new SwtError('BAD_INPUT', `not an issue or pull request URL: ${text}`, { hint: 'e.g. https://github.com/owner/repo/issues/12' });
  const web = `${u.protocol}//${u.host}`;
  const api = u.host === 'github.com' ? 'https://api.github.com' : `${web}/api/v3`;
  return { owner: m[1]!, repo: m[2]!, kind: m[3] === 'issues' ? 'issue' : 'pull', number: Number(m[4]), web, api };
}

/** One thing the App posted, or would have. */
export type Post =
  | { kind: 'comment'; number: number; marker: MarkerKind; body: string }
  | { kind: 'labels'; number: number; add: string[]; remove: string[] }
  | { kind: 'check-run'; id: number; headSha: string; name: string; fields: CheckRunFields }
  | { kind: 'draft-pr'; title: string; branch: string };

/** Reads pass through; writes are recorded, and made only when `post` is set. */
export class RecordingPort implements GitHubPort {
  readonly posts: Post[] = [];
  readonly #inner: GitHubPort;
  readonly #post: boolean;
  readonly #postChecks: boolean;
  #fakeId = 1;

  /** `postChecks: false`: check runs are only recorded (only a GitHub App may create them, not a personal token). */
  constructor(inner: GitHubPort, post: boolean, opts: { postChecks?: boolean } = {}) {
    this.#inner = inner;
    this.#post = post;
    this.#postChecks = post && (opts.postChecks ?? true);
  }

  getIssue(r: RepoRef, n: number): Promise<IssueData> {
    return this.#inner.getIssue(r, n);
  }
  getPull(r: RepoRef, n: number): Promise<PullData> {
    return this.#inner.getPull(r, n);
  }
  closingIssues(r: RepoRef, n: number): Promise<number[]> {
    return this.#inner.closingIssues(r, n);
  }
  defaultBranch(r: RepoRef) {
    return this.#inner.defaultBranch(r);
  }
  collaboratorPermission(r: RepoRef, login: string): Promise<string> {
    return this.#inner.collaboratorPermission(r, login);
  }
  repoConfig(r: RepoRef, path: string): Promise<unknown> {
    return this.#inner.repoConfig(r, path);
  }
  gitToken(): Promise<string | undefined> {
    return this.#inner.gitToken();
  }
  async upsertComment(r: RepoRef, n: number, kind: MarkerKind, body: string) {
    this.posts.push({ kind: 'comment', number: n, marker: kind, body });
    return this.#post ? this.#inner.upsertComment(r, n, kind, body) : { id: this.#fakeId++, created: true };
  }
  async setLabels(r: RepoRef, n: number, change: { add: string[]; remove: string[] }) {
    this.posts.push({ kind: 'labels', number: n, ...change });
    if (this.#post) await this.#inner.setLabels(r, n, change);
  }
  async createCheckRun(r: RepoRef, headSha: string, name: string, fields: CheckRunFields) {
    const id = this.#postChecks ? await this.#inner.createCheckRun(r, headSha, name, fields) : this.#fakeId++;
    this.posts.push({ kind: 'check-run', id, headSha, name, fields });
    return id;
  }
  async updateCheckRun(r: RepoRef, id: number, fields: CheckRunFields) {
    const run = [...this.posts].reverse().find((p): p is Extract<Post, { kind: 'check-run' }> => p.kind === 'check-run' && p.id === id);
    this.posts.push({ kind: 'check-run', id, headSha: run?.headSha ?? '', name: run?.name ?? '', fields });
    if (this.#postChecks) await this.#inner.updateCheckRun(r, id, fields);
  }
  async openDraftPull(r: RepoRef, pr: DraftPullRequest) {
    this.posts.push({ kind: 'draft-pr', title: pr.title, branch: pr.branch });
    return this.#post ? this.#inner.openDraftPull(r, pr) : 0;
  }
}

/** The final state of what was posted: each comment's last body, labels, each check run merged. */
export function summarizePosts(posts: readonly Post[]): string {
  const out: string[] = [];
  const comments = new Map<string, Extract<Post, { kind: 'comment' }>>();
  const runs = new Map<number, { headSha: string; name: string; fields: CheckRunFields; annotations: unknown[] }>();
  for (const p of posts) {
    if (p.kind === 'comment') comments.set(`${p.number}:${p.marker}`, p);
    else if (p.kind === 'check-run') {
      const prev = runs.get(p.id) ?? { headSha: p.headSha, name: p.name, fields: {}, annotations: [] };
      prev.annotations.push(...(p.fields.output?.annotations ?? []));
      prev.fields = { ...prev.fields, ...p.fields, output: p.fields.output ?? prev.fields.output };
      runs.set(p.id, prev);
    }
  }
  for (const c of comments.values()) out.push(`### Comment on #${c.number}`, '', c.body, '');
  for (const p of posts) if (p.kind === 'labels') out.push(`### Labels on #${p.number}: ${[...p.add.map((l) => `+${l}`), ...p.remove.map((l) => `-${l}`)].join(' ')}`, '');
  for (const r of runs.values()) {
    const f = r.fields;
    out.push(`### Check run "${r.name}" on ${r.headSha.slice(0, 7)}: ${f.conclusion ?? f.status ?? ''}`, '', `**${f.output?.title ?? ''}**`, '', f.output?.summary ?? '', '');
    for (const a of r.annotations as Array<{ path: string; start_line: number; title: string; message: string }>) out.push(`- ${a.path}:${a.start_line}: ${a.title}: ${a.message}`);
    if (r.annotations.length) out.push('');
  }
  for (const p of posts) if (p.kind === 'draft-pr') out.push(`### Draft pull request "${p.title}" from branch ${p.branch}`, '');
  return out.join('\n');
}

export interface RemoteOptions {
  token: string;
  post: boolean;
  sandbox: Sandbox;
  /** Repository cache; default SWT_DATA_DIR/repos (or ~/.cache/swt-bot/app/repos). */
  dataDir?: string;
  progress?: Progress;
}

export interface RemoteResult {
  url: ParsedUrl;
  posts: Post[];
  summary: string;
  /** The job's outcome: done, or failed with its error. */
  state: string;
  error: string | null;
  /** For an issue: whether a test reproduced it. */
  reproduced?: boolean;
}

/** Runs the App's job for an issue (reproduce) or a pull request (validate), from a terminal. */
export async function runRemote(kind: 'issue' | 'pull', urlText: string, opts: RemoteOptions): Promise<RemoteResult> {
  const url = parseGitHubUrl(urlText);
  if (url.kind !== kind) throw new SwtError('BAD_INPUT', `${urlText} is ${url.kind === 'issue' ? 'an issue' : 'a pull request'}: use swt ${url.kind === 'issue' ? 'reproduce' : 'validate'}`);
  if (!opts.token) throw new SwtError('BAD_INPUT', 'GITHUB_TOKEN is not set', { hint: 'a token that can read the repository (and write issues, pull requests and checks with --post)' });
  const ConfigOctokit = Octokit.plugin(configPlugin);
  const octokit = new ConfigOctokit({ auth: opts.token, baseUrl: url.api, log: { debug() {}, info() {}, warn() {}, error() {} } });
  const r = { owner: url.owner, repo: url.repo };
  const me = opts.post ? (await octokit.rest.users.getAuthenticated()).data.login : '';
  // A personal token cannot create check runs (GitHub reserves them to Apps): the check is printed, the comment posted.
  const port = new RecordingPort(new OctokitPort(octokit, { ownComment: (c) => c.user?.login === me, gitToken: async () => opts.token }), opts.post, { postChecks: false });

  const read = await readRepoConfig(port, r);
  if ('error' in read) throw new SwtError('BAD_CONFIG', read.error);
  const { config } = read;

  const db = openDatabase(':memory:');
  const queue = new SqliteJobQueue(db, { pollMs: 100 });
  const store = new SqliteStore(db);
  const deps = {
    queue,
    store,
    cache: new RepoCache({ root: join(opts.dataDir ?? defaultDataDir(), 'repos') }),
    sandbox: opts.sandbox,
    github: async () => port,
    gitBaseUrl: url.web,
    logger: rootLogger,
    concurrency: { fast: 1, heavy: 1 },
  };
  registerWorkers(deps);
  queue.on('started', (j) => opts.progress?.step(`${j.kind}: started`));
  queue.on('retrying', (j) => opts.progress?.step(`${j.kind}: attempt failed (${j.error}); retrying`));
  const target = { ...r };
  const force = `cli-${Date.now()}`;
  const d = jobDeps(deps);
  try {
    await queue.start();
    // What a delivery's job does once it has decided to act, then the work queued to this process's
    // workers; the CLI's user asks for the PR as it is when the run fetches it, on their own machine: that head is approved.
    const work =
      kind === 'issue'
        ? await startIssue(d, { type: 'issue', target, issue: url.number, config, force }, d.log)
        : await startPull(d, { type: 'pr', target, pr: url.number, config, approval: { at: Number.MAX_SAFE_INTEGER, by: 'the command line' }, force }, d.log);
    if (work) await queue.enqueue<typeof work.payload>(work);
    await queue.drain(60 * 60_000);
    const jobs = await queue.list();
    const failed = jobs.find((j) => j.state === 'failed');
    const reproduced = kind === 'issue' ? (await store.latestReproduction(r, url.number)) !== undefined : undefined;
    return { url, posts: port.posts, summary: summarizePosts(port.posts), state: failed ? 'failed' : 'done', error: failed?.error ?? null, ...(reproduced === undefined ? {} : { reproduced }) };
  } finally {
    await queue.stop({ timeoutMs: 1000 });
    db.close();
  }
}
