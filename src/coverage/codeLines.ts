/**
 * Which lines of a source file are code: not blank, not a comment or docstring, not an import, not
 * a type-only declaration. Line counters give such lines counts too (V8 counts the block around
 * them, Python counts an import once per process), so ΔC leaves them out. Tree-sitter does the
 * reading; files in other languages keep every non-blank line.
 */
import type { Node } from 'web-tree-sitter';
import { languageForPath, loadLanguage, parse, type Lang } from '../patch/structure.js';

const IMPORTS: Record<'python' | 'js', ReadonlySet<string>> = {
  python: new Set(['import_statement', 'import_from_statement', 'future_import_statement']),
  js: new Set(['import_statement']),
};
/** TypeScript declarations that emit no code. */
const TYPE_ONLY = new Set(['interface_declaration', 'type_alias_declaration', 'ambient_declaration']);

function isRequireCall(n: Node | null): boolean {
  if (!n) return false;
  if (n.type === 'await_expression') return isRequireCall(n.namedChild(0));
  if (n.type === 'member_expression') return isRequireCall(n.childForFieldName('object'));
  if (n.type !== 'call_expression') return false;
  const f = n.childForFieldName('function');
  return f?.type === 'identifier' && f.text === 'require';
}

/** `const x = require('x')`, `var a = require('a'), b = require('b').c` at any level. */
function isRequireDeclaration(n: Node): boolean {
  if (n.type !== 'lexical_declaration' && n.type !== 'variable_declaration') return false;
  const decls = n.namedChildren.filter((c): c is Node => !!c && c.type === 'variable_declarator');
  return decls.length > 0 && decls.every((d) => isRequireCall(d.childForFieldName('value')));
}

function isDocstring(n: Node): boolean {
  if (n.type !== 'expression_statement' || n.namedChildCount !== 1 || n.namedChild(0)?.type !== 'string') return false;
  const parent = n.parent;
  if (!parent) return false;
  const first = parent.namedChildren.find((c) => c && c.type !== 'comment');
  if (first?.id !== n.id) return false;
  return parent.type === 'module' || (parent.type === 'block' && ['function_definition', 'class_definition'].includes(parent.parent?.type ?? ''));
}

function excluded(n: Node, lang: Lang): boolean {
  if (n.type === 'comment' || n.type === 'html_comment') return true;
  if (lang === 'python') return IMPORTS.python.has(n.type) || isDocstring(n);
  if (IMPORTS.js.has(n.type) || isRequireDeclaration(n)) return true;
  if (n.type === 'export_statement' && n.childForFieldName('source')) return true; // re-export
  return (lang === 'typescript' || lang === 'tsx') && (TYPE_ONLY.has(n.type) || (n.type === 'export_statement' && TYPE_ONLY.has(n.namedChild(0)?.type ?? '')));
}

/** 1-based numbers of the lines that hold code. */
export async function codeLines(path: string, source: string): Promise<Set<number>> {
  const lang = languageForPath(path);
  const lines = source.split('\n');
  const out = new Set<number>();
  if (!lang) {
    lines.forEach((l, i) => l.trim() && out.add(i + 1));
    return out;
  }
  await loadLanguage(lang);
  const tree = parse(source, lang);
  try {
    const visit = (n: Node) => {
      if (excluded(n, lang)) return;
      if (n.childCount === 0) {
        if (n.startIndex === n.endIndex) return; // zero-width (missing) tokens
        for (let r = n.startPosition.row; r <= n.endPosition.row; r++) out.add(r + 1);
        return;
      }
      for (const c of n.children) if (c) visit(c);
    };
    visit(tree.rootNode);
  } finally {
    tree.delete();
  }
  // A multi-line token (a string spanning lines) marks its blank inner lines too; blank stays out.
  for (const l of [...out]) if (!lines[l - 1]?.trim()) out.delete(l);
  return out;
}
