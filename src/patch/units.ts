/**
 * One statement of a parsed file as a unit (structure.ts walks the file): what it is (function,
 * class, method, describe/it/test block, hook, import, plain statement), its name, its span and
 * indentation, and the body to look into for more units. Python and JavaScript/TypeScript.
 */
import type { Node } from 'web-tree-sitter';
import type { ContainerKind, Lang, Unit, UnitKind } from './structure.js';

const TEST_CALLS: Record<string, UnitKind> = {
  describe: 'describe',
  context: 'describe',
  suite: 'describe',
  fdescribe: 'describe',
  xdescribe: 'describe',
  xcontext: 'describe',
  it: 'test',
  test: 'test',
  specify: 'test',
  fit: 'test',
  xit: 'test',
  xtest: 'test',
  beforeEach: 'hook',
  afterEach: 'hook',
  beforeAll: 'hook',
  afterAll: 'hook',
  before: 'hook',
  after: 'hook',
  suiteSetup: 'hook',
  suiteTeardown: 'hook',
  setup: 'hook',
  teardown: 'hook',
};

function lineIndent(lines: string[], row: number): string {
  const l = lines[row] ?? '';
  const m = /^[ \t]*/.exec(l);
  return m ? m[0] : '';
}

function stripQuotes(text: string): string {
  const t = text.trim();
  if (t.length >= 2) {
    const q = t[0];
    if ((q === '"' || q === "'" || q === '`') && t[t.length - 1] === q) return t.slice(1, -1);
  }
  // Python string prefixes
  const m = /^[rRbBuUfF]{0,2}(["']{1,3})([\s\S]*)\1$/.exec(t);
  if (m) return m[2];
  return t;
}

/** For a call expression, the test-call kind and its base identifier, if it is one. */
function testCallInfo(call: Node): { kind: UnitKind; base: string } | null {
  let fn = call.childForFieldName('function');
  let depth = 0;
  while (fn && depth < 6) {
    depth++;
    if (fn.type === 'identifier') {
      const kind = TEST_CALLS[fn.text];
      return kind ? { kind, base: fn.text } : null;
    }
    if (fn.type === 'member_expression') fn = fn.childForFieldName('object');
    else if (fn.type === 'call_expression') fn = fn.childForFieldName('function');
    else return null;
  }
  return null;
}

function callArgs(call: Node): Node[] {
  const args = call.childForFieldName('arguments');
  if (!args) return [];
  return args.namedChildren.filter((n): n is Node => n !== null && n.type !== 'comment');
}

function isRequireCall(n: Node | null | undefined): boolean {
  if (!n) return false;
  let v: Node | null = n;
  // require('x').y and require('x')(...) count too
  while (v && (v.type === 'member_expression' || (v.type === 'call_expression' && v.childForFieldName('function')?.type !== 'identifier'))) {
    v = v.type === 'member_expression' ? v.childForFieldName('object') : v.childForFieldName('function');
  }
  return !!v && v.type === 'call_expression' && v.childForFieldName('function')?.text === 'require';
}

function isFunctionNode(n: Node | null | undefined): boolean {
  return !!n && (n.type === 'arrow_function' || n.type === 'function_expression' || n.type === 'function' || n.type === 'generator_function');
}

/** A statement classified: its unit, the node to look into for nested units, or the body of a container it opens. */
export interface Classified {
  unit: Unit;
  inner: Node | null;
  body?: { node: Node; kind: ContainerKind };
}

/** The unit of `node` spanning `spanNode` (a decorated definition or export takes in what wraps it). */
function makeUnit(lines: string[], node: Node, kind: UnitKind, name: string, spanNode: Node): Unit {
  // Each position getter is a call into wasm: read them once.
  const sp = spanNode.startPosition;
  const ep = spanNode.endPosition;
  return {
    kind,
    name,
    startLine: sp.row,
    endLine: ep.row - (ep.column === 0 && ep.row > sp.row ? 1 : 0),
    leadStart: sp.row,
    indent: lineIndent(lines, sp.row),
    decorated: spanNode !== node && spanNode.type === 'decorated_definition',
    defLine: spanNode === node ? sp.row : node.startPosition.row,
  };
}

/** Classifies a statement-level node; returns the unit (definition or plain) and the node to descend into. */
export function classify(stmt: Node, inClass: boolean, lang: Lang, lines: string[]): Classified {
  let node = stmt;
  // Unwrap Python decorators and JS/TS export.
  if (node.type === 'decorated_definition') {
    const def = node.childForFieldName('definition');
    if (def) node = def;
  } else if (node.type === 'export_statement') {
    const decl = node.childForFieldName('declaration');
    if (decl) node = decl;
  }
  const make = (kind: UnitKind, name: string) => makeUnit(lines, node, kind, name, stmt);
  return lang === 'python' ? classifyPython(node, inClass, make) : classifyJs(node, make);
}

type Make = (kind: UnitKind, name: string) => Unit;

function classifyPython(node: Node, inClass: boolean, make: Make): Classified {
  const t = node.type;
  if (t === 'function_definition') {
    const u = make(inClass ? 'method' : 'function', node.childForFieldName('name')?.text ?? '');
    const params = node.childForFieldName('parameters');
    const first = params?.namedChildren.find((c) => c !== null && c.type !== 'comment');
    if (first) u.firstParam = (first.type === 'identifier' ? first : first.namedChildren[0])?.text ?? first.text;
    return { unit: u, inner: null };
  }
  if (t === 'class_definition') {
    const body = node.childForFieldName('body');
    return { unit: make('class', node.childForFieldName('name')?.text ?? ''), inner: null, body: body ? { node: body, kind: 'class' } : undefined };
  }
  if (t === 'import_statement' || t === 'import_from_statement' || t === 'future_import_statement') return { unit: make('import', ''), inner: null };
  return { unit: make('statement', ''), inner: node };
}

function classifyJs(node: Node, make: Make): Classified {
  const t = node.type;
  const name = () => node.childForFieldName('name')?.text ?? '';
  if (t === 'function_declaration' || t === 'generator_function_declaration') return { unit: make('function', name()), inner: null };
  if (t === 'class_declaration' || t === 'abstract_class_declaration' || t === 'class') {
    const body = node.childForFieldName('body');
    return { unit: make('class', name()), inner: null, body: body ? { node: body, kind: 'class' } : undefined };
  }
  if (t === 'method_definition') return { unit: make('method', name()), inner: null };
  if (t === 'public_field_definition' || t === 'field_definition') {
    const value = node.childForFieldName('value');
    const nameNode = node.childForFieldName('name') ?? node.childForFieldName('property');
    if (isFunctionNode(value)) return { unit: make('method', nameNode?.text ?? ''), inner: null };
    return { unit: make('statement', ''), inner: null };
  }
  if (t === 'import_statement') return { unit: make('import', ''), inner: null };
  if (t === 'lexical_declaration' || t === 'variable_declaration') {
    const decls = node.namedChildren.filter((c): c is Node => c !== null && c.type === 'variable_declarator');
    // `const x = require('x')` is an import in CommonJS.
    if (decls.length > 0 && decls.every((d) => isRequireCall(d.childForFieldName('value')))) return { unit: make('import', ''), inner: null };
    if (decls.length === 1 && isFunctionNode(decls[0].childForFieldName('value'))) {
      return { unit: make('function', decls[0].childForFieldName('name')?.text ?? ''), inner: null };
    }
    return { unit: make('statement', ''), inner: node };
  }
  const expr = t === 'expression_statement' ? node.firstNamedChild : null;
  const info = expr && expr.type === 'call_expression' ? testCallInfo(expr) : null;
  if (expr && info) {
    const args = callArgs(expr);
    let callName = info.base;
    if (info.kind !== 'hook' && args.length > 0 && !isFunctionNode(args[0])) callName = stripQuotes(args[0].text);
    const u = make(info.kind, callName);
    if (info.kind === 'describe') {
      const cb = [...args].reverse().find((a) => isFunctionNode(a));
      const cbBody = cb?.childForFieldName('body');
      if (cbBody && cbBody.type === 'statement_block') return { unit: u, inner: null, body: { node: cbBody, kind: 'describe' } };
    }
    // Test and hook bodies hold no units worth addressing; skipping them keeps analysis fast.
    return { unit: u, inner: null };
  }
  return { unit: make('statement', ''), inner: node };
}
