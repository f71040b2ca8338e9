/**
 * What a head changes that it may not change unseen, from one git diff of the base commit and the
 * fixed code: its dependency manifests (its own install; a fork's head waits for a maintainer) and
 * its test machinery (how the tests run or report: a fork's head waits too, and the reproducing
 * tests run with base's). Which files those are, the ecosystems say.
 */
import { changedMachinery, changedManifests, machineryReads } from '../ecosystems/index.js';
import { changedPathsSince, openRepo, resolveRev, withState, type GitRepo } from '../repo/git.js';
import { readTreeFiles } from '../repo/objects.js';
import type { RepoState } from '../sandbox/types.js';

export interface HeadChanges {
  manifests: string[];
  machinery: string[];
}

const texts = (m: Map<string, Buffer>): Record<string, string> => Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

export async function headChanges(repoOrPath: string | GitRepo, base: string, fixedCode: RepoState): Promise<HeadChanges> {
  const repo = typeof repoOrPath === 'string' ? await openRepo(repoOrPath) : repoOrPath;
  const changed = await changedPathsSince(repo, base, fixedCode);
  const reads = machineryReads(changed);
  const [atBase, atHead] = await Promise.all([
    readTreeFiles(repo, `${await resolveRev(repo, base)}^{tree}`, reads),
    withState(repo, fixedCode, (st) => readTreeFiles(repo, st.tree, reads, st.env)),
  ]);
  return { manifests: changedManifests(changed), machinery: changedMachinery(changed, { base: texts(atBase), head: texts(atHead) }) };
}
