import type { Docker } from '../docker.js';
import { evictEnvironments, type EnvCacheSettings } from '../images/envCache.js';
import type { Logger } from '../../util/logger.js';
import { prunePackageCaches } from './packageCache.js';
import { removalsSettled } from '../containers/liveContainers.js';

/** Upkeep after a build: the environment cache and the package caches within their sizes. */

interface UpkeepDeps {
  docker: Docker;
  log: Logger;
  cache: EnvCacheSettings;
  packageCacheBytes: number;
}

/** This process's upkeep passes after builds, one after another (each also under the eviction's file lock). */
let upkeep: Promise<void> = Promise.resolve();

/**
 * The environment cache and the package caches brought back within their sizes, after a build and
 * off its path: the caller gets its image at once (the new image is kept, and marked used, so the
 * pass never takes it). Failures are logged; `environmentUpkeep()` waits for what is under way.
 */
export function scheduleUpkeep(deps: UpkeepDeps, keep: string): void {
  const { docker, log } = deps;
  upkeep = upkeep.then(async () => {
    const t0 = Date.now();
    await evictEnvironments(docker, deps.cache, [keep]).catch((e) => log.warn({ err: (e as Error).message }, 'evicting environment images failed'));
    await prunePackageCaches(docker, deps.packageCacheBytes).catch((e) => log.warn({ err: (e as Error).message }, 'pruning package caches failed'));
    log.debug({ ms: Date.now() - t0 }, 'environment cache and package caches within their sizes');
  });
}

/** Resolves once the upkeep passes builds have started so far are done, and their install containers removed. */
export async function environmentUpkeep(): Promise<void> {
  let seen: Promise<void>;
  do {
    seen = upkeep;
    await seen;
  } while (seen !== upkeep);
  await removalsSettled();
}
