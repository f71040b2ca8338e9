/** The fake GitHub's records as the REST API shows them (fakeGitHub.ts serves them). */
import { git } from '../repo/gitExec.js';
import { fullName, type Issue, type Repo } from './fakeGitHubModel.js';

/** A repository as the REST API shows it. */
export function repositoryJson(url: string, r: Repo) {
  return {
    id: 1,
    name: r.name,
    full_name: fullName(r),
    private: true,
    owner: { login: r.owner, type: 'Organization' },
    default_branch: r.defaultBranch,
    clone_url: `${url}/${r.owner}/${r.name}.git`,
    html_url: `${url}/${r.owner}/${r.name}`,
  };
}

/** An issue (or a pull request as an issue) as the REST API shows it. */
export function issueJson(url: string, r: Repo, i: Issue) {
  return {
    number: i.number,
    title: i.title,
    body: i.body,
    user: i.user,
    labels: i.labels.map((name) => ({ name })),
    locked: i.locked,
    state: i.state,
    comments: i.comments.length,
    html_url: `${url}/${r.owner}/${r.name}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
    ...(i.pull ? { pull_request: { url: `${url}/api/v3/repos/${r.owner}/${r.name}/pulls/${i.number}` } } : {}),
  };
}

/** A pull request as the REST API shows it, with its diff's line counts. */
export async function pullJson(url: string, r: Repo, i: Issue) {
  const p = i.pull!;
  const baseSha = p.merged?.baseSha ?? (await git(r.dir, ['rev-parse', `refs/heads/${p.baseRef}`])).trim();
  const stat = await git(r.dir, ['diff', '--numstat', `${baseSha}...${p.headSha}`]);
  let additions = 0;
  let deletions = 0;
  for (const line of stat.split('\n').filter(Boolean)) {
    const [a, d] = line.split('\t');
    additions += Number(a) || 0;
    deletions += Number(d) || 0;
  }
  const full = fullName(r);
  const { number, title, body, user, state } = i;
  return {
    number,
    title,
    body,
    user,
    state,
    draft: p.draft,
    head: { sha: p.headSha, ref: p.headRef, repo: { full_name: p.fork ? `${i.user.login}/${r.name}` : full, fork: p.fork } },
    base: { sha: baseSha, ref: p.baseRef, repo: { full_name: full } },
    additions,
    deletions,
    merged: Boolean(p.merged),
    merge_commit_sha: p.merged?.sha ?? null,
    merged_at: p.merged?.at ?? null,
    html_url: `${url}/${full}/pull/${i.number}`,
  };
}
