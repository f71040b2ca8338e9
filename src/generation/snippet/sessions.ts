/**
 * A code block as steps: each statement with what the issue shows it produced. Reads Python
 * `>>>`/IPython sessions, Node REPL (`> expr`) and browser-console transcripts (a line of code, then
 * its value), and plain scripts with their comments (`f(x)  # returns 3`) and a traceback or error
 * pasted below them. Pure.
 */
import { pythonTraceback } from '../issueText.js';
import { literal } from './literals.js';
import type { CodeLang } from './parser.js';
import { parses, statements, type Statement } from './syntax.js';

export interface ShownError {
  type: string;
  message: string;
}

export interface Step {
  /** The statement as written (several lines for a `...` continuation). */
  code: string;
  /** What the session displayed after it (a value's repr, or printed text). */
  output?: string;
  error?: ShownError;
  /** Comment on the statement or on its output line, without the comment marker. */
  comment?: string;
  stmt?: Statement;
}

export interface Session {
  kind: 'repl' | 'console' | 'script';
  lang: CodeLang;
  steps: Step[];
}

const PY_PROMPT = /^\s*(?:>>>|>>(?=\s|$)|In \[\d*\]:|In\s*:)\s?(.*)$/;
const PY_CONT = /^\s*(?:\.\.\.(?=\s|$)|\s*\.\.\.:)\s?(.*)$/;
const PY_OUT = /^\s*Out(?:\[\d*\])?\s*:\s?(.*)$/;
const NODE_PROMPT = /^\s*>(?:\s(.*)|$)/;
const NODE_CONT = /^\s*\.\.\.\s?(.*)$/;
const EXC_LINE = /^\s*(?:Uncaught\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))(?:\s*\[[A-Z_]+\])?(?::\s?(.*))?$/;

/** Reads a block as a session of the given language, or undefined when it holds no code. */
export function readSession(lang: CodeLang, code: string): Session | undefined {
  const text = code.replace(/\r\n?/g, '\n');
  if (lang === 'python' && text.split('\n').some((l) => PY_PROMPT.test(l))) return replSession(text, PY_REPL);
  if (lang === 'js' && text.split('\n').some((l) => /^\s*>\s*\S/.test(l)) && !parses('js', text)) return replSession(text, NODE_REPL);
  const script = readScript(lang, text);
  if (script) return script;
  if (lang === 'js') return consoleTranscript(text);
  return undefined;
}

function finishOutput(s: Step, lines: string[], lang: CodeLang): void {
  while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
  while (lines.length && !lines[0].trim()) lines.shift();
  if (!lines.length) return;
  const joined = lines.join('\n');
  const err = errorIn(lang, joined);
  if (err) {
    s.error = err;
    return;
  }
  // `value  # wrong output`: a comment on the output line marks it.
  const marker = lang === 'python' ? /^(.*?\S)\s+#\s*([A-Za-z][^#]*)$/ : /^(.*?\S)\s+\/\/\s*(.+)$/;
  const m = lines.length === 1 ? marker.exec(lines[0]) : null;
  if (m) {
    s.output = m[1].trim();
    s.comment = [s.comment, m[2].trim()].filter(Boolean).join('; ');
  } else s.output = joined.trim();
}

/** The exception a traceback or error printout ends with. */
export function errorIn(lang: CodeLang, text: string): ShownError | undefined {
  if (lang === 'python') {
    const tb = pythonTraceback(text);
    if (tb) return { type: tb.type, message: tb.message };
    // IPython: "ValueError    Traceback (most recent call last)" … "ValueError: message"
    if (/Traceback \(most recent call last\)/.test(text)) {
      const last = text.split('\n').reverse().map((l) => EXC_LINE.exec(l)).find((m) => m && m[2] !== undefined);
      if (last) return { type: last[1].split('.').pop()!, message: (last[2] ?? '').trim() };
    }
    return undefined;
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].trim();
    const m = EXC_LINE.exec(l);
    if (m && (i === 0 || /^Uncaught/.test(l) || /^\s+at\s/.test(lines[i + 1] ?? '') || /^Uncaught:?$/.test(lines[i - 1]?.trim() ?? ''))) {
      return { type: m[1].split('.').pop()!, message: (m[2] ?? '').trim() };
    }
  }
  return undefined;
}

/** A REPL's lines: its prompt, its continuation, its output marker (Python's `Out[1]:`). */
interface ReplSyntax {
  lang: CodeLang;
  prompt: RegExp;
  cont: RegExp;
  out?: RegExp;
  /** Node's bare `>` is an idle prompt that ends the step; Python's bare `>>>` is an empty step. */
  bareEndsStep: boolean;
}

const PY_REPL: ReplSyntax = { lang: 'python', prompt: PY_PROMPT, cont: PY_CONT, out: PY_OUT, bareEndsStep: false };
const NODE_REPL: ReplSyntax = { lang: 'js', prompt: NODE_PROMPT, cont: NODE_CONT, bareEndsStep: true };

/** A REPL transcript as steps: each prompt's code (with its continuation lines) and the output after it. */
function replSession(text: string, syntax: ReplSyntax): Session {
  const steps: Step[] = [];
  let cur: Step | undefined;
  let out: string[] = [];
  let inCode = false;
  const close = () => {
    if (cur) finishOutput(cur, out, syntax.lang);
    out = [];
  };
  for (const l of text.split('\n')) {
    let m: RegExpExecArray | null;
    if ((m = syntax.prompt.exec(l))) {
      close();
      cur = syntax.bareEndsStep && !(m[1] ?? '').trim() ? undefined : { code: m[1] ?? '' };
      if (cur) steps.push(cur);
      inCode = !!cur;
    } else if (cur && inCode && (m = syntax.cont.exec(l))) {
      cur.code += '\n' + (m[1] ?? '');
    } else if (cur && syntax.out && (m = syntax.out.exec(l))) {
      inCode = false;
      out.push(m[1]!);
    } else if (cur) {
      inCode = false;
      out.push(l);
    }
  }
  close();
  for (const s of steps) splitCodeComment(s, syntax.lang);
  return { kind: 'repl', lang: syntax.lang, steps: syntax.bareEndsStep ? steps : steps.filter((s) => s.code.trim() || s.output || s.error) };
}

/** `code  # comment` / `code // comment` on a REPL line: the comment moves to the step. */
function splitCodeComment(s: Step, lang: CodeLang): void {
  const at = commentStart(s.code, lang);
  if (at < 0) return;
  const comment = s.code.slice(at).replace(lang === 'python' ? /^#+\s*/ : /^\/\/+\s*/, '').trim();
  s.code = s.code.slice(0, at).trimEnd();
  if (comment) s.comment = [comment, s.comment].filter(Boolean).join('; ');
}

/** Where a line comment starts outside string literals, or -1. */
function commentStart(code: string, lang: CodeLang): number {
  let quote: string | undefined;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || (lang === 'js' && c === '`')) quote = c;
    else if (lang === 'python' && c === '#') return i;
    else if (lang === 'js' && c === '/' && code[i + 1] === '/') return i;
  }
  return -1;
}

/** A script block: its statements, each with the comments after it; an error pasted below ends the last one. */
function readScript(lang: CodeLang, text: string): Session | undefined {
  let code = text;
  let trailing: ShownError | undefined;
  const lines = text.split('\n');
  const cut = lines.findIndex((l, i) => (lang === 'python' ? /Traceback \(most recent call last\)/.test(l) : EXC_LINE.test(l.trim()) && !/^\s*\/\//.test(l) && i > 0 && !parses('js', lines.slice(0, i + 1).join('\n'))));
  if (cut > 0) {
    trailing = errorIn(lang, lines.slice(cut).join('\n'));
    code = lines.slice(0, cut).join('\n');
  }
  // A closing line that only shows a value (`=> value`) is console output, not script.
  const stmts = statements(lang, code);
  if (!stmts || !stmts.length) return undefined;
  const steps: Step[] = [];
  // A bare literal after an expression is the value a console showed for it (`f(x)` / `"out"`);
  // a lone `undefined` after a declaration is the console's echo.
  for (const s of attachComments(lang, code, stmts)) {
    const prev = steps[steps.length - 1];
    if (prev && s.stmt?.kind === 'expression' && s.stmt.expr !== undefined && prev.output === undefined && !prev.error) {
      if (prev.stmt?.kind === 'expression' && literal(lang, s.stmt.expr)) {
        prev.output = s.stmt.expr;
        if (s.comment) prev.comment = [prev.comment, s.comment].filter(Boolean).join('\n');
        continue;
      }
      if (lang === 'js' && s.stmt.expr === 'undefined' && (prev.stmt?.kind === 'assign' || prev.stmt?.kind === 'other')) continue;
    }
    steps.push(s);
  }
  if (trailing && steps.length) steps[steps.length - 1].error = trailing;
  return { kind: 'script', lang, steps };
}

/** Pairs statements with the comments on their line and the comment lines below them. */
function attachComments(lang: CodeLang, code: string, stmts: Statement[]): Step[] {
  const steps: Step[] = [];
  let rest = code;
  for (const st of stmts) {
    const at = rest.indexOf(st.text);
    if (at < 0) {
      steps.push({ code: st.text, stmt: st });
      continue;
    }
    const between = rest.slice(0, at);
    if (steps.length) addComments(steps[steps.length - 1], between, lang);
    steps.push({ code: st.text, stmt: st });
    rest = rest.slice(at + st.text.length);
  }
  if (steps.length) addComments(steps[steps.length - 1], rest, lang);
  return steps;
}

function addComments(step: Step, text: string, lang: CodeLang): void {
  const found: string[] = [];
  const block = lang === 'js' ? /\/\*([\s\S]*?)\*\//g : null;
  let t = text;
  if (block) t = t.replace(block, (_all, inner: string) => (found.push(inner.replace(/^\s*\*\s?/gm, '').trim()), ''));
  for (const l of t.split('\n')) {
    const at = commentStart(l, lang);
    if (at >= 0) found.push(l.slice(at).replace(lang === 'python' ? /^#+\s*/ : /^\/\/+\s*/, '').trim());
  }
  const c = found.filter(Boolean).join('\n');
  if (c) step.comment = [step.comment, c].filter(Boolean).join('\n');
}

/**
 * A browser console or `=>` transcript: a line of code, then the value it showed
 * (`var r = …` / `undefined` / `r.exec('x')` / `(2) ['x', 'y']`).
 */
function consoleTranscript(text: string): Session | undefined {
  const steps: Step[] = [];
  let cur: Step | undefined;
  let out: string[] = [];
  const close = () => {
    if (cur) finishOutput(cur, out, 'js');
    out = [];
  };
  for (const raw of text.split('\n')) {
    const l = raw.trim();
    if (!l) continue;
    const arrow = /^(?:\/\/\s*)?=>\s*(.*)$/.exec(l);
    if (arrow && cur) {
      out.push(arrow[1].replace(/;\s*$/, ''));
      continue;
    }
    const stmt = statements('js', l);
    const isCode = stmt?.length === 1 && (stmt[0].kind !== 'expression' || /[(=]/.test(stmt[0].expr ?? '')) && !/^["'`[{(\d-]/.test(l);
    if (isCode && !(cur && out.length === 0 && /^undefined$/.test(l))) {
      close();
      cur = { code: l.replace(/;\s*$/, ''), stmt: stmt![0] };
      steps.push(cur);
    } else if (cur) out.push(l);
    else return undefined;
  }
  close();
  return steps.some((s) => s.output !== undefined || s.error) ? { kind: 'console', lang: 'js', steps } : undefined;
}
