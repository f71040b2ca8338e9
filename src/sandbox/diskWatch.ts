import { logger } from '../util/logger.js';
import { isNotFound, type Docker } from './docker.js';
import { containerLabels } from './limits.js';

/**
 * Disk limits. Where the storage driver takes a writable-layer size (overlay2 on xfs with pquota,
 * btrfs, zfs) the container gets one; everywhere, a watchdog reads the size of the container's
 * writable layer (`inspect --size`: /testbed, home, every path but the tmpfs /tmp) and kills the
 * container once it passes the limit, so the run ends as "disk limit" and the engine's disk survives.
 */

export interface DiskWatch {
  /**
   * Stops watching; true when the limit was passed (and the container killed). `finalLook` (default
   * true) looks once more: a file stopped at the fsize limit between two looks still counts.
   */
  stop(finalLook?: boolean): Promise<{ exceeded: boolean; peakBytes: number }>;
}

export interface DiskWatchOptions {
  limitBytes: number;
  /** Called once when the limit is passed (kill the container). */
  onExceeded: () => Promise<unknown>;
  /** Bytes written elsewhere that count too (an install's growth of the package cache). */
  extraBytes?: () => Promise<number>;
  /** Shortest pause between two looks; the pause grows with what a look costs. */
  minIntervalMs?: number;
}

export function watchDisk(docker: Docker, id: string, opts: DiskWatchOptions): DiskWatch {
  let stopped = false;
  let exceeded = false;
  let peak = 0;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const container = docker.getContainer(id);
  /** Bytes written now; 'gone' once the container is; undefined when the engine did not answer. */
  const look = async (): Promise<number | 'gone' | undefined> => {
    try {
      const info = (await container.inspect({ size: true } as object)) as { SizeRw?: number };
      const used = (info.SizeRw ?? 0) + (opts.extraBytes ? await opts.extraBytes() : 0);
      peak = Math.max(peak, used);
      return used;
    } catch (e) {
      if (isNotFound(e)) return 'gone';
      logger.debug({ container: id, err: (e as Error).message }, 'disk watchdog: inspect failed');
      return undefined;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const t0 = Date.now();
      const used = await look();
      if (used === 'gone' || stopped) return;
      if (used !== undefined && used >= opts.limitBytes) {
        exceeded = true;
        await opts.onExceeded();
        return;
      }
      const pause = Math.max(opts.minIntervalMs ?? 500, 4 * (Date.now() - t0));
      // stop() clears the timer and wakes the loop at once, so the caller never waits for a pause;
      // unref: a watchdog alone never keeps the process alive.
      await new Promise<void>((r) => {
        wake = r;
        timer = setTimeout(r, pause);
        timer.unref();
      });
    }
  })();
  let result: Promise<{ exceeded: boolean; peakBytes: number }> | undefined;
  return {
    stop(finalLook = true) {
      return (result ??= (async () => {
        stopped = true;
        clearTimeout(timer);
        wake?.();
        await loop;
        if (!exceeded && finalLook) {
          const used = await look();
          if (typeof used === 'number' && used >= opts.limitBytes) exceeded = true;
        }
        return { exceeded, peakBytes: peak };
      })());
    },
  };
}

const storageOptCache = new WeakMap<Docker, Promise<boolean>>();

/**
 * Whether the engine's storage driver accepts a writable-layer size. overlay2 does only on xfs
 * mounted with pquota, which `docker info` does not tell: then one container is created to ask.
 */
export function storageOptSupported(docker: Docker, image: string): Promise<boolean> {
  let p = storageOptCache.get(docker);
  if (!p) {
    p = probeStorageOpt(docker, image).catch(() => false);
    storageOptCache.set(docker, p);
  }
  return p;
}

async function probeStorageOpt(docker: Docker, image: string): Promise<boolean> {
  const info = (await docker.info()) as { Driver?: string; DriverStatus?: Array<[string, string]> };
  const backing = info.DriverStatus?.find(([k]) => k === 'Backing Filesystem')?.[1] ?? '';
  if (info.Driver === 'overlay2' && backing !== 'xfs') return false;
  if (info.Driver === 'vfs') return false;
  try {
    const c = await docker.createContainer({ Image: image, Cmd: ['true'], Labels: containerLabels('cache-init'), HostConfig: { StorageOpt: { size: '1G' } } });
    await c.remove({ force: true }).catch(() => undefined);
    return true;
  } catch (e) {
    logger.info({ driver: info.Driver, err: (e as Error).message.split('\n')[0] }, 'the storage driver takes no size limit: the disk watchdog alone limits disk use');
    return false;
  }
}
