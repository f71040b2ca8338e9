import { mkdir, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { envValues, type Environment } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';
import { logger } from '../../util/logger.js';
import { isNotFound, type Docker } from '../docker.js';
import { ENV_LABELS } from './envKey.js';
import { withFileLock } from '../../util/lock.js';
import { cacheDir } from '../../settings/index.js';

/**
 * The environment image cache: when each image was last used (a marker file per image, touched at
 * every ensure, run and session), and least-recently-used eviction past a total size. An image is
 * never evicted while in use: while a container of it exists, while it was used within the lease,
 * or when the caller is about to return it.
 */

export interface EnvCacheSettings {
  /** Images are looked up, tagged and evicted within one namespace (SWT_ENV_NAMESPACE, default `default`). */
  namespace: string;
  /** Total size of the namespace's environment layers (SWT_ENV_CACHE_GB, default 20). */
  maxBytes: number;
  /** Used this recently = in use (SWT_ENV_LEASE_SECONDS, default 300). */
  leaseMs: number;
}

export const DEFAULT_NAMESPACE = envValues({}).SWT_ENV_NAMESPACE;

export function envCacheSettings(env?: Environment, over: Partial<EnvCacheSettings> = {}): EnvCacheSettings {
  const e = envValues(env);
  const namespace = over.namespace ?? e.SWT_ENV_NAMESPACE;
  if (!/^[a-z0-9][a-z0-9_-]{0,39}$/.test(namespace)) throw new SwtError('BAD_CONFIG', `SWT_ENV_NAMESPACE must be lowercase letters, digits, - or _, got ${JSON.stringify(namespace)}`);
  return { namespace, maxBytes: over.maxBytes ?? e.SWT_ENV_CACHE_GB * 1e9, leaseMs: over.leaseMs ?? e.SWT_ENV_LEASE_SECONDS * 1000 };
}

function useDir(): string {
  return join(cacheDir(), 'env-use');
}

function markerFor(image: string): string {
  return join(useDir(), image.replace(/[^A-Za-z0-9._-]+/g, '_'));
}

export async function forgetUse(name: string): Promise<void> {
  await rm(markerFor(name), { force: true });
}

/** Records a use of an environment image (or package cache) now. */
export async function markUsed(image: string): Promise<void> {
  const file = markerFor(image);
  const now = new Date();
  try {
    await utimes(file, now, now);
  } catch {
    await mkdir(useDir(), { recursive: true });
    await writeFile(file, `${image}\n`);
  }
}

export async function lastUse(image: string): Promise<number | undefined> {
  try {
    return (await stat(markerFor(image))).mtimeMs;
  } catch {
    return undefined;
  }
}

export interface CachedEnvImage {
  id: string;
  tags: string[];
  /** Bytes of its own (the layer over its base image). */
  bytes: number;
  lastUsedMs: number;
}

/** The namespace's environment images, with their own size and last use. */
export async function listEnvImages(docker: Docker, namespace: string): Promise<CachedEnvImage[]> {
  const images = await docker.listImages({ filters: { label: [`${ENV_LABELS.namespace}=${namespace}`] } });
  const baseSizes = new Map<string, number>();
  const out: CachedEnvImage[] = [];
  for (const img of images) {
    const base = img.Labels?.[ENV_LABELS.baseImage];
    if (base && !baseSizes.has(base)) {
      baseSizes.set(base, await docker.getImage(base).inspect().then((i) => i.Size, () => 0));
    }
    const tags = (img.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
    const uses = await Promise.all(tags.map(lastUse));
    const used = Math.max(img.Created * 1000, ...uses.filter((u): u is number => u !== undefined));
    // One built on a nearest layer owns only what it added to that layer.
    const under = Number(img.Labels?.[ENV_LABELS.fromBytes]) || (base ? (baseSizes.get(base) ?? 0) : 0);
    out.push({ id: img.Id, tags, bytes: Math.max(0, img.Size - under), lastUsedMs: used });
  }
  return out;
}

/**
 * Removes least recently used environment images of the namespace until their total is within
 * maxBytes, skipping any in use. Returns what it removed and the total after.
 */
export async function evictEnvironments(docker: Docker, settings: EnvCacheSettings, keep: string[] = []): Promise<{ removed: string[]; totalBytes: number }> {
  return withFileLock(`env-evict-${settings.namespace}`, async () => {
    const images = await listEnvImages(docker, settings.namespace);
    let total = images.reduce((n, i) => n + i.bytes, 0);
    // Every environment image of any namespace (or of none), listed once for the markers and the old images.
    const everyEnv = await docker.listImages({ filters: { label: [ENV_LABELS.key] } });
    await pruneMarkers(everyEnv).catch(() => undefined);
    const unnamespaced = everyEnv.filter((i) => !i.Labels?.[ENV_LABELS.namespace]);
    // Most passes (every heartbeat) end here, without listing containers.
    if (total <= settings.maxBytes && unnamespaced.length === 0) return { removed: [], totalBytes: total };
    const containers = await docker.listContainers({ all: true });
    const inUse = new Set(containers.map((c) => c.ImageID));
    const removed = await removeUnnamespaced(docker, unnamespaced, inUse, settings.leaseMs);
    if (total <= settings.maxBytes) return { removed, totalBytes: total };
    const keepSet = new Set(keep);
    const candidates = images
      .filter((i) => !inUse.has(i.id) && !i.tags.some((t) => keepSet.has(t)))
      .sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    for (const img of candidates) {
      if (total <= settings.maxBytes) break;
      // Looked at again just before removing: a use since the listing keeps it.
      if (Date.now() - (await latestUse(img.tags)) < settings.leaseMs) continue;
      if (!(await removeImage(docker, img.id, img.tags))) continue;
      total -= img.bytes;
      removed.push(img.tags[0] ?? img.id);
    }
    if (removed.length) logger.info({ removed, totalBytes: total, maxBytes: settings.maxBytes }, 'evicted least recently used environment images');
    return { removed, totalBytes: total };
  });
}

/** Removes an image by its tags (or id) and its use markers; false when it stays (a container made from it since). */
async function removeImage(docker: Docker, id: string, tags: string[]): Promise<boolean> {
  try {
    for (const tag of tags) await docker.getImage(tag).remove();
    if (tags.length === 0) await docker.getImage(id).remove();
  } catch (e) {
    // A container made from it since the listing (409), or someone else removed it (404).
    if (!isNotFound(e)) {
      logger.debug({ image: tags[0] ?? id, err: (e as Error).message }, 'environment image not removed');
      return false;
    }
  }
  for (const tag of tags) await rm(markerFor(tag), { force: true });
  return true;
}

/**
 * Environment images from before namespaces (no namespace label): no lookup finds them any more,
 * so they only take disk. Removed unless a container uses them or they were used within the lease.
 */
async function removeUnnamespaced(docker: Docker, images: Docker.ImageInfo[], inUse: Set<string>, leaseMs: number): Promise<string[]> {
  const removed: string[] = [];
  for (const img of images.filter((i) => !inUse.has(i.Id))) {
    const tags = (img.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
    if (Date.now() - (await latestUse(tags)) < leaseMs) continue;
    if (await removeImage(docker, img.Id, tags)) removed.push(tags[0] ?? img.Id);
  }
  if (removed.length) logger.info({ removed }, 'removed environment images from before namespaces');
  return removed;
}

/** The last recorded use of any of these tags (0: never). */
async function latestUse(tags: string[]): Promise<number> {
  return Math.max(0, ...(await Promise.all(tags.map(lastUse))).map((u) => u ?? 0));
}

/** Markers of environment images that no longer exist (removed by hand, or by another namespace's owner). */
async function pruneMarkers(everyEnv: Docker.ImageInfo[]): Promise<void> {
  const names = (await readdir(useDir()).catch(() => [] as string[])).filter((n) => n.startsWith('swt-env'));
  const tags = new Set(everyEnv.flatMap((i) => (i.RepoTags ?? []).map((t) => t.replace(/[^A-Za-z0-9._-]+/g, '_'))));
  for (const n of names) if (!tags.has(n)) await rm(join(useDir(), n), { force: true });
}
