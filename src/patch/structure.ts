/**
 * Code structure over tree-sitter: the units a patch can address (functions, classes, methods, and
 * describe/it/test call blocks) with their exact line spans and indentation, and the containers
 * new units can be inserted into (the module, class bodies, describe bodies).
 *
 * Grammars are wasm files resolved from node_modules at run time, so this works from dist/ and
 * under ts-jest alike. Call `loadLanguage` (async, cached) before `analyze` (sync).
 */
import { createRequire } from 'node:module';
import { Language, Parser, type Node, type Tree } from 'web-tree-sitter';
import { classify } from './units.js';

export type Lang = 'python' | 'javascript' | 'typescript' | 'tsx';

const require = createRequire(import.meta.url);

const WASM: Record<Lang, string> = {
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  javascript: 'tree-sitter-javascript/tree-sitter-javascript.wasm',
  typescript: 'tree-sitter-typescript/tree-sitter-typescript.wasm',
  tsx: 'tree-sitter-typescript/tree-sitter-tsx.wasm',
};

export function languageForPath(path: string): Lang | null {
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  if (!m) return null;
  switch (m[1].toLowerCase()) {
    case 'py':
    case 'pyi':
      return 'python';
    case 'js':
    case 'mjs':
    case 'cjs':
    case 'jsx':
      return 'javascript';
    case 'ts':
    case 'mts':
    case 'cts':
      return 'typescript';
    case 'tsx':
      return 'tsx';
    default:
      return null;
  }
}

let initPromise: Promise<void> | null = null;
const parsers = new Map<Lang, Parser>();
const loading = new Map<Lang, Promise<Parser>>();

/** Loads (once) the grammar for `lang`. */
export function loadLanguage(lang: Lang): Promise<Parser> {
  const ready = parsers.get(lang);
  if (ready) return Promise.resolve(ready);
  let p = loading.get(lang);
  if (!p) {
    p = (async () => {
      if (!initPromise) {
        const runtime = require.resolve('web-tree-sitter/tree-sitter.wasm');
        initPromise = Parser.init({ locateFile: () => runtime });
      }
      await initPromise;
      const language = await Language.load(require.resolve(WASM[lang]));
      const parser = new Parser();
      parser.setLanguage(language);
      parsers.set(lang, parser);
      return parser;
    })();
    loading.set(lang, p);
  }
  return p;
}

/** Loads every grammar this module knows. */
export async function loadAllLanguages(): Promise<void> {
  await Promise.all((Object.keys(WASM) as Lang[]).map((l) => loadLanguage(l)));
}

export function isLoaded(lang: Lang): boolean {
  return parsers.has(lang);
}

/** The syntax tree of `text` by `path`'s language when its grammar is loaded (see loadLanguage), else undefined. */
export function parseIfLoaded(path: string, text: string): Node | undefined {
  const lang = languageForPath(path);
  const parser = lang ? parsers.get(lang) : undefined;
  return parser?.parse(text)?.rootNode ?? undefined;
}

export type UnitKind = 'function' | 'class' | 'method' | 'describe' | 'test' | 'hook' | 'import' | 'statement';

/** Kinds a rewrite can address. */
export const DEFINITION_KINDS: ReadonlySet<UnitKind> = new Set(['function', 'class', 'method', 'describe', 'test', 'hook']);

export interface Unit {
  kind: UnitKind;
  /** Function/class/method name, the first argument of describe/it/test, or the hook's name. */
  name: string;
  /** Lines (0-based, inclusive) of the whole unit, decorators and `export` included. */
  startLine: number;
  endLine: number;
  /** First line of the comment block directly above the unit (no blank line between), else startLine. */
  leadStart: number;
  /** Leading whitespace of the unit's first line. */
  indent: string;
  /** Whether a decorator line is part of the span. */
  decorated: boolean;
  /** The line of the definition itself (after decorators / `export`). */
  defLine: number;
  /** Python: the first parameter (`self` marks a method); JS: undefined. */
  firstParam?: string;
  /** The body, for classes and describe blocks. */
  body?: Container;
}

export type ContainerKind = 'module' | 'class' | 'describe';

export interface Container {
  kind: ContainerKind;
  owner?: Unit;
  /** The statements directly inside, in order (comments excluded). */
  children: Unit[];
  /** First line that belongs to the body. */
  bodyStart: number;
  /**
   * The line before which a unit appended at the end of the body goes: the closing brace's line for
   * brace languages, the line after the last statement for Python classes, the line count for the module.
   */
  bodyEnd: number;
  /** Leading whitespace of the body's statements; null when it cannot be known (empty body). */
  childIndent: string | null;
  /** Whether units can be inserted here (false for one-line bodies). */
  insertable: boolean;
}

export interface Structure {
  lang: Lang;
  lineCount: number;
  module: Container;
  containers: Container[];
  /** Every definition unit in the file, in source order (nested ones included). */
  units: Unit[];
  hasErrors: boolean;
}

/** Node types never worth descending into when looking for units. */
const SKIP_DESCENT = new Set([
  'string',
  'template_string',
  'comment',
  'number',
  'integer',
  'float',
  'regex',
  'array',
  'object',
  'list',
  'dictionary',
  'tuple',
  'set',
  'identifier',
  'property_identifier',
  'type_annotation',
  'interface_declaration',
  'type_alias_declaration',
  'import_statement',
  'import_from_statement',
]);

/** Parses `source`, reusing `oldTree` (already edited to match) when given. */
export function parse(source: string, lang: Lang, oldTree?: Tree | null): Tree {
  const parser = parsers.get(lang);
  if (!parser) throw new Error(`tree-sitter grammar for ${lang} is not loaded (call loadLanguage first)`);
  const tree = parser.parse(source, oldTree ?? null);
  if (!tree) throw new Error(`tree-sitter failed to parse (${lang})`);
  return tree;
}

/** Analyses a file. The language must have been loaded. */
export function analyze(source: string, lang: Lang): Structure {
  const tree = parse(source, lang);
  try {
    return analyzeTree(tree, source, lang);
  } finally {
    tree.delete();
  }
}

/** Analyses a parsed tree of `source` (the tree stays owned by the caller). */
export function analyzeTree(tree: Tree, source: string, lang: Lang): Structure {
  const lines = source.split('\n');
  const lineCount = source === '' ? 0 : source.endsWith('\n') ? lines.length - 1 : lines.length;
  const root = tree.rootNode;
  const module: Container = { kind: 'module', children: [], bodyStart: 0, bodyEnd: lineCount, childIndent: '', insertable: true };
  const walk: Walk = { lang, lines, units: [], containers: [module] };
  walkBody(walk, root, module, false);
  module.bodyEnd = lineCount;
  walk.units.sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine);
  return { lang, lineCount, module, containers: walk.containers, units: walk.units, hasErrors: root.hasError };
}

/** A walk over one file: the definitions and containers found so far. */
interface Walk {
  lang: Lang;
  lines: string[];
  units: Unit[];
  containers: Container[];
}

/** Walks the statements of a container body. */
function walkBody(walk: Walk, bodyNode: Node, container: Container, inClass: boolean): void {
  const nodes = bodyNode.namedChildren.filter((c): c is Node => c !== null);
  const byNode = new Map<number, Unit>();
  for (const n of nodes) {
    if (n.type === 'comment') continue;
    const { unit, inner, body } = classify(n, inClass, walk.lang, walk.lines);
    container.children.push(unit);
    byNode.set(n.id, unit);
    if (DEFINITION_KINDS.has(unit.kind)) walk.units.push(unit);
    if (body) descendContainer(walk, unit, body.node, body.kind);
    else if (inner) descend(walk, inner);
  }
  attachComments(nodes, byNode);
}

/** Attaches comment blocks directly above each statement to it. */
function attachComments(nodes: Node[], byNode: Map<number, Unit>): void {
  let pendingStart = -1;
  let pendingEnd = -1;
  for (const n of nodes) {
    if (n.type === 'comment') {
      const s = n.startPosition.row;
      if (pendingStart >= 0 && s === pendingEnd + 1) pendingEnd = n.endPosition.row;
      else {
        pendingStart = s;
        pendingEnd = n.endPosition.row;
      }
      continue;
    }
    const u = byNode.get(n.id);
    if (u && pendingStart >= 0 && pendingEnd === u.startLine - 1) u.leadStart = pendingStart;
    pendingStart = -1;
  }
}

function descendContainer(walk: Walk, owner: Unit, bodyNode: Node, kind: ContainerKind): void {
  const braces = walk.lang !== 'python';
  const openRow = bodyNode.startPosition.row;
  const closeRow = bodyNode.endPosition.row;
  const c: Container = {
    kind,
    owner,
    children: [],
    bodyStart: braces ? openRow + 1 : openRow,
    bodyEnd: braces ? closeRow : bodyNode.endPosition.row + 1,
    childIndent: null,
    insertable: braces ? closeRow > openRow : true,
  };
  owner.body = c;
  walk.containers.push(c);
  walkBody(walk, bodyNode, c, kind === 'class');
  if (c.children.length > 0) {
    c.childIndent = c.children[0].indent;
    if (!braces) c.bodyEnd = c.children[c.children.length - 1].endLine + 1;
    // A first statement sharing the opening line (`{ a(); }`) makes the body unusable.
    if (braces && c.children[0].startLine === openRow) c.insertable = false;
    if (!braces && c.children[0].startLine === owner.startLine) c.insertable = false;
  }
}

/** Looks for units nested inside arbitrary code (e.g. describe blocks inside a forEach callback). */
function descend(walk: Walk, node: Node): void {
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (SKIP_DESCENT.has(n.type)) continue;
    if (n !== node && isStatementNode(n, walk.lang === 'python')) {
      const { unit, inner, body } = classify(n, false, walk.lang, walk.lines);
      if (DEFINITION_KINDS.has(unit.kind)) walk.units.push(unit);
      if (body) descendContainer(walk, unit, body.node, body.kind);
      else if (inner && inner !== n) stack.push(inner);
      else if (inner === n) pushChildren(n, stack);
      continue;
    }
    pushChildren(n, stack);
  }
}

function pushChildren(n: Node, stack: Node[]) {
  const kids = n.namedChildren;
  for (let i = kids.length - 1; i >= 0; i--) {
    const k = kids[i];
    if (k) stack.push(k);
  }
}

function isStatementNode(n: Node, py: boolean): boolean {
  if (py) return n.type === 'function_definition' || n.type === 'class_definition' || n.type === 'decorated_definition';
  return (
    n.type === 'expression_statement' ||
    n.type === 'function_declaration' ||
    n.type === 'class_declaration' ||
    n.type === 'method_definition' ||
    n.type === 'lexical_declaration'
  );
}

const STRING_TYPES = new Set(['string', 'template_string', 'concatenated_string']);

/**
 * Lines (0-based) that start inside a multi-line string or template literal: their text is data,
 * so re-indenting must leave them alone.
 */
export function stringInteriorLines(source: string, lang: Lang): Set<number> {
  const out = new Set<number>();
  if (!/"""|'''|`|\\\n/.test(source)) return out;
  const tree = parse(source, lang);
  try {
    const stack: Node[] = [tree.rootNode];
    while (stack.length > 0) {
      const n = stack.pop()!;
      const a = n.startPosition.row;
      const b = n.endPosition.row;
      if (b === a) continue;
      if (STRING_TYPES.has(n.type)) {
        for (let r = a + 1; r <= b; r++) out.add(r);
        continue;
      }
      pushChildren(n, stack);
    }
  } finally {
    tree.delete();
  }
  return out;
}

/** The innermost unit of `units` whose span contains `line`, if any. */
export function unitAt(units: Unit[], line: number): Unit | undefined {
  let best: Unit | undefined;
  for (const u of units) {
    if (u.startLine <= line && line <= u.endLine) {
      if (!best || u.endLine - u.startLine < best.endLine - best.startLine) best = u;
    }
  }
  return best;
}
