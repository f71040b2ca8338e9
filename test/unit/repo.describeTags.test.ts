/** `git describe --tags` kept while the tags stay as they were, asked again once they move (real git). */
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describeTags } from '../../src/repo/describeTags.js';
import { openRepo } from '../../src/repo/git.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

afterAll(cleanupGitRepos);

/** `f` with no git to be found: an answer it gives is one no git process gave. */
async function withoutGit<T>(f: () => Promise<T>): Promise<T> {
  const path = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    return await f();
  } finally {
    process.env.PATH = path;
  }
}

/** The tag files' times set to `at`: by default a minute ago, as after the tags were still a while (describeTags keeps nothing newer than 2 s). */
function tagsChangedAt(repoPath: string, at = new Date(Date.now() - 60_000)): void {
  const git = join(repoPath, '.git');
  const dirs = (d: string): string[] => [d, ...readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => dirs(join(d, e.name)))];
  for (const p of [join(git, 'packed-refs'), ...dirs(join(git, 'refs', 'tags'))]) if (existsSync(p)) utimesSync(p, at, at);
}

describe('describeTags', () => {
  it('is kept once the tags have been still a while: the second answer needs no git', async () => {
    const r = createGitRepo({ 'a.txt': 'one\n' });
    r.git('tag', 'v1.0');
    tagsChangedAt(r.path);
    const repo = await openRepo(r.path);
    expect(await describeTags(repo, r.sha)).toBe('v1.0');
    expect(await withoutGit(() => describeTags(repo, r.sha))).toBe('v1.0');
    // The check that git is really out of reach: a commit never asked about fails to be described.
    const next = r.commit({ 'a.txt': 'two\n' });
    await expect(withoutGit(() => describeTags(repo, next))).rejects.toThrow();
  });

  it('is not kept while the tags changed within the last seconds (their times may not show the next change yet)', async () => {
    const r = createGitRepo({ 'a.txt': 'one\n' });
    r.git('tag', 'v1.0');
    // Changed "just now" however slow this machine is: their times are set ahead of the clock.
    tagsChangedAt(r.path, new Date(Date.now() + 10_000));
    const repo = await openRepo(r.path);
    expect(await describeTags(repo, r.sha)).toBe('v1.0');
    await expect(withoutGit(() => describeTags(repo, r.sha))).rejects.toThrow();
  });

  it('"no tag" is kept too, until a tag is made', async () => {
    const r = createGitRepo({ 'a.txt': 'one\n' });
    tagsChangedAt(r.path);
    const repo = await openRepo(r.path);
    expect(await describeTags(repo, r.sha)).toBe('');
    expect(await withoutGit(() => describeTags(repo, r.sha))).toBe('');
    r.git('tag', '-a', '-m', 'release', 'v2.0');
    expect(await describeTags(repo, r.sha)).toBe('v2.0');
  });

  it('sees tags made, moved and removed once an answer was kept: loose, in a directory of their own, packed', async () => {
    const r = createGitRepo({ 'a.txt': 'one\n' });
    const first = r.sha;
    r.git('tag', 'v1.0');
    const second = r.commit({ 'a.txt': 'two\n' });
    const repo = await openRepo(r.path);
    // Each answer kept (the tags settled), then the tags changed: the next answer is git's again.
    const kept = async (commit: string) => {
      tagsChangedAt(r.path);
      const answer = await describeTags(repo, commit);
      expect(await withoutGit(() => describeTags(repo, commit))).toBe(answer);
      return answer;
    };
    expect(await kept(second)).toMatch(/^v1\.0-1-g[0-9a-f]+$/);
    // A tag in a directory under refs/tags: the directory is new.
    r.git('tag', 'rel/v1.1', second);
    expect(await kept(second)).toBe('rel/v1.1');
    // Another in that same directory, the first gone: only that directory changed.
    r.git('tag', '-d', 'rel/v1.1');
    r.git('tag', 'rel/v1.2', second);
    expect(await kept(second)).toBe('rel/v1.2');
    // Packed, then one removed from the packed file.
    r.git('pack-refs', '--all');
    expect(await kept(second)).toBe('rel/v1.2');
    r.git('tag', '-d', 'rel/v1.2');
    expect(await kept(second)).toMatch(/^v1\.0-1-g/);
    expect(await kept(first)).toBe('v1.0');
    // Moved: the same name on another commit.
    r.git('tag', '-f', 'v1.0', second);
    expect(await describeTags(repo, first)).toBe('');
    expect(await describeTags(repo, second)).toBe('v1.0');
  });
});
