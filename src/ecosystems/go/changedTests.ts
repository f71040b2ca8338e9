/** Which Go tests a unified diff adds or changes, by package directory and top-level name. Pure. */
import { splitDiff } from '../../patch/diffFiles.js';
import { dirOf } from './goTestJson.js';

export interface ChangedGoTest {
  /** Repository-relative directory of the package. */
  dir: string;
  name: string;
}

const FUNC = /^func\s+((?:Test|Benchmark|Fuzz|Example)\w*)\s*\(/;

/**
 * Tests whose function the diff adds or whose body it changes: a `+`/`-` line counts for the
 * function it is in, known from the hunk header (git writes the enclosing `func` line there),
 * the `func` lines the hunk passes and the `}` that ends each; blank lines count for none.
 */
export function changedGoTests(diff: string): ChangedGoTest[] {
  const out = new Map<string, ChangedGoTest>();
  for (const { path: file, isDeleted, hunks } of splitDiff(diff)) {
    if (isDeleted || !file.endsWith('_test.go')) continue;
    let current: string | undefined;
    for (const line of hunks) {
      const hunk = /^@@ [^@]* @@ ?(.*)$/.exec(line);
      if (hunk) {
        current = FUNC.exec(hunk[1] ?? '')?.[1];
        continue;
      }
      const body = line.slice(1);
      const f = /^func\s/.test(body) ? FUNC.exec(body) : null;
      if (/^func\s/.test(body)) current = f?.[1];
      if ((line.startsWith('+') || line.startsWith('-')) && current && body.trim()) {
        const dir = dirOf(file);
        out.set(`${dir}\0${current}`, { dir, name: current });
      }
      // gofmt closes a top-level function with `}` in column 0.
      if (body === '}') current = undefined;
    }
  }
  return [...out.values()];
}

/** Whether a Go test id (`<import path>.<TestName>[/<subtest>]`) in `dir` is one of `changed` (subtests of a changed test count). */
export function isChangedGoTest(t: { id: string; file?: string }, changed: readonly ChangedGoTest[]): boolean {
  const file = t.file ?? '';
  const dir = dirOf(file);
  return changed.some((c) => c.dir === dir && (t.id.endsWith(`.${c.name}`) || t.id.includes(`.${c.name}/`)));
}
