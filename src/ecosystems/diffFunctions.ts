/**
 * Which functions a unified diff adds or changes, per file, for languages whose tests are
 * functions or methods (Rust, Java): the compiled-language rule judges only those when their unit
 * did not build at base. Pure.
 */
import { splitDiff } from '../patch/diffFiles.js';

export interface ChangedFunctions {
  /** Function names with an added or removed line, by repository path. */
  names: Map<string, Set<string>>;
  /** Files with a changed line outside any function the hunk shows: every test in them counts as changed. */
  whole: Set<string>;
}

export interface FunctionSyntax {
  /** The files to look at. */
  file: (path: string) => boolean;
  /** A declaration line: the function's name in its first matching group. */
  declaration: RegExp;
  /** Changed lines that belong to no function by themselves (blank, comments, attributes, annotations). */
  neutral: RegExp;
}

export function changedFunctions(diff: string, syntax: FunctionSyntax): ChangedFunctions {
  const out: ChangedFunctions = { names: new Map(), whole: new Set() };
  for (const { path: file, isDeleted, hunks } of splitDiff(diff)) {
    if (isDeleted || !syntax.file(file)) continue;
    let current: string | undefined;
    for (const line of hunks) {
      if (line.startsWith('@@')) {
        current = undefined;
        continue;
      }
      const body = line.slice(1);
      const decl = syntax.declaration.exec(body);
      if (decl) current = decl.slice(1).find((g) => !!g);
      if (!line.startsWith('+') && !line.startsWith('-')) continue;
      if (current) {
        const set = out.names.get(file) ?? new Set<string>();
        set.add(current);
        out.names.set(file, set);
      } else if (!syntax.neutral.test(body)) {
        out.whole.add(file);
      }
    }
  }
  return out;
}

/** Whether a test (its file and the function name `nameOf` reads from its id) is among the changed. */
export function isChangedFunction(t: { id: string; file?: string }, changed: ChangedFunctions, nameOf: (id: string) => string): boolean {
  if (!t.file) return false;
  if (changed.whole.has(t.file)) return true;
  return changed.names.get(t.file)?.has(nameOf(t.id)) ?? false;
}
