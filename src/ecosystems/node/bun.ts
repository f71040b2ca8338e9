/**
 * bun test's JUnit (parsed by the shared JUnit reader, flavor `bun`). A file that throws while
 * loading leaves no trace in the XML; bun's output names it in a `<file>:` header followed by an
 * "Unhandled error between tests": that makes the file's error. Pure.
 */
import { excerptForFile, normalizeRel } from '../../results/formats/common.js';
import { parseJUnit } from '../../results/formats/junit.js';
import type { FileError } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

/** The part of bun's output under `file:`'s header, up to the next file header. */
function section(output: string, file: string): string | undefined {
  const lines = output.replace(/\r\n?/g, '\n').split('\n');
  const at = lines.findIndex((l) => l.trim() === `${file}:`);
  if (at < 0) return undefined;
  const next = lines.findIndex((l, i) => i > at && /^\S+\.[cm]?[jt]sx?:$/.test(l.trim()));
  return lines.slice(at, next < 0 ? undefined : next).join('\n');
}

export function parseBunJUnit(content: string, ctx: ReportContext): OneReport {
  const r = parseJUnit(content, { ...ctx, flavor: 'bun' });
  const seen = new Set([...r.tests.map((t) => t.file), ...r.fileErrors.map((e) => e.file)]);
  const fileErrors: FileError[] = [...r.fileErrors];
  for (const f of ctx.files.map(normalizeRel)) {
    if (seen.has(f)) continue;
    const part = section(ctx.output, f);
    if (part && /^# Unhandled error|^error: /m.test(part)) fileErrors.push({ file: f, kind: 'collection', message: excerptForFile(part, f) });
  }
  return { tests: r.tests, fileErrors, complete: true, errors: [] };
}
