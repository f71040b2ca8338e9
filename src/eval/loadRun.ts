import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SwtError } from '../util/errors.js';
import { summarize, type EvalReport, type InstanceResult } from './report.js';
import { finishedRows, RESULTS_FILE } from './resume.js';

/** A run as its --out directory holds it. */
export interface RunData {
  /** The directory's name, shown when its predictions name no model. */
  label: string;
  report: EvalReport;
  results: readonly InstanceResult[];
}

/** A finished (or interrupted) run from its --out directory; the summary is recomputed from its rows. */
export async function loadRun(dir: string): Promise<RunData> {
  const path = join(dir, RESULTS_FILE);
  if (!existsSync(path)) throw new SwtError('BAD_INPUT', `${dir} holds no ${RESULTS_FILE}: not an swt eval --out directory`);
  const results = [...finishedRows(await readFile(path, 'utf8')).values()];
  return { label: dir.replace(/\/+$/, '').split('/').pop() || dir, report: summarize(results), results };
}
