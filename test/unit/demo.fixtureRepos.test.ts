import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createFixtureRepo, FIXTURE_NAMES } from '../../src/demo/fixtureRepos.js';
import { parseIssueMarkdown } from '../../src/generation/issueText.js';

describe('fixture repositories', () => {
  it.each(FIXTURE_NAMES)('%s builds base and fix commits with the golden patches', async (name) => {
    const repo = await createFixtureRepo(name);
    try {
      const changed = execFileSync('git', ['diff', '--name-only', repo.base, repo.head], { cwd: repo.dir, encoding: 'utf8' })
        .trim()
        .split('\n');
      expect(changed.length).toBeGreaterThanOrEqual(2);
      expect(repo.instance.base_commit).toBe(repo.base);
      expect(repo.instance.test_patch).toContain('diff --git');
      expect(repo.instance.FAIL_TO_PASS.length).toBeGreaterThan(0);
      expect(repo.issue.title.length).toBeGreaterThan(10);
    } finally {
      await repo.cleanup();
    }
    expect(existsSync(repo.dir)).toBe(false);
  });

  it('splits an issue file into title and body', () => {
    expect(parseIssueMarkdown('# Crash\r\n\r\nbody text\n')).toEqual({ title: 'Crash', body: 'body text' });
  });
});
