import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { isAbsolute } from 'node:path';
import { logger } from '../../util/logger.js';
import { diskUsage, isNotFound, type Docker } from '../docker.js';
import { forgetUse, lastUse, markUsed } from '../images/envCache.js';
import { containerLabels, LABEL, lockedHostConfig } from '../containers/limits.js';
import { registerContainer, removeContainer, createTracked } from '../containers/liveContainers.js';
import { singleFlight, withFileLock } from '../../util/lock.js';
import { ownerGone, OWN_START_TICKS } from '../../util/processes.js';
import { SAVED_INSTALLS_DIR } from './savedInstall.js';

/**
 * Package caches: one Docker volume per repository holding npm's, pip's, yarn's, pnpm's, Go's, bundler's and composer's download caches,
 * mounted only into that repository's install containers (never into test runs or sessions), so an
 * environment rebuilt for a bumped dependency downloads only what changed. One repository's
 * install scripts never see, nor write into, another repository's cache; an untrusted head's
 * install (cacheWrite: false) gets a throwaway copy of its repository's cache, never the cache.
 */

export const CACHE_MOUNT = '/swt-cache';

export const CACHE_LABELS = {
  cache: `${LABEL}.pkg-cache`,
  scope: `${LABEL}.pkg-cache.scope`,
  host: `${LABEL}.pkg-cache.host`,
  /** A throwaway copy for one install: removed after it, or once its owner process is gone. */
  throwaway: `${LABEL}.pkg-cache.throwaway`,
  pid: `${LABEL}.pkg-cache.pid`,
  started: `${LABEL}.pkg-cache.started`,
} as const;

export function cacheVolumeName(scope: string): string {
  return `swt-pkg-cache-${createHash('sha256').update(scope).digest('hex').slice(0, 16)}`;
}

/**
 * Variables that point the package managers at the volume and keep them from asking the registry
 * what the cache already answers: npm, npx and pnpm take cached metadata without revalidating it
 * (prefer-offline) and skip audit, fund and update checks; pip skips its version check. Go's
 * download cache is saved into the volume by its install (`$SWT_PKG_CACHE/go`, a GOPROXY layout)
 * and read back first. Only download caches live here: what tests need (node_modules,
 * site-packages, Go's module cache) stays in the image.
 */
export function cacheEnv(): string[] {
  return [
    `SWT_PKG_CACHE=${CACHE_MOUNT}`,
    `npm_config_cache=${CACHE_MOUNT}/npm`,
    'npm_config_prefer_offline=true',
    'npm_config_audit=false',
    'npm_config_fund=false',
    'npm_config_update_notifier=false',
    `PIP_CACHE_DIR=${CACHE_MOUNT}/pip`,
    'PIP_DISABLE_PIP_VERSION_CHECK=1',
    // uv (time-consistent Python installs): the volume is another filesystem, so copy, not hardlink.
    `UV_CACHE_DIR=${CACHE_MOUNT}/uv`,
    'UV_LINK_MODE=copy',
    `YARN_CACHE_FOLDER=${CACHE_MOUNT}/yarn`,
    `npm_config_store_dir=${CACHE_MOUNT}/pnpm`,
    // A module the volume lacks is a 404 there: Go asks the next proxy.
    `GOPROXY=file://${CACHE_MOUNT}/go,https://proxy.golang.org,direct`,
    `BUNDLE_USER_CACHE=${CACHE_MOUNT}/bundler`,
    `GEM_SPEC_CACHE=${CACHE_MOUNT}/gem-specs`,
    `COMPOSER_CACHE_DIR=${CACHE_MOUNT}/composer`,
  ];
}

/** The volume of a scope, created (and handed to the sandbox user) on first use. */
// Volumes this process created that no install has written to yet: no saved install can be in them.
const createdEmpty = new Set<string>();

/** Whether `volume` was created by this process and no install has used it since (see markFilled). */
export function isNewEmptyVolume(volume: string): boolean {
  return createdEmpty.has(volume);
}

/** An install wrote to `volume`. */
export function markFilled(volume: string): void {
  createdEmpty.delete(volume);
}

export async function ensureCacheVolume(docker: Docker, scope: string, image: string): Promise<string> {
  const name = cacheVolumeName(scope);
  await markUsed(name);
  const exists = async () => docker.getVolume(name).inspect().then(() => true, (e) => (isNotFound(e) ? false : Promise.reject(e)));
  if (await exists()) return name;
  return singleFlight(`pkg-cache:${name}`, () =>
    withFileLock(`pkg-cache-${name}`, async () => {
      if (await exists()) return name;
      await docker.createVolume({ Name: name, Labels: { [LABEL]: '1', [CACHE_LABELS.cache]: '1', [CACHE_LABELS.scope]: scope, [CACHE_LABELS.host]: hostname() } });
      createdEmpty.add(name);
      // A new volume belongs to root: one short container (only CAP_CHOWN, no network) gives it to uid 1000.
      const c = await createTracked(() => docker.createContainer({
        Image: image,
        Entrypoint: [],
        Cmd: ['chown', '1000:1000', CACHE_MOUNT],
        User: '0:0',
        NetworkDisabled: true,
        Labels: containerLabels('cache-init'),
        HostConfig: {
          ...lockedHostConfig('cache-init'),
          Mounts: [{ Type: 'volume', Source: name, Target: CACHE_MOUNT }],
        },
      }));
      registerContainer(docker, c.id);
      try {
        await c.start();
        const r = (await c.wait()) as { StatusCode: number };
        if (r.StatusCode !== 0) throw new Error(`preparing the package cache ${name} failed (exit ${r.StatusCode})`);
      } catch (e) {
        await docker.getVolume(name).remove().catch(() => undefined);
        throw e;
      } finally {
        await removeContainer(docker, c.id).catch(() => undefined);
      }
      return name;
    }),
  );
}

/**
 * Runs `fn` with a private copy of the scope's package cache (a new volume seeded from the cache,
 * mounted read-only for the copy): the install finds what its repository cached, and whatever it
 * writes goes with the copy, removed after.
 */
export async function withThrowawayCache<T>(docker: Docker, scope: string, image: string, fn: (volume: string) => Promise<T>): Promise<T> {
  const shared = await ensureCacheVolume(docker, scope, image);
  const name = `swt-pkg-cache-tmp-${randomBytes(8).toString('hex')}`;
  await docker.createVolume({
    Name: name,
    Labels: {
      [LABEL]: '1',
      [CACHE_LABELS.throwaway]: '1',
      [CACHE_LABELS.host]: hostname(),
      [CACHE_LABELS.pid]: String(process.pid),
      ...(OWN_START_TICKS ? { [CACHE_LABELS.started]: OWN_START_TICKS } : {}),
    },
  });
  try {
    // Our own command (cp), no network, the cache read-only: the copy keeps owners (uid 1000).
    // Saved installs stay behind: an untrusted build's key never matches a trusted one's, and each is a whole installed tree.
    const c = await createTracked(() => docker.createContainer({
      Image: image,
      Entrypoint: [],
      Cmd: ['sh', '-c', `cd /swt-cache-src && find . -mindepth 1 -maxdepth 1 ! -name ${SAVED_INSTALLS_DIR} -exec cp -a {} ${CACHE_MOUNT}/ \\; && chown 1000:1000 ${CACHE_MOUNT}`],
      User: '0:0',
      NetworkDisabled: true,
      Labels: containerLabels('cache-copy'),
      HostConfig: {
        ...lockedHostConfig('cache-copy'),
        Mounts: [
          { Type: 'volume', Source: shared, Target: '/swt-cache-src', ReadOnly: true },
          { Type: 'volume', Source: name, Target: CACHE_MOUNT },
        ],
      },
    }));
    registerContainer(docker, c.id);
    try {
      await c.start();
      const r = (await c.wait()) as { StatusCode: number };
      if (r.StatusCode !== 0) throw new Error(`copying the package cache ${shared} failed (exit ${r.StatusCode})`);
    } finally {
      await removeContainer(docker, c.id).catch(() => undefined);
    }
    return await fn(name);
  } finally {
    await docker.getVolume(name).remove().catch((e) => logger.warn({ volume: name, err: (e as Error).message }, 'removing a throwaway package cache failed'));
  }
}

/** Throwaway caches of this host whose owner process is gone (it was killed mid-install). */
async function pruneThrowaways(docker: Docker): Promise<string[]> {
  const listed = await docker.listVolumes({ filters: { label: [CACHE_LABELS.throwaway] } });
  const removed: string[] = [];
  for (const v of listed.Volumes ?? []) {
    const l = v.Labels ?? {};
    if (l[CACHE_LABELS.host] !== hostname() || !ownerGone(Number(l[CACHE_LABELS.pid]), l[CACHE_LABELS.started])) continue;
    if (await removeVolume(docker, v.Name)) removed.push(v.Name);
  }
  return removed;
}

let lastSizeCheck = 0;
const SIZE_CHECK_EVERY_MS = 10 * 60_000;

async function removeVolume(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).remove();
    await forgetUse(name);
    return true;
  } catch (e) {
    if (!isNotFound(e)) logger.debug({ volume: name, err: (e as Error).message }, 'package cache not removed (in use)');
    return false;
  }
}

/**
 * Removes package caches nobody can use any more (their repository path is gone from this host)
 * and, past maxBytes, the least recently used ones (sizes come from `docker system df`, which is
 * slow on a busy engine: at most every 10 minutes, unless `force`). Volumes in use stay.
 */
export async function prunePackageCaches(docker: Docker, maxBytes: number, opts: { force?: boolean } = {}): Promise<string[]> {
  const host = hostname();
  const listed = await docker.listVolumes({ filters: { label: [CACHE_LABELS.cache] } });
  const removed: string[] = await pruneThrowaways(docker);
  for (const v of listed.Volumes ?? []) {
    const scope = v.Labels?.[CACHE_LABELS.scope] ?? '';
    if (v.Labels?.[CACHE_LABELS.host] === host && isAbsolute(scope) && !existsSync(scope) && (await removeVolume(docker, v.Name))) removed.push(v.Name);
  }
  const left = (listed.Volumes ?? []).filter((v) => !removed.includes(v.Name)).length;
  if (Number.isFinite(maxBytes) && left > 0 && (opts.force || Date.now() - lastSizeCheck > SIZE_CHECK_EVERY_MS)) {
    lastSizeCheck = Date.now();
    const df = (await diskUsage(docker)) as { Volumes?: Array<{ Name: string; Labels?: Record<string, string> | null; UsageData?: { Size: number } }> };
    const kept = await Promise.all(
      (df.Volumes ?? [])
        .filter((v) => v.Labels?.[CACHE_LABELS.cache] === '1' && !removed.includes(v.Name))
        .map(async (v) => ({ name: v.Name, bytes: Math.max(0, v.UsageData?.Size ?? 0), used: (await lastUse(v.Name)) ?? 0 })),
    );
    let total = kept.reduce((n, v) => n + v.bytes, 0);
    for (const v of kept.sort((a, b) => a.used - b.used)) {
      if (total <= maxBytes) break;
      if (Date.now() - v.used < 60_000) continue;
      if (await removeVolume(docker, v.name)) {
        total -= v.bytes;
        removed.push(v.name);
      }
    }
  }
  if (removed.length) logger.info({ removed }, 'removed package caches');
  return removed;
}
