import { mkdtempSync, rmSync } from 'node:fs';
import { cacheDir } from '../settings/index.js';
import { pidAlive } from './processes.js';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the sandbox keeps its files on the host: a cache directory (locks) and temporary
 * directories named `swt-sbx-<pid>-<purpose>-XXXXXX`, so a process (or a test) can tell its own.
 * Every temporary directory is registered and removed on process exit if its owner did not.
 */

export { cacheDir } from '../settings/index.js';

export function locksDir(): string {
  return join(cacheDir(), 'locks');
}

/** Prefix of every temporary directory this process creates. */
export function tempPrefix(pid = process.pid): string {
  return `swt-sbx-${pid}-`;
}

const live = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const dir of live) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        /* best effort at exit */
      }
    }
  });
}

export async function makeTempDir(purpose: string): Promise<string> {
  installExitHook();
  const dir = await mkdtemp(join(tmpdir(), `${tempPrefix()}${purpose}-`));
  live.add(dir);
  return dir;
}

export function makeTempDirSync(purpose: string): string {
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), `${tempPrefix()}${purpose}-`));
  live.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  live.delete(dir);
}

/** Runs fn with a fresh temporary directory that is removed afterwards, also on error. */
export async function withTempDir<T>(purpose: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await makeTempDir(purpose);
  try {
    return await fn(dir);
  } finally {
    await removeTempDir(dir);
  }
}

/** Temporary directories of this process not yet removed (for tests and diagnostics). */
export function liveTempDirs(): string[] {
  return [...live];
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */

/** Removes temporary directories left by processes of ours that died without cleaning up (SIGKILL). */
export async function reapOrphanTempDirs(): Promise<number> {
  let n = 0;
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const m = /^swt-sbx-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
    n++;
  }
  return n;
}
