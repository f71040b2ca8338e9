/** Whether a piece of the text is a literal value of the language. Never evaluates anything. */
import type { Node } from 'web-tree-sitter';
import { parse, type CodeLang } from './parser.js';
import { PYTHON_STDLIB } from './names.js';

export type LiteralKind = 'primitive' | 'structure' | 'regex' | 'constructor';

export interface Literal {
  /** Source of the value in the target language. */
  code: string;
  kind: LiteralKind;
  /** Python: modules a constructor literal needs (`datetime` for `datetime.datetime(…)`). */
  needs?: string[];
  /** Elements of an array/list literal, as source. */
  elements?: string[];
}

/** Bare Python constructors whose repr names them without their module. */
const PY_BARE_CONSTRUCTORS: Record<string, string> = {
  Decimal: 'decimal', Fraction: 'fractions', OrderedDict: 'collections', defaultdict: 'collections', Counter: 'collections',
  deque: 'collections', UUID: 'uuid', PosixPath: 'pathlib', PurePosixPath: 'pathlib',
};

/** The text as a literal value of the language, or undefined. Never evaluates anything. */
export function literal(lang: CodeLang, text: string): Literal | undefined {
  const t = text.trim();
  if (!t || t.includes('\n\n')) return undefined;
  const root = parse(lang, lang === 'js' ? `(${t})` : t);
  if (root.hasError || root.namedChildren.length !== 1) return undefined;
  let e: Node | null = root.namedChildren[0]!;
  if (e.type === 'expression_statement') e = e.namedChildren.length === 1 ? e.namedChildren[0] : null;
  if (lang === 'js') while (e && e.type === 'parenthesized_expression') e = e.namedChildren[0];
  if (!e) return undefined;
  if (lang === 'python') {
    if (isPyLiteral(e)) return { code: t, kind: ['list', 'tuple', 'set', 'dictionary'].includes(e.type) ? 'structure' : 'primitive', elements: e.type === 'list' || e.type === 'tuple' ? e.namedChildren.map((c) => c!.text) : undefined };
    const ctor = pyConstructor(e);
    if (ctor) return { code: t, kind: 'constructor', needs: [ctor] };
    return undefined;
  }
  if (e.type === 'regex') return { code: t, kind: 'regex' };
  if (isJsLiteral(e)) return { code: e.text, kind: e.type === 'array' || e.type === 'object' ? 'structure' : 'primitive', elements: e.type === 'array' ? e.namedChildren.map((c) => c!.text) : undefined };
  return undefined;
}

const PY_PRIMITIVES = new Set(['integer', 'float', 'true', 'false', 'none']);
const JS_PRIMITIVES = new Set(['string', 'number', 'true', 'false', 'null', 'undefined']);

function isPyLiteral(e: Node): boolean {
  if (PY_PRIMITIVES.has(e.type)) return true;
  switch (e.type) {
    case 'string':
      return !e.namedChildren.some((c) => c?.type === 'interpolation');
    case 'unary_operator':
      return ['integer', 'float'].includes(e.childForFieldName('argument')?.type ?? '') && /^[-+]/.test(e.text);
    case 'concatenated_string':
    case 'list':
    case 'tuple':
    case 'set':
    case 'parenthesized_expression':
      return e.namedChildren.every((c) => c && isPyLiteral(c));
    case 'dictionary':
      return e.namedChildren.every((c) => c?.type === 'pair' && isPyLiteral(c.childForFieldName('key')!) && isPyLiteral(c.childForFieldName('value')!));
    default:
      return false;
  }
}

/** `datetime.datetime(2023, 6, 15, 0, 0)`, `Decimal('1.5')`: a stdlib constructor with literal arguments; its module. */
function pyConstructor(e: Node): string | undefined {
  if (e.type !== 'call') return undefined;
  const fn = e.childForFieldName('function')!;
  const args = e.childForFieldName('arguments');
  if (!args || args.type !== 'argument_list') return undefined;
  for (const a of args.namedChildren) {
    const v = a?.type === 'keyword_argument' ? a.childForFieldName('value') : a;
    if (!v || !(isPyLiteral(v) || pyConstructor(v))) return undefined;
  }
  if (fn.type === 'identifier') return PY_BARE_CONSTRUCTORS[fn.text];
  let root: Node | null = fn;
  while (root && root.type === 'attribute') root = root.childForFieldName('object');
  if (root?.type === 'identifier' && PYTHON_STDLIB.has(root.text)) return root.text;
  return undefined;
}

function isJsLiteral(e: Node): boolean {
  if (JS_PRIMITIVES.has(e.type)) return true;
  switch (e.type) {
    case 'identifier':
      return ['undefined', 'NaN', 'Infinity'].includes(e.text);
    case 'template_string':
      return !e.namedChildren.some((c) => c?.type === 'template_substitution');
    case 'unary_expression':
      return /^[-+]/.test(e.text) && ['number', 'identifier'].includes(e.childForFieldName('argument')?.type ?? '') && isJsLiteral(e.childForFieldName('argument')!);
    case 'array':
      return e.namedChildren.every((c) => c && isJsLiteral(c));
    case 'object':
      return e.namedChildren.every((c) => {
        if (c?.type !== 'pair') return false;
        const k = c.childForFieldName('key')!;
        return ['property_identifier', 'string', 'number'].includes(k.type) && isJsLiteral(c.childForFieldName('value')!);
      });
    default:
      return false;
  }
}
