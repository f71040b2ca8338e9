/**
 * The words shared by github/ and the layers around it (jobs/, webhooks/, store/): a repository,
 * a pull request and an issue as the port returns them, and the port itself. Imports nothing, so
 * any folder may use it without an arrow into github/'s code.
 */

/** One repository on GitHub. */
export interface RepoRef {
  owner: string;
  repo: string;
}

/** `owner/repo`, the one spelling of a repository in keys, logs and cache scopes. */
export const repoSlug = (r: RepoRef): string => `${r.owner}/${r.repo}`;

/** Where a job acts; no installation for the CLI's token. */
export interface Target extends RepoRef {
  installationId?: number;
}

/** Which of the bot's comments (each carries a hidden marker, so it is edited rather than posted again). */
export type MarkerKind = 'reproduction' | 'validation' | 'ranking' | 'refusal' | 'notice' | 'stats' | 'limit';

export interface Annotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'failure' | 'warning';
  title: string;
  message: string;
}

export interface UserRef {
  login: string;
  type: string;
}

export interface IssueData {
  number: number;
  title: string;
  body: string;
  author: UserRef;
  locked: boolean;
  labels: string[];
  isPullRequest: boolean;
  state: string;
}

export interface PullData {
  number: number;
  title: string;
  body: string;
  author: UserRef;
  state: string;
  head: { sha: string; ref: string; repoFullName: string | null };
  base: { sha: string; ref: string; repoFullName: string };
  /** The head lives in another repository (or a deleted one). */
  fork: boolean;
  additions: number;
  deletions: number;
  /** GitHub's `updated_at` (ms): a push sets it, so it bounds when the head appeared by GitHub's own clock. */
  updatedAt?: number;
}

export type CheckStatus = 'queued' | 'in_progress' | 'completed';
export type CheckRunConclusion = 'success' | 'neutral' | 'failure' | 'cancelled' | 'action_required';

export interface CheckRunFields {
  status?: CheckStatus;
  conclusion?: CheckRunConclusion;
  output?: { title: string; summary: string; text?: string; annotations?: readonly Annotation[] };
  actions?: ReadonlyArray<{ label: string; description: string; identifier: string }>;
  detailsUrl?: string;
}

export interface DraftPullRequest {
  baseBranch: string;
  baseSha: string;
  branch: string;
  title: string;
  body: string;
  /** Full contents of the files to commit, with the blob id they replace (null: a new file). */
  files: Array<{ path: string; content: string; replaces: string | null }>;
}

export interface GitHubPort {
  getIssue(r: RepoRef, n: number): Promise<IssueData>;
  getPull(r: RepoRef, n: number): Promise<PullData>;
  /** Issues GitHub itself links as closed by the PR (GraphQL `closingIssuesReferences`). */
  closingIssues(r: RepoRef, n: number): Promise<number[]>;
  defaultBranch(r: RepoRef): Promise<{ branch: string; sha: string }>;
  collaboratorPermission(r: RepoRef, login: string): Promise<string>;
  /** The YAML file at `path` of the default branch, its `_extends` merged in ({} when there is none); github/config.ts validates it. */
  repoConfig(r: RepoRef, path: string): Promise<unknown>;
  /** A token for git over HTTPS; undefined when none is needed. */
  gitToken(): Promise<string | undefined>;
  /** Creates the comment, or edits the one found by its hidden marker. */
  upsertComment(r: RepoRef, n: number, kind: MarkerKind, body: string): Promise<{ id: number; created: boolean }>;
  setLabels(r: RepoRef, n: number, change: { add: string[]; remove: string[] }): Promise<void>;
  createCheckRun(r: RepoRef, headSha: string, name: string, fields: CheckRunFields): Promise<number>;
  updateCheckRun(r: RepoRef, id: number, fields: CheckRunFields): Promise<void>;
  openDraftPull(r: RepoRef, pr: DraftPullRequest): Promise<number>;
}

