/**
 * The code as syntax (tree-sitter): statements, the names a snippet uses without binding
 * them, rewrites of its code, and the value an assertion states. Call `loadSnippetSyntax`
 * (parser.ts) first; whether text is a literal value is literals.ts.
 */
import type { Node } from 'web-tree-sitter';
import { literal } from './literals.js';
import { JS_GLOBALS, PYTHON_BUILTINS, PYTHON_STDLIB } from './names.js';
import { parse, type CodeLang } from './parser.js';

/** Parses without errors. */
export function parses(lang: CodeLang, code: string): boolean {
  return Boolean(code.trim()) && !parse(lang, code).hasError;
}

export interface Statement {
  text: string;
  kind: 'import' | 'expression' | 'assign' | 'other';
  /** For an expression statement: the expression (no trailing `;`). */
  expr?: string;
  /** For `x = value` / `const x = value`: the name and the value's text. */
  target?: string;
  value?: string;
  /** `const`/`let`/`var` of a JS declaration. */
  declarator?: string;
  /** The import's module (`from x import`, `import x`, `from 'x'`, `require('x')`). */
  module?: string;
}

/** Top-level statements, or undefined when the code does not parse. */
export function statements(lang: CodeLang, code: string): Statement[] | undefined {
  const root = parse(lang, code);
  if (root.hasError) return undefined;
  const out: Statement[] = [];
  for (const n of root.namedChildren) {
    if (!n || n.type === 'comment') continue;
    out.push(lang === 'python' ? pyStatement(n) : jsStatement(n));
  }
  return out;
}

function pyStatement(n: Node): Statement {
  const text = n.text;
  if (n.type === 'import_statement' || n.type === 'import_from_statement' || n.type === 'future_import_statement') {
    const mod = n.childForFieldName('module_name') ?? n.childForFieldName('name');
    return { text, kind: 'import', module: mod?.text };
  }
  if (n.type === 'expression_statement') {
    const e = n.namedChildren[0];
    if (e && e.type === 'assignment') {
      const left = e.childForFieldName('left');
      const right = e.childForFieldName('right');
      if (left?.type === 'identifier' && right && !e.childForFieldName('type')) return { text, kind: 'assign', target: left.text, value: right.text };
      return { text, kind: 'other' };
    }
    if (e && n.namedChildren.length === 1 && e.type !== 'augmented_assignment' && e.type !== 'yield') return { text, kind: 'expression', expr: e.text };
  }
  return { text, kind: 'other' };
}

function jsStatement(n: Node): Statement {
  const text = n.text;
  if (n.type === 'import_statement') return { text, kind: 'import', module: unquote(n.childForFieldName('source')?.text ?? '') };
  if (n.type === 'lexical_declaration' || n.type === 'variable_declaration') {
    const decls = n.namedChildren.filter((c): c is Node => c?.type === 'variable_declarator');
    const declarator = n.type === 'variable_declaration' ? 'var' : (n.child(0)?.text ?? 'const');
    if (decls.length === 1) {
      const name = decls[0].childForFieldName('name');
      const value = decls[0].childForFieldName('value');
      const req = value ? requireOf(value) : undefined;
      if (req !== undefined) return { text, kind: 'import', module: req };
      if (name?.type === 'identifier' && value) return { text, kind: 'assign', target: name.text, value: value.text, declarator };
    }
    return { text, kind: 'other', declarator };
  }
  if (n.type === 'expression_statement') {
    const e = n.namedChildren[0];
    if (!e) return { text, kind: 'other' };
    const req = requireOf(e);
    if (req !== undefined) return { text, kind: 'import', module: req };
    if (e.type === 'assignment_expression' && e.childForFieldName('left')?.type === 'identifier') {
      return { text, kind: 'assign', target: e.childForFieldName('left')!.text, value: e.childForFieldName('right')!.text };
    }
    return { text, kind: 'expression', expr: e.text };
  }
  return { text, kind: 'other' };
}

/** `require('x')` (possibly `.member` of it): the module. */
function requireOf(n: Node): string | undefined {
  let e: Node | null = n;
  while (e && e.type === 'member_expression') e = e.childForFieldName('object');
  if (e?.type !== 'call_expression' || e.childForFieldName('function')?.text !== 'require') return undefined;
  const arg = e.childForFieldName('arguments')?.namedChildren[0];
  return arg?.type === 'string' ? unquote(arg.text) : undefined;
}

export function unquote(s: string): string {
  return s.replace(/^(['"`])([\s\S]*)\1$/, '$2');
}

/** Does the expression call something (or construct with `new`)? */
export function hasCall(lang: CodeLang, expr: string): boolean {
  const root = parse(lang, expr);
  const types = lang === 'python' ? ['call'] : ['call_expression', 'new_expression'];
  return root.descendantsOfType(types).length > 0;
}

/** Parents that bind every identifier directly under them. */
const PY_BINDING_PARENTS = new Set(['parameters', 'lambda_parameters', 'default_parameter', 'typed_parameter', 'typed_default_parameter', 'list_splat_pattern', 'dictionary_splat_pattern', 'as_pattern_target', 'global_statement', 'nonlocal_statement']);

/** Names the code uses but never binds, minus builtins (and, for JS, globals). In order of first use. */
export function freeNames(lang: CodeLang, code: string): string[] {
  const root = parse(lang, code);
  const bound = new Set<string>();
  const used: string[] = [];
  const use = (name: string) => {
    if (!used.includes(name)) used.push(name);
  };
  const walk = (n: Node) => {
    if (lang === 'python') pyNames(n, bound, use);
    else jsNames(n, bound, use);
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(root);
  return used.filter((n) => !bound.has(n) && !isAmbient(lang, n));
}

function pyNames(n: Node, bound: Set<string>, use: (n: string) => void): void {
  const p = n.parent;
  switch (n.type) {
    case 'import_statement':
      for (const c of n.namedChildren) {
        if (c?.type === 'dotted_name') bound.add(c.namedChildren[0]!.text);
        if (c?.type === 'aliased_import') bound.add(c.childForFieldName('alias')!.text);
      }
      return;
    case 'import_from_statement':
      for (const c of n.childrenForFieldName('name')) {
        if (c?.type === 'dotted_name') bound.add(c.text);
        if (c?.type === 'aliased_import') bound.add(c.childForFieldName('alias')!.text);
      }
      return;
    case 'identifier': {
      if (!p) return use(n.text);
      if (isMemberName(n)) return;
      const named = p.childForFieldName('name')?.id === n.id;
      const binds = (named && ['function_definition', 'class_definition', 'named_expression'].includes(p.type)) || PY_BINDING_PARENTS.has(p.type) || inTarget(n);
      if (binds) return void bound.add(n.text);
      if (p.type === 'dotted_name') return; // inside imports (handled above) or decorators
      return use(n.text);
    }
  }
}

/** A property or keyword name (`o.name`, `f(name=1)`), not a variable. */
function isMemberName(n: Node): boolean {
  const p = n.parent;
  return Boolean(p && ((p.type === 'attribute' && p.childForFieldName('attribute')?.id === n.id) || (p.type === 'keyword_argument' && p.childForFieldName('name')?.id === n.id)));
}

/** An identifier on the left of `=`, in a `for … in` target or an `except … as` name. */
function inTarget(n: Node): boolean {
  let c: Node = n;
  for (let p = n.parent; p; c = p, p = p.parent) {
    if (p.type === 'assignment' || p.type === 'augmented_assignment') return p.childForFieldName('left')?.id === c.id;
    if (p.type === 'for_statement' || p.type === 'for_in_clause') return p.childForFieldName('left')?.id === c.id;
    if (p.type === 'except_clause' || p.type === 'with_item') return c.type === 'identifier' && c.previousSibling?.type === 'as';
    if (!['pattern_list', 'tuple_pattern', 'list_pattern', 'parenthesized_expression', 'list_splat_pattern'].includes(p.type)) return false;
  }
  return false;
}

/** Parents whose identifier in the given field is a binding (`const x`, `function f`, `(x) =>`, `catch (e)`, `for (k in o)`). */
const JS_BINDING_FIELD = new Map(Object.entries({
  variable_declarator: 'name', function_declaration: 'name', class_declaration: 'name', function_expression: 'name', class: 'name',
  arrow_function: 'parameter', catch_clause: 'parameter', for_in_statement: 'left',
}));

function jsNames(n: Node, bound: Set<string>, use: (n: string) => void): void {
  const p = n.parent;
  if (n.type === 'shorthand_property_identifier_pattern') return void bound.add(n.text);
  if (n.type === 'shorthand_property_identifier') return use(n.text);
  if (n.type !== 'identifier') return;
  if (!p) return use(n.text);
  const field = (name: string) => p.childForFieldName(name)?.id === n.id;
  const binding = JS_BINDING_FIELD.get(p.type);
  if (binding && field(binding)) return void bound.add(n.text);
  if (['required_parameter', 'optional_parameter', 'formal_parameters', 'rest_pattern', 'array_pattern', 'assignment_pattern', 'pair_pattern', 'object_assignment_pattern'].includes(p.type)) {
    if (p.type === 'pair_pattern' && !field('value')) return;
    if (p.type === 'assignment_pattern' && !field('left')) return use(n.text);
    if (p.type === 'object_assignment_pattern' && !field('left')) return use(n.text);
    return void bound.add(n.text);
  }
  if (p.type === 'import_clause' || p.type === 'import_specifier' || p.type === 'namespace_import') {
    if (p.type === 'import_specifier' && p.childForFieldName('alias') && !field('alias')) return;
    return void bound.add(n.text);
  }
  if (p.type === 'labeled_statement' || p.type === 'break_statement' || p.type === 'continue_statement') return;
  return use(n.text);
}

/** A builtin or global of the language (`len`, `Math`). */
export function isAmbient(lang: CodeLang, name: string): boolean {
  return (lang === 'python' ? PYTHON_BUILTINS : JS_GLOBALS).has(name);
}

/** Python modules the snippet's free names refer to that are part of the standard library. */
export function isPythonStdlib(name: string): boolean {
  return PYTHON_STDLIB.has(name);
}

/** Where `name` is read as a variable (not a property, key or keyword argument); byte offsets. */
export function identifierUses(lang: CodeLang, code: string, name: string): Array<{ start: number; end: number; shorthand: boolean }> {
  return parse(lang, code)
    .descendantsOfType(['identifier', 'shorthand_property_identifier'])
    .filter((n): n is Node => n !== null && n.text === name && !isMemberName(n))
    .map((n) => ({ start: n.startIndex, end: n.endIndex, shorthand: n.type === 'shorthand_property_identifier' }));
}

/** Replaces every use of `name` (see identifierUses) with `text`. */
export function replaceIdentifier(lang: CodeLang, code: string, name: string, text: string): string {
  return applyEdits(code, identifierUses(lang, code, name).map((u) => ({ ...u, text: u.shorthand ? `${name}: ${text}` : text })));
}

/** Replaces byte ranges of the code (tree-sitter positions are byte offsets into the UTF-8 text). */
function applyEdits(code: string, edits: Array<{ start: number; end: number; text: string }>): string {
  let buf = Buffer.from(code, 'utf8');
  for (const e of [...edits].sort((a, b) => b.start - a.start)) buf = Buffer.concat([buf.subarray(0, e.start), Buffer.from(e.text, 'utf8'), buf.subarray(e.end)]);
  return buf.toString('utf8');
}

/** JavaScript string literals re-quoted with `quote` where that needs no escaping (the repository's style). */
export function requote(code: string, quote: "'" | '"'): string {
  const root = parse('js', code);
  if (root.hasError) return code;
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const n of root.descendantsOfType('string')) {
    if (!n) continue;
    const t = n.text;
    const body = t.slice(1, -1);
    if (t[0] === quote || /['"\\]/.test(body)) continue;
    edits.push({ start: n.startIndex, end: n.endIndex, text: `${quote}${body}${quote}` });
  }
  return applyEdits(code, edits);
}

/** Indents each line of `code` by `prefix`, except lines inside a multi-line string (their text would change). */
export function indentCode(lang: CodeLang, code: string, prefix: string): string {
  const root = parse(lang, code);
  const inside = new Set<number>();
  for (const n of root.descendantsOfType(lang === 'python' ? ['string'] : ['template_string', 'string'])) {
    if (!n) continue;
    for (let r = n.startPosition.row + 1; r <= n.endPosition.row; r++) inside.add(r);
  }
  return code
    .split('\n')
    .map((l, i) => (inside.has(i) || !l.trim() ? l : prefix + l))
    .join('\n');
}

/**
 * The issue's own assertion of a value (the expected side a literal or the issue's own expression):
 * Python `assert f(x) == 3` (also `assert(…)`), JavaScript
 * `assert.equal(f(x), 3)` / `assert.deepStrictEqual(…)` / `expect(f(x)).toEqual(…)`.
 */
export function assertedValue(lang: CodeLang, code: string): { actual: string; expected: string } | undefined {
  const root = parse(lang, code);
  if (root.hasError || root.namedChildren.length !== 1) return undefined;
  const st = root.namedChildren[0]!;
  if (lang === 'python') {
    if (st.type !== 'assert_statement') return undefined;
    let cond = st.namedChildren[0];
    while (cond?.type === 'parenthesized_expression') cond = cond.namedChildren[0];
    if (cond?.type !== 'comparison_operator' || cond.namedChildren.length !== 2) return undefined;
    const op = cond.childForFieldName('operators')?.text ?? cond.children.find((c) => c && !c.isNamed)?.text;
    if (op !== '==') return undefined;
    const [a, b] = cond.namedChildren as Node[];
    return literal('python', a.text) && !literal('python', b.text) ? { actual: b.text, expected: a.text } : { actual: a.text, expected: b.text };
  }
  if (st.type !== 'expression_statement') return undefined;
  const call = st.namedChildren[0];
  if (call?.type !== 'call_expression') return undefined;
  const fn = call.childForFieldName('function')?.text ?? '';
  const args = call.childForFieldName('arguments')?.namedChildren ?? [];
  if (/^assert\.(equal|strictEqual|deepEqual|deepStrictEqual)$/.test(fn) && args.length >= 2) return { actual: args[0]!.text, expected: args[1]!.text };
  const m = /^expect\(([\s\S]*)\)\.(toBe|toEqual|toStrictEqual)$/.exec(fn);
  if (m && args.length === 1) return { actual: m[1], expected: args[0]!.text };
  return undefined;
}
