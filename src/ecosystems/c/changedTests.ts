/** Which C/C++ tests a unified diff adds or changes: the declarations whose bodies hold a changed line. Pure. */
import { splitDiff } from '../../patch/diffFiles.js';
import { declaredTests, type Declared } from './declarations.js';

const SOURCE = /\.(c|cc|cpp|cxx|c\+\+)$/i;

/**
 * A `+`/`-` line counts for the test declared last above it (in the hunk, or named by the hunk
 * header, where git writes the enclosing `TEST(…)` line); a `}` in column 0 ends it.
 */
export function changedDeclarations(diff: string): Declared[] {
  const out = new Map<string, Declared>();
  for (const { path: file, isDeleted, hunks } of splitDiff(diff)) {
    if (isDeleted || !SOURCE.test(file)) continue;
    let current: Declared | undefined;
    for (const line of hunks) {
      const hunk = /^@@ [^@]* @@ ?(.*)$/.exec(line);
      if (hunk) {
        current = declaredTests(file, hunk[1] ?? '')[0];
        continue;
      }
      const body = line.slice(1);
      const decl = declaredTests(file, body)[0];
      if (decl) current = decl;
      if ((line.startsWith('+') || line.startsWith('-')) && current && body.trim()) out.set(`${file}\0${current.name}`, current);
      if (body.startsWith('}')) current = undefined;
    }
  }
  return [...out.values()];
}
