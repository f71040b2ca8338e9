/**
 * Resuming an evaluation in the same --out: results.jsonl rows are written as instances finish, so
 * after a crash or Ctrl-C the finished ones are read back and skipped. run.json records what the
 * run measures; a different setting in the same directory is refused rather than mixed in.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SwtError } from '../util/errors.js';
import type { InstanceResult } from './report.js';

export interface RunSettings {
  /** gold, empty, file:<sha256 of the predictions>, generate:<label>. */
  predictions: string;
  coverage: boolean;
  reruns: number;
}

export const RESULTS_FILE = 'results.jsonl';
export const SETTINGS_FILE = 'run.json';

export function predictionsDigest(entries: Iterable<[string, { model_patch: string }]>): string {
  const sorted = [...entries].map(([id, p]) => [id, p.model_patch]).sort(([a], [b]) => (a! < b! ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

/** Rows that parse, by instance; a torn last line (the process died mid-write) is dropped. Pure. */
export function finishedRows(text: string): Map<string, InstanceResult> {
  const out = new Map<string, InstanceResult>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const row = JSON.parse(line) as InstanceResult;
      if (row && typeof row.instance_id === 'string') out.set(row.instance_id, row);
    } catch {
      /* torn line */
    }
  }
  return out;
}

/**
 * What `out` already holds for these settings (empty for a new or `fresh` run). Leaves
 * results.jsonl holding exactly the rows kept, and run.json the settings.
 */
export async function openRun(out: string, settings: RunSettings, fresh: boolean): Promise<Map<string, InstanceResult>> {
  const resultsPath = join(out, RESULTS_FILE);
  const settingsPath = join(out, SETTINGS_FILE);
  let done = new Map<string, InstanceResult>();
  if (!fresh && existsSync(resultsPath)) {
    const previous = existsSync(settingsPath) ? (JSON.parse(await readFile(settingsPath, 'utf8')) as RunSettings) : undefined;
    const same = previous && previous.predictions === settings.predictions && previous.coverage === settings.coverage && previous.reruns === settings.reruns;
    done = finishedRows(await readFile(resultsPath, 'utf8'));
    if (done.size > 0 && !same) {
      const was = previous ? `${previous.predictions}${previous.coverage ? ' with coverage' : ''}, reruns ${previous.reruns}` : 'unknown settings';
      throw new SwtError('BAD_INPUT', `${out} holds ${done.size} results of another run (${was})`, { hint: 'pass --fresh to start over there, or another --out' });
    }
  }
  await writeFile(resultsPath, [...done.values()].map((r) => `${JSON.stringify(r)}\n`).join(''));
  await writeFile(settingsPath, `${JSON.stringify(settings, null, 2)}\n`);
  return done;
}
