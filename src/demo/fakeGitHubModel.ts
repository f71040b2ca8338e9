/** The fake GitHub's records (repositories, issues, pulls, check runs, calls) and its HTTP errors. */
export interface RecordedCall {
  method: string;
  /** Path and query, decoded, without the `/api/v3` prefix. */
  path: string;
  body?: any;
  at: number;
}

export interface User {
  login: string;
  type: 'User' | 'Bot';
}

export interface Comment {
  id: number;
  body: string;
  user: User;
  created_at: string;
  updated_at: string;
}

export interface Issue {
  number: number;
  title: string;
  body: string;
  user: User;
  labels: string[];
  locked: boolean;
  state: 'open' | 'closed';
  comments: Comment[];
  pull?: Pull;
}

export interface Pull {
  headSha: string;
  headRef: string;
  baseRef: string;
  fork: boolean;
  /** Issues linked outside the body (GitHub's sidebar): returned by closingIssuesReferences. */
  linked: number[];
  draft: boolean;
  /** Set once merged: the merge commit, and the base it was made on. */
  merged?: { sha: string; baseSha: string; at: string };
}

export interface CheckRun {
  id: number;
  head_sha: string;
  name: string;
  status: string;
  conclusion: string | null;
  output: { title?: string; summary?: string; text?: string } | null;
  annotations: unknown[];
  actions: unknown[];
  details_url?: string;
  /** Every status the run went through, with the time (ms) it was set. */
  history: Array<{ status: string; conclusion: string | null; title?: string; summary?: string; at: number }>;
}

export interface Repo {
  owner: string;
  name: string;
  defaultBranch: string;
  dir: string;
  issues: Map<number, Issue>;
  checkRuns: CheckRun[];
  nextNumber: number;
  permissions: Map<string, string>;
}

export interface FakeGitHubOptions {
  appId?: number;
  installationId?: number;
  /** Shared with the App: webhooks are signed with it. */
  webhookSecret: string;
  /** The App's private key (PEM): JWTs are checked against its public half. */
  appPrivateKey: string;
  /** The login of the App's bot account. */
  botLogin?: string;
  /** Personal tokens accepted as users (the CLI's GITHUB_TOKEN). */
  personalTokens?: Record<string, string>;
}

/** GitHub's own limits on what it stores: longer text is refused with 422, as GitHub does. */
export const COMMENT_MAX = 65_536;
export const CHECK_TEXT_MAX = 65_535;

export function checkLength(what: string, text: unknown, max: number): void {
  if (typeof text === 'string' && text.length > max) throw new HttpError(422, `Validation Failed: ${what} is too long (maximum is ${max} characters)`);
}

export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export type Caller = { kind: 'app' } | { kind: 'installation' } | { kind: 'user'; login: string };

export const now = () => new Date().toISOString();

/** `owner/name`, as GitHub spells a repository. */
export const fullName = (r: Pick<Repo, 'owner' | 'name'>): string => `${r.owner}/${r.name}`;

/** A new open issue (a pull request with `pull`) numbered next in the repository; the caller records it. */
export function openIssue(repo: Repo, i: Pick<Issue, 'title' | 'body' | 'user' | 'labels' | 'pull'>): Issue {
  return { number: repo.nextNumber++, title: i.title, body: i.body, user: i.user, labels: i.labels, locked: false, state: 'open', comments: [], ...(i.pull ? { pull: i.pull } : {}) };
}

/** A request's body: JSON when it parses, else its text; undefined when empty. */
export async function readBody(req: AsyncIterable<unknown>): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}
