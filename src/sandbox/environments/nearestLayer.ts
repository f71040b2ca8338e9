import { envValues } from '../../settings/index.js';
import type { Docker } from '../docker.js';
import { ENV_LABELS } from '../images/envKey.js';
import type { GitRepo } from '../../repo/git.js';
import { runGit } from '../../repo/gitExec.js';
import { inHistoryOf } from './envLookup.js';

/**
 * The nearest layer a build starts from when no image matches its manifests: the newest trusted
 * image of its family (same repository, base image, install and warm-up; only the dependencies
 * differ), so the install finds an installed tree it only has to change.
 */

/** Environment layers stacked on a base image at most (Docker allows 127 layers in all). */
export const MAX_LAYER_DEPTH = 8;

export interface NearestLayer {
  image: string;
  snapshotRev: string;
  depth: number;
  bytes: number;
}

/** Nearest-layer reuse is on unless SWT_NEAREST_LAYER=0 (read at each build). */
export function nearestLayerOn(): boolean {
  return envValues().SWT_NEAREST_LAYER;
}

/**
 * The image a build of this family starts from: a trusted one (an untrusted install's tree is
 * never another build's start) of the same namespace, not stacked too deep, whose snapshot is in
 * this repository; the newest in the history of `commit` first, else the newest.
 */
export async function nearestLayer(docker: Docker, repo: GitRepo, ns: string, family: string, commit: string): Promise<NearestLayer | undefined> {
  const images = await docker.listImages({ filters: { label: [`${ENV_LABELS.family}=${family}`, `${ENV_LABELS.namespace}=${ns}`, `${ENV_LABELS.trusted}=true`] } });
  const candidates: Array<NearestLayer & { ancestor: boolean; created: number }> = [];
  for (const img of images) {
    const snapshotRev = img.Labels?.[ENV_LABELS.snapshotRev];
    const depth = Number(img.Labels?.[ENV_LABELS.depth] ?? 0);
    const tag = (img.RepoTags ?? []).find((t) => t !== '<none>:<none>');
    if (!snapshotRev || !tag || !(depth + 1 < MAX_LAYER_DEPTH)) continue;
    if ((await runGit(repo.path, ['cat-file', '-e', `${snapshotRev}^{tree}`])).code !== 0) continue;
    candidates.push({ image: tag, snapshotRev, depth, bytes: img.Size, ancestor: await inHistoryOf(repo, snapshotRev, commit), created: img.Created });
  }
  candidates.sort((a, b) => Number(b.ancestor) - Number(a.ancestor) || b.created - a.created);
  const best = candidates[0];
  return best && { image: best.image, snapshotRev: best.snapshotRev, depth: best.depth, bytes: best.bytes };
}
