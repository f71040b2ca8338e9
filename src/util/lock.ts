import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { logger } from './logger.js';
import { locksDir } from './tempDirs.js';

/**
 * Cross-process locks (proper-lockfile under ~/.cache/swt-bot/locks) so that jest workers and
 * concurrent evaluations building the same image wait for each other, plus in-process
 * de-duplication of identical concurrent calls.
 */

export function lockFileFor(name: string): string {
  return join(locksDir(), name.replace(/[^A-Za-z0-9._-]+/g, '_') + '.lock');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function withFileLock<T>(
  name: string,
  fn: () => Promise<T>,
  opts: { waitMs?: number; onWait?: () => void } = {},
): Promise<T> {
  await mkdir(locksDir(), { recursive: true });
  const file = lockFileFor(name);
  const deadline = Date.now() + (opts.waitMs ?? 60 * 60_000);
  let release: (() => Promise<void>) | undefined;
  let told = false;
  while (!release) {
    try {
      release = await lockfile.lock(file, {
        realpath: false,
        stale: 30_000,
        update: 5_000,
        retries: 0,
        onCompromised: (err) => logger.warn({ err: err.message, lock: file }, 'sandbox lock compromised'),
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw e;
      if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${file}`);
      if (!told) {
        told = true;
        opts.onWait?.();
      }
      await sleep(500 + Math.random() * 500);
    }
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => {});
  }
}

const inflight = new Map<string, Promise<unknown>>();

/** Shares one running call among identical concurrent callers in this process. */
export function singleFlight<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const running = inflight.get(key) as Promise<T> | undefined;
  if (running) return running;
  const p = fn().finally(() => inflight.delete(key));
  inflight.set(key, p);
  return p;
}
