import { openRepo, withState } from '../repo/git.js';
import { readTreeFiles } from '../repo/objects.js';
import { runGit } from '../repo/gitExec.js';
import { filesTouchedByPatch } from '../harness/runTests.js';

/**
 * The full contents of the files a patch adds or changes, after applying it at `rev`, with the
 * blob id each one replaces (null for a new file): what a commit through the contents API needs.
 */
export async function filesAfterPatch(repoDir: string, rev: string, patch: string): Promise<Array<{ path: string; content: string; replaces: string | null }>> {
  const repo = await openRepo(repoDir);
  const paths = filesTouchedByPatch(patch, () => true);
  return withState(repo, { rev, patches: [patch], patchNames: ['test patch'] }, async (st) => {
    const contents = await readTreeFiles(repo, st.tree, paths, st.env);
    const out: Array<{ path: string; content: string; replaces: string | null }> = [];
    for (const path of paths) {
      const content = contents.get(path);
      if (!content) continue;
      const before = await runGit(repo.path, ['rev-parse', '--verify', '--quiet', `${rev}:${path}`]);
      out.push({ path, content: content.toString('utf8'), replaces: before.code === 0 ? before.stdout.toString('utf8').trim() : null });
    }
    return out;
  });
}
