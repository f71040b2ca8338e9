/**
 * What the workers read from and post to GitHub, as one small interface. The App implements it
 * with an installation's Probot Octokit, the CLI with @octokit/rest and GITHUB_TOKEN (and a
 * recording wrapper when nothing may be posted). Only `octokit.rest.*`, `graphql` and `paginate`
 * are used, as Probot v14 requires.
 */
import type { Octokit } from '@octokit/rest';
import merge from 'deepmerge';
import { isBotAccount } from './events.js';
import { CHECK_TEXT_LIMIT, clipText, COMMENT_LIMIT, markerOf } from './render.js';
import { repoSlug, type CheckRunFields, type DraftPullRequest, type GitHubPort, type IssueData, type MarkerKind, type PullData, type RepoRef } from './types.js';

/** A pull request as the REST API and webhook payloads show it. */
export interface RawPull {
  number: number;
  title: string;
  body?: string | null;
  user?: { login: string; type?: string } | null;
  state: string;
  head: { sha: string; ref: string; repo?: { full_name: string } | null };
  base: { sha: string; ref: string; repo: { full_name: string } };
  additions?: number;
  deletions?: number;
  updated_at?: string;
}

export function pullDataOf(data: RawPull): PullData {
  const headRepo = data.head.repo?.full_name ?? null;
  return {
    number: data.number,
    title: data.title,
    body: data.body ?? '',
    author: { login: data.user?.login ?? 'ghost', type: data.user?.type ?? 'User' },
    state: data.state,
    head: { sha: data.head.sha, ref: data.head.ref, repoFullName: headRepo },
    base: { sha: data.base.sha, ref: data.base.ref, repoFullName: data.base.repo.full_name },
    fork: headRepo === null || headRepo.toLowerCase() !== data.base.repo.full_name.toLowerCase(),
    additions: data.additions ?? 0,
    deletions: data.deletions ?? 0,
    ...(data.updated_at && Number.isFinite(Date.parse(data.updated_at)) ? { updatedAt: Date.parse(data.updated_at) } : {}),
  };
}

/** An issue as the REST API and webhook payloads show it. */
export interface RawIssue {
  number: number;
  title: string;
  body?: string | null;
  user?: { login: string; type?: string } | null;
  locked?: boolean;
  labels?: Array<{ name?: string } | string>;
  pull_request?: unknown;
  state?: string;
}

export function issueDataOf(data: RawIssue): IssueData {
  return {
    number: data.number,
    title: data.title,
    body: data.body ?? '',
    author: { login: data.user?.login ?? 'ghost', type: data.user?.type ?? 'User' },
    locked: Boolean(data.locked),
    labels: (data.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
    isPullRequest: Boolean(data.pull_request),
    state: data.state ?? 'open',
  };
}

export type OctokitLike = Pick<Octokit, 'rest' | 'graphql' | 'paginate'> & {
  auth?: (opts?: unknown) => Promise<unknown>;
  /** @probot/octokit-plugin-config (ProbotOctokit has it; the CLI plugs it into @octokit/rest). */
  config?: { get(o: RepoRef & { path: string; defaults?: (configs: Array<Record<string, unknown>>) => Record<string, unknown> }): Promise<{ config: unknown }> };
};

const CLOSING_ISSUES = `query($owner: String!, $repo: String!, $number: Int!) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 50) { nodes { number repository { nameWithOwner } } }
    }
  }
}`;

/** Serialises calls per key, so two jobs never both create "the" comment of a thread. */
class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => this.#tails.get(key) === tail && this.#tails.delete(key));
    return next;
  }
}

const commentLocks = new KeyedMutex();

export interface OctokitPortOptions {
  /** Is this comment one of ours? The App: comments by a Bot account; the CLI: by the token's user. */
  ownComment?: (c: { user: { login: string; type: string } | null }) => boolean;
  /** The token for git; default: the Octokit's own installation token. */
  gitToken?: () => Promise<string | undefined>;
}

export class OctokitPort implements GitHubPort {
  readonly #o: OctokitLike;
  readonly #own: NonNullable<OctokitPortOptions['ownComment']>;
  readonly #gitToken: () => Promise<string | undefined>;
  readonly #commentIds = new Map<string, number>();

  constructor(octokit: OctokitLike, opts: OctokitPortOptions = {}) {
    this.#o = octokit;
    this.#own = opts.ownComment ?? ((c) => Boolean(c.user && isBotAccount(c.user)));
    this.#gitToken =
      opts.gitToken ??
      (async () => {
        const a = (await this.#o.auth?.({ type: 'installation' })) as { token?: string } | undefined;
        return a?.token;
      });
  }

  async getIssue(r: RepoRef, n: number): Promise<IssueData> {
    const { data } = await this.#o.rest.issues.get({ ...r, issue_number: n });
    return issueDataOf(data);
  }

  async getPull(r: RepoRef, n: number): Promise<PullData> {
    const { data } = await this.#o.rest.pulls.get({ ...r, pull_number: n });
    return pullDataOf(data);
  }

  async closingIssues(r: RepoRef, n: number): Promise<number[]> {
    const res = await this.#o.graphql<{
      repository: { pullRequest: { closingIssuesReferences: { nodes: Array<{ number: number; repository: { nameWithOwner: string } }> } } | null } | null;
    }>(CLOSING_ISSUES, { owner: r.owner, repo: r.repo, number: n });
    const nodes = res.repository?.pullRequest?.closingIssuesReferences.nodes ?? [];
    const self = repoSlug(r).toLowerCase();
    return nodes.filter((x) => x.repository.nameWithOwner.toLowerCase() === self).map((x) => x.number);
  }

  async defaultBranch(r: RepoRef): Promise<{ branch: string; sha: string }> {
    const { data: repo } = await this.#o.rest.repos.get({ owner: r.owner, repo: r.repo });
    const { data: branch } = await this.#o.rest.repos.getBranch({ ...r, branch: repo.default_branch });
    return { branch: repo.default_branch, sha: branch.commit.sha };
  }

  async collaboratorPermission(r: RepoRef, login: string): Promise<string> {
    try {
      const { data } = await this.#o.rest.repos.getCollaboratorPermissionLevel({ ...r, username: login });
      return data.permission;
    } catch (e) {
      if ((e as { status?: number }).status === 404) return 'none';
      throw e;
    }
  }

  async repoConfig(r: RepoRef, path: string): Promise<unknown> {
    if (!this.#o.config) throw new Error('this Octokit has no config plugin (@probot/octokit-plugin-config)');
    // Merged as Probot's context.config merges an `_extends` chain.
    const { config } = await this.#o.config.get({ owner: r.owner, repo: r.repo, path, defaults: (configs) => merge.all<Record<string, unknown>>([{}, ...configs]) });
    return config;
  }

  gitToken(): Promise<string | undefined> {
    return this.#gitToken();
  }

  async upsertComment(r: RepoRef, n: number, kind: MarkerKind, text: string): Promise<{ id: number; created: boolean }> {
    const key = `${repoSlug(r)}#${n}:${kind}`;
    // GitHub refuses longer comments, and the job would fail on every attempt.
    const body = clipText(text, COMMENT_LIMIT);
    return commentLocks.run(key, async () => {
      let id = this.#commentIds.get(key) ?? (await this.#findComment(r, n, kind));
      if (id !== undefined) {
        try {
          await this.#o.rest.issues.updateComment({ ...r, comment_id: id, body });
          this.#commentIds.set(key, id);
          return { id, created: false };
        } catch (e) {
          // Deleted by someone since: post a new one.
          if ((e as { status?: number }).status !== 404) throw e;
          this.#commentIds.delete(key);
        }
      }
      id = await this.#createOnce(r, n, kind, body);
      this.#commentIds.set(key, id);
      return { id, created: true };
    });
  }

  /**
   * A POST that fails with a 5xx or no answer may have created the comment all the same: it is
   * not retried blindly (Octokit's retry would post it twice) but looked for by its marker first.
   */
  async #createOnce(r: RepoRef, n: number, kind: MarkerKind, body: string): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { data } = await this.#o.rest.issues.createComment({ ...r, issue_number: n, body, request: { retries: 0 } });
        return data.id;
      } catch (e) {
        const status = (e as { status?: number }).status;
        if (status !== undefined && status < 500) throw e;
        const found = await this.#findOwn(r, n, kind);
        if (found) {
          // It was created: make sure it holds this body (it does, unless another writer raced us).
          if (found.body !== body) await this.#o.rest.issues.updateComment({ ...r, comment_id: found.id, body });
          return found.id;
        }
        if (attempt >= 3) throw e;
        await new Promise((res) => setTimeout(res, 500 * attempt));
      }
    }
  }

  async #findComment(r: RepoRef, n: number, kind: MarkerKind): Promise<number | undefined> {
    return (await this.#findOwn(r, n, kind))?.id;
  }

  async #findOwn(r: RepoRef, n: number, kind: MarkerKind): Promise<{ id: number; body: string } | undefined> {
    const comments = await this.#o.paginate(this.#o.rest.issues.listComments, { ...r, issue_number: n, per_page: 100 });
    const c = comments.find((x) => this.#own(x as { user: { login: string; type: string } | null }) && markerOf(x.body) === kind);
    return c ? { id: c.id, body: c.body ?? '' } : undefined;
  }

  async setLabels(r: RepoRef, n: number, change: { add: string[]; remove: string[] }): Promise<void> {
    for (const name of change.remove) {
      try {
        await this.#o.rest.issues.removeLabel({ ...r, issue_number: n, name });
      } catch (e) {
        if ((e as { status?: number }).status !== 404) throw e;
      }
    }
    if (change.add.length) await this.#o.rest.issues.addLabels({ ...r, issue_number: n, labels: change.add });
  }

  async createCheckRun(r: RepoRef, headSha: string, name: string, f: CheckRunFields): Promise<number> {
    const { data } = await this.#o.rest.checks.create({ ...r, head_sha: headSha, name, ...checkFields(f) });
    return data.id;
  }

  async updateCheckRun(r: RepoRef, id: number, f: CheckRunFields): Promise<void> {
    await this.#o.rest.checks.update({ ...r, check_run_id: id, ...checkFields(f) });
  }

  async openDraftPull(r: RepoRef, pr: DraftPullRequest): Promise<number> {
    const ref = `refs/heads/${pr.branch}`;
    try {
      await this.#o.rest.git.createRef({ ...r, ref, sha: pr.baseSha });
    } catch (e) {
      if ((e as { status?: number }).status !== 422) throw e;
      await this.#o.rest.git.updateRef({ ...r, ref: `heads/${pr.branch}`, sha: pr.baseSha, force: true });
    }
    for (const f of pr.files) {
      await this.#o.rest.repos.createOrUpdateFileContents({
        ...r,
        path: f.path,
        branch: pr.branch,
        message: `Add a test reproducing the issue (${f.path})`,
        content: Buffer.from(f.content).toString('base64'),
        ...(f.replaces ? { sha: f.replaces } : {}),
      });
    }
    const { data } = await this.#o.rest.pulls.create({ ...r, head: pr.branch, base: pr.baseBranch, title: pr.title, body: pr.body, draft: true });
    return data.number;
  }
}

/** A check run's texts within GitHub's limits (it refuses the whole update otherwise). */
function clipOutput(o: NonNullable<CheckRunFields['output']>): NonNullable<CheckRunFields['output']> {
  return { ...o, title: o.title.slice(0, 255), summary: clipText(o.summary, CHECK_TEXT_LIMIT), ...(o.text !== undefined ? { text: clipText(o.text, CHECK_TEXT_LIMIT) } : {}) };
}

function checkFields(f: CheckRunFields) {
  return {
    ...(f.status ? { status: f.status } : {}),
    ...(f.conclusion ? { conclusion: f.conclusion, completed_at: new Date().toISOString() } : {}),
    ...(f.output ? { output: clipOutput(f.output) as { title: string; summary: string; text?: string; annotations?: never[] } } : {}),
    ...(f.actions ? { actions: f.actions as Array<{ label: string; description: string; identifier: string }> } : {}),
    ...(f.detailsUrl ? { details_url: f.detailsUrl } : {}),
  };
}
