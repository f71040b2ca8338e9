/**
 * The tree-sitter parsers snippets are read with: JavaScript and TypeScript with the TypeScript
 * grammar (a superset for what issues hold). `loadSnippetSyntax` loads them once, before any parse.
 */
import type { Node, Parser } from 'web-tree-sitter';
import { loadLanguage } from '../../patch/structure.js';

export type CodeLang = 'python' | 'js';

const parsers = new Map<CodeLang, Parser>();

export async function loadSnippetSyntax(): Promise<void> {
  const [py, ts] = await Promise.all([loadLanguage('python'), loadLanguage('typescript')]);
  parsers.set('python', py);
  parsers.set('js', ts);
}

export function parse(lang: CodeLang, code: string): Node {
  const p = parsers.get(lang);
  if (!p) throw new Error('snippet syntax used before loadSnippetSyntax()');
  const tree = p.parse(code);
  if (!tree) throw new Error('tree-sitter returned no tree');
  return tree.rootNode;
}
