/**
 * Values the issue shows, as literals the test can compare with: a REPL's repr, Node's
 * `util.inspect` and the browser console's display (`(2) ['a', 'b', index: 0]`,
 * `[Object: null prototype] {…}`), printed text, and values in prose (`` `x` ``, "x", **x**). Pure.
 */
import { literal, type Literal } from './literals.js';
import type { CodeLang } from './parser.js';

export interface Value extends Literal {
  /** As the issue shows it. */
  shown: string;
  /** A console array that also listed named properties (a RegExp match): compare its elements. */
  arrayWithProps?: boolean;
}

/** A displayed value as a literal; `printed` text (print/console.log) that is no literal becomes a string. */
export function valueOf(lang: CodeLang, shown: string, printed = false): Value | undefined {
  let t = shown.trim().replace(/;$/, '').trim();
  if (!t) return undefined;
  let arrayWithProps = false;
  if (lang === 'js') {
    t = t.replace(/^\(\d+\)\s*(?=\[)/, '').replace(/\[Object: null prototype\]\s*/g, '');
    const props = /^\[([\s\S]*)\]$/.exec(t);
    if (props && /,\s*[A-Za-z_$][\w$]*:\s/.test(props[1])) {
      const parts = splitTop(props[1]);
      const kept = parts.filter((p) => !/^\s*[A-Za-z_$][\w$]*:\s/.test(p));
      if (kept.length < parts.length) {
        t = `[${kept.join(',')}]`;
        arrayWithProps = true;
      }
    }
  }
  const lit = literal(lang, t);
  if (lit) return { ...lit, shown, arrayWithProps };
  if (printed && !t.includes('\n')) return { code: stringLiteral(lang, shown.trim()), kind: 'primitive', shown };
  return undefined;
}

/** A string literal of the language holding `s` (JSON strings are valid in both). */
function stringLiteral(_lang: CodeLang, s: string): string {
  return JSON.stringify(s);
}

/** A value in prose: a literal, else the words of a quoted, backticked or bold span as a string. */
export function proseValue(lang: CodeLang, span: ProseSpan): Value | undefined {
  const lit = valueOf(lang, span.text);
  if (lit) return lit;
  if (span.quoted && /^[^\n]{1,300}$/.test(span.text) && !/^\s|\s$/.test(span.text) && !/[([{]/.test(span.text)) {
    return { code: stringLiteral(lang, span.text), kind: 'primitive', shown: span.text };
  }
  return undefined;
}

export interface ProseSpan {
  text: string;
  start: number;
  end: number;
  /** Delimited by backticks, quotes or bold: its words can stand for a string. */
  quoted: boolean;
  delimiter: '`' | '"' | "'" | '**' | '';
}

/** Candidate values in a prose line, left to right: code spans, quoted strings, bold, bare literals. */
export function proseSpans(line: string): ProseSpan[] {
  const out: ProseSpan[] = [];
  const re = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|(?<![\w'"])([ub]?(["'])(?:\\.|(?!\4).)*?\4)(?![\w'"])|(?<![\w.$])(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|true|false|null|undefined|None|True|False|NaN)(?![\w.])|(\[[^\n]*\]|\{[^\n]*\})/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) {
    if (m[1] !== undefined) out.push({ text: m[1], start: m.index, end: m.index + m[0].length, quoted: true, delimiter: '`' });
    else if (m[2] !== undefined) out.push({ text: m[2].trim(), start: m.index, end: m.index + m[0].length, quoted: true, delimiter: '**' });
    else if (m[3] !== undefined) out.push({ text: m[3], start: m.index, end: m.index + m[0].length, quoted: true, delimiter: m[4] as '"' | "'" });
    else if (m[5] !== undefined) out.push({ text: m[5], start: m.index, end: m.index + m[0].length, quoted: false, delimiter: '' });
    else if (m[6] !== undefined) out.push({ text: m[6], start: m.index, end: m.index + m[0].length, quoted: false, delimiter: '' });
  }
  return out;
}

/** Top-level comma-separated parts of a list body (brackets and strings respected). */
export function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      cur += c;
      if (c === '\\') cur += s[++i] ?? '';
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) parts.push(cur);
  return parts;
}

/** Two displays of one value, compared loosely (whitespace, quote style, a `u` prefix, trailing commas). */
export function sameShown(a: string, b: string): boolean {
  return normShown(a) === normShown(b);
}

export function normShown(s: string): string {
  return s
    .trim()
    .replace(/^\(\d+\)\s*(?=\[)/, '')
    .replace(/\[Object: null prototype\]\s*/g, '')
    .replace(/(^|[\s([{,:])u(['"])/g, '$1$2')
    .replace(/"/g, "'")
    .replace(/,\s*([\]}])/g, '$1')
    .replace(/;$/, '')
    .replace(/\s+/g, '');
}
