/**
 * Shorter views of the repository's test files for a small model's prompt, pure. Shown whole, a
 * test file is what the 1.5B copies: asked for one new test, it wrote out the existing file's
 * fixture table or parametrize list until the answer limit (devalue, humanize, sqlparse, send in
 * bench:generate). Its imports are what the new test needs from it.
 */

/** A file shown by its first `lines` lines (marked truncated when that leaves any out). */
export function fileHead<F extends { content: string; truncated?: boolean }>(f: F, lines: number): F {
  const all = f.content.split('\n');
  return all.length <= lines + 1 ? f : { ...f, content: all.slice(0, lines).join('\n'), truncated: true };
}

/**
 * Statements that bring in code, in the languages swt runs (a list of keywords, not a test for
 * one language): import/from, package, use/using, extern crate, #include, require, namespace, <?php.
 */
const IMPORT_LINE = /^(import\b|from\s+\S+\s+import\b|package\s|use\s|using\s|extern\s+crate\b|#include\b|require(_relative)?\b|namespace\s|<\?php|(const|let|var)\s+[\w${}\s,:]+=\s*require\s*\(|['"]use strict['"])/;
/** Comments, decorators' and attributes' `#`, and a shebang. */
const COMMENT_LINE = /^(\/\/|\/\*|\*|#(?!include)|--)/;
const TRIPLE = /"""|'''/g;

/**
 * The file's opening: its blank lines, comments, docstring and import statements (an import's
 * bracketed continuation lines too), up to the first other line and at most `max` lines. Marked
 * truncated when anything is left out.
 */
export function filePreamble<F extends { content: string; truncated?: boolean }>(f: F, max = 20): F {
  const lines = f.content.split('\n');
  const keep: string[] = [];
  let open = 0;
  let inString = false;
  for (const line of lines) {
    if (keep.length >= max) break;
    const t = line.trim();
    const triples = (t.match(TRIPLE) ?? []).length;
    const opening = inString || open > 0 || t === '' || COMMENT_LINE.test(t) || IMPORT_LINE.test(t) || (triples > 0 && /^[rRbBuU]?("""|''')/.test(t));
    if (!opening) break;
    keep.push(line);
    if (triples % 2 === 1) inString = !inString;
    if (!inString) open = Math.max(0, open + (t.match(/[({[]/g) ?? []).length - (t.match(/[)}\]]/g) ?? []).length);
  }
  const content = keep.join('\n').trimEnd();
  return content === f.content.trimEnd() ? f : { ...f, content, truncated: true };
}
