/**
 * gcc's own line counters: the build instrumented with `--coverage` (the ecosystem says how its
 * builds take it), the tests write `.gcda` files beside the objects, then `gcov --json-format
 * --stdout` over all of them (one JSON document a line) is turned here into per-line counts. Pure.
 */
import { posix } from 'node:path';
import { z } from 'zod';
import { shellQuote } from '../util/shell.js';

/** What the in-sandbox step writes under the coverage out dir. */
export const GCOV_FILE = 'gcov.jsonl';

/**
 * Shell run after the tests, in the repository root: gcov over every `.gcda` the run wrote, sources
 * outside `root` (system and framework headers) left out (`-r` with `-s root`), into `file`.
 */
export function gcovCollect(root: string, file: string): string {
  return (
    `find . -name '*.gcda' -not -path './.git/*' -print0 | xargs -0 -r gcov -r -s ${shellQuote(root)} --json-format --stdout > ${shellQuote(file)} 2>/dev/null; ` +
    `[ -s ${shellQuote(file)} ] || echo 'swt: no .gcda file was written (the build or the tests did not run instrumented)'`
  );
}

const documentSchema = z.object({
  current_working_directory: z.string().optional(),
  files: z.array(z.object({ file: z.string(), lines: z.array(z.object({ line_number: z.number(), count: z.number() })).default([]) })).default([]),
});

/** `file` as a gcov document names it (absolute, or relative to the compiler's directory), from the repository root; undefined outside it. */
function repoRelative(file: string, cwd: string | undefined, root: string): string | undefined {
  const abs = posix.normalize(posix.isAbsolute(file) ? file : posix.join(cwd ?? root, file));
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return abs.startsWith(prefix) ? abs.slice(prefix.length) : undefined;
}

/**
 * Per-line counts of the target files from gcov's JSON lines. A source compiled into several
 * objects, or a header included by several, has its counts summed; only executed lines are kept
 * (absent = never executed), as the other counters give them. Lines that are not JSON are skipped.
 */
export function parseGcovJson(text: string, targets: readonly string[], root: string): Record<string, Record<number, number>> {
  const wanted = new Set(targets);
  const out: Record<string, Record<number, number>> = {};
  for (const raw of text.split('\n')) {
    if (!raw.trim().startsWith('{')) continue;
    let parsed;
    try {
      parsed = documentSchema.safeParse(JSON.parse(raw));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    for (const f of parsed.data.files) {
      const path = repoRelative(f.file, parsed.data.current_working_directory, root);
      if (!path || !wanted.has(path)) continue;
      const counts = (out[path] ??= {});
      for (const l of f.lines) if (l.count > 0) counts[l.line_number] = (counts[l.line_number] ?? 0) + l.count;
    }
  }
  return out;
}
