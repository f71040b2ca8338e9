import { inspectImage, type Docker } from '../docker.js';
import { markUsed } from '../images/envCache.js';
import { ENV_LABELS, envImageTag } from '../images/envKey.js';
import type { GitRepo } from '../../repo/git.js';
import { runGit } from '../../repo/gitExec.js';
import type { Environment } from '../types.js';

/**
 * Finding a built environment image: one of this repository (scope), this trust and this key,
 * whose snapshot is in the history of the revision asked for (runs overlay the rest), never one
 * built from a branch beside it, such as a fork's head fetched into the same repository.
 */

export interface EnvQuery {
  key: string;
  ns: string;
  scope: string;
  trusted: boolean;
  commit: string;
  baseImage: string;
  started: number;
}

/** `ancestor` is `rev` or one of its ancestors in this repository. */
export async function inHistoryOf(repo: GitRepo, ancestor: string, rev: string): Promise<boolean> {
  if (ancestor === rev) return true;
  const r = await runGit(repo.path, ['merge-base', '--is-ancestor', ancestor, rev]);
  return r.code === 0;
}

// The image each query last found or built, by namespace, key, scope and trust: looked at first,
// because listing the engine's images costs 100 ms and more with a few hundred of them.
const lastFound = new Map<string, string>();
const memoKey = (q: EnvQuery) => JSON.stringify([q.ns, q.key, q.scope, q.trusted]);

/** Remembers the image a build of `q` made, for the next look-up. */
export function rememberEnvironment(q: EnvQuery, tag: string): void {
  lastFound.set(memoKey(q), tag);
}

export async function findEnvironment(docker: Docker, repo: GitRepo, q: EnvQuery): Promise<Environment | undefined> {
  const remembered = lastFound.get(memoKey(q));
  const hit = (remembered && (await checked(docker, repo, q, remembered))) || (await listed(docker, repo, q));
  if (hit) rememberEnvironment(q, hit.image);
  return hit;
}

/** The remembered image, when it is still there and still answers the query (the same checks as a listed one). */
async function checked(docker: Docker, repo: GitRepo, q: EnvQuery, tag: string): Promise<Environment | undefined> {
  await markUsed(tag);
  const info = await inspectImage(docker, tag);
  const labels = info?.Config?.Labels ?? {};
  if (!info || labels[ENV_LABELS.key] !== q.key || labels[ENV_LABELS.namespace] !== q.ns) return undefined;
  return answer(repo, q, tag, labels);
}

async function listed(docker: Docker, repo: GitRepo, q: EnvQuery): Promise<Environment | undefined> {
  const images = await docker.listImages({ filters: { label: [`${ENV_LABELS.key}=${q.key}`, `${ENV_LABELS.namespace}=${q.ns}`] } });
  const exact = (i: (typeof images)[number]) => (i.Labels?.[ENV_LABELS.snapshotRev] === q.commit ? 1 : 0);
  for (const img of images.sort((a, b) => exact(b) - exact(a) || b.Created - a.Created)) {
    const snapshotRev = img.Labels?.[ENV_LABELS.snapshotRev];
    if (!snapshotRev) continue;
    const tag = envImageTag(q.key, snapshotRev, q.ns);
    if (!img.RepoTags?.includes(tag)) continue;
    const found = await answer(repo, q, tag, img.Labels ?? {});
    if (!found) continue;
    await markUsed(tag);
    // Evicted between the listing and the mark: look again (or build).
    if (await inspectImage(docker, tag)) return found;
  }
  return undefined;
}

async function answer(repo: GitRepo, q: EnvQuery, tag: string, labels: Record<string, string>): Promise<Environment | undefined> {
  const snapshotRev = labels[ENV_LABELS.snapshotRev];
  if (labels[ENV_LABELS.scope] !== q.scope || labels[ENV_LABELS.trusted] !== String(q.trusted)) return undefined;
  if (!snapshotRev || !(await inHistoryOf(repo, snapshotRev, q.commit))) return undefined;
  const notes = labels[ENV_LABELS.installNotes];
  return { image: tag, key: q.key, baseImage: q.baseImage, snapshotRev, cached: true, buildMs: Date.now() - q.started, ...(notes === undefined ? {} : { installNotes: Buffer.from(notes, 'base64').toString('utf8') }) };
}
