/**
 * Line counts of finished coverage runs, on disk by what decides them: the repository tree the run
 * saw, the test files, the environment, the runner and the target files. The golden tests' runs of
 * an instance are the same for every prediction graded on it, so a second evaluation skips them.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { cacheDir } from '../util/tempDirs.js';
import type { LineCounts } from './types.js';

/** Bump when counting changes meaning (the in-sandbox scripts, the conversion, the code-line filter). */
export const COVERAGE_CACHE_VERSION = 1;

export interface RunKey {
  tree: string;
  files: readonly string[];
  envKey: string;
  runner: string;
  counter: string;
  targets: readonly string[];
}

export function runKey(k: RunKey): string {
  return createHash('sha256').update(JSON.stringify({ v: COVERAGE_CACHE_VERSION, ...k })).digest('hex');
}

const countsSchema = z.record(z.string(), z.record(z.string(), z.number()));

function pathOf(key: string): string {
  return join(cacheDir(), 'coverage', key.slice(0, 2), `${key}.json`);
}

export async function cachedCounts(key: string): Promise<LineCounts | undefined> {
  try {
    const parsed = countsSchema.safeParse(JSON.parse(await readFile(pathOf(key), 'utf8')));
    return parsed.success ? (parsed.data as unknown as LineCounts) : undefined;
  } catch {
    return undefined;
  }
}

export async function storeCounts(key: string, counts: LineCounts): Promise<void> {
  const path = pathOf(key);
  await mkdir(join(path, '..'), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(counts));
  await rename(tmp, path);
}
