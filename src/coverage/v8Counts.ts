/**
 * V8 block coverage → per-line counts with v8-to-istanbul (c8's converter), source maps applied
 * for code that was transformed before V8 saw it (TypeScript through ts-jest, vitest, tsx).
 * The collector's JSON comes out of the sandbox, so it is validated and never allowed to make the
 * converter read a host file: every source is handed over, external source-map URLs are blanked.
 */
import convert from 'convert-source-map';
import v8ToIstanbul from 'v8-to-istanbul';
import { z } from 'zod';
import { SANDBOX_REPO_ROOT } from '../util/repoPath.js';
import type { LineCounts } from './types.js';

const range = z.object({ startOffset: z.number().int().nonnegative(), endOffset: z.number().int().nonnegative(), count: z.number().int().nonnegative() });
const fn = z.object({ functionName: z.string(), ranges: z.array(range).min(1), isBlockCoverage: z.boolean() });
const rawMap = z.object({ version: z.number(), sources: z.array(z.string()), mappings: z.string() }).passthrough();
const script = z.object({
  file: z.string(),
  functions: z.array(fn),
  source: z.string().optional(),
  sourceMap: rawMap.optional(),
  lineLengths: z.array(z.number().int().nonnegative()).optional(),
});
export const collectedSchema = z.object({
  version: z.literal(1),
  scripts: z.array(script),
  files: z.record(z.string(), z.string()),
  /** Processes (pid-thread) that ran target code but were killed before writing all their coverage. */
  lost: z.array(z.string()).default([]),
});
export type Collected = z.infer<typeof collectedSchema>;
type Script = z.infer<typeof script>;

/**
 * Wrappers runners put around a module's code on its first line, so V8's offsets are shifted by
 * them: jest's module wrapper, vite-node's and vitest's module-runner function.
 */
const WRAPPERS = [/^\(\{"[^"\n]*":function\([^)\n]*\)\{/, /^'use strict';\s*(?:async\s*)?(?:function\s*)?\([^)\n]*\)\s*(?:=>\s*)?\{\{?/];

export function wrapperLength(source: string): number {
  for (const re of WRAPPERS) {
    const m = re.exec(source);
    if (m) return m[0].length;
  }
  return 0;
}

/** Same length, so offsets hold: no `sourceMappingURL` left for a converter to follow. */
function blankMapUrls(source: string): string {
  return source.replace(/sourceMappingURL=/g, 'sourceMappingXXX=');
}

/** Same length: c8's ignore hints would pin a line's count to 1. */
function blankIgnoreHints(source: string): string {
  return source.replace(/\b(c8|v8|node:coverage) ignore\b/g, (m) => m.replace('ignore', 'ignorx'));
}

interface Prepared {
  source: string;
  wrapper: number;
  map?: z.infer<typeof rawMap>;
}

/** What V8 ran, and the map back to the file when it ran transformed code. Null: cannot be placed. */
function prepare(s: Script, original: string | undefined): Prepared | null {
  if (s.source) {
    const wrapper = wrapperLength(s.source);
    const inline = convert.fromSource(s.source)?.toObject();
    const parsedInline = inline ? rawMap.safeParse(inline) : undefined;
    const map = s.sourceMap ?? (parsedInline?.success ? parsedInline.data : undefined);
    return { source: blankMapUrls(s.source.slice(wrapper)), wrapper, map };
  }
  if (s.sourceMap && s.lineLengths) {
    // Loader-transformed ESM: Node kept the map and the line lengths, not the code (as c8 does).
    return { source: s.lineLengths.map((n) => '.'.repeat(n)).join('\n'), wrapper: 0, map: s.sourceMap };
  }
  if (original === undefined) return null;
  return { source: blankMapUrls(original), wrapper: 0, map: s.sourceMap };
}

/** Per-line counts of every target file, summed over all the scripts V8 reported for it. */
export async function v8LineCounts(collected: Collected, targets: readonly string[]): Promise<{ counts: LineCounts; skipped: string[] }> {
  const allowed = new Set(targets);
  const counts: LineCounts = {};
  const skipped: string[] = [];
  for (const s of collected.scripts) {
    if (!allowed.has(s.file)) continue;
    const original = collected.files[s.file];
    const p = prepare(s, original);
    if (!p || !p.source) {
      skipped.push(`${s.file}: no source for a script V8 ran`);
      continue;
    }
    if (p.map && (p.map.sources.length !== 1 || original === undefined)) {
      skipped.push(`${s.file}: a source map of ${p.map.sources.length} sources`);
      continue;
    }
    const path = `${SANDBOX_REPO_ROOT}/${s.file}`;
    const sources = p.map
      ? { source: p.source, originalSource: blankIgnoreHints(original!), sourceMap: { sourcemap: { ...p.map, sources: [path], sourceRoot: undefined, sourcesContent: [blankIgnoreHints(original!)] } } }
      : { source: blankIgnoreHints(p.source) };
    const converter = v8ToIstanbul(path, p.wrapper, sources as Parameters<typeof v8ToIstanbul>[2]);
    await converter.load();
    converter.applyCoverage(s.functions);
    const data = converter.toIstanbul();
    const into = (counts[s.file] ??= {});
    for (const fileData of Object.values(data)) {
      for (const [k, loc] of Object.entries(fileData.statementMap)) {
        const line = loc.start.line;
        into[line] = (into[line] ?? 0) + (fileData.s[k] ?? 0);
      }
    }
  }
  return { counts, skipped };
}
