/**
 * What an issue reports as an error: Python tracebacks, JavaScript errors, the exception names it
 * mentions, and whether it describes a hang. Pure functions (verification and the snippet readers).
 */

import type { IssueInput } from './types.js';

/** An issue written as markdown: its first line (a `#` heading or not) is the title, the rest the body. */
export function parseIssueMarkdown(text: string): IssueInput {
  const [first, ...rest] = text.replace(/\r\n/g, '\n').split('\n');
  return { title: first.replace(/^#+\s*/, '').trim(), body: rest.join('\n').trim() };
}

export interface TracebackFrame {
  file: string;
  line: number;
  func: string;
  code?: string;
}

export interface ReportedException {
  /** Last component of the type: `ValueError`, `UFuncTypeError`. */
  type: string;
  /** As written: `numpy.core._exceptions.UFuncTypeError`. */
  qualifiedType: string;
  /** The message (first line), '' when none was given. */
  message: string;
  frames: TracebackFrame[];
  language: 'python' | 'javascript';
}

const PY_EXC_LINE = /^((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::[ \t]?(.*))?$/;

/** The last Python traceback in the text (the one that ended the program), if any. */
export function pythonTraceback(text: string): ReportedException | undefined {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  let found: ReportedException | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (!/Traceback \(most recent call last\):\s*$/.test(lines[i])) continue;
    const frames: TracebackFrame[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j];
      const fm = /^\s*File "([^"]+)", line (\d+)(?:, in (.+))?\s*$/.exec(l);
      if (fm) frames.push({ file: fm[1], line: Number(fm[2]), func: (fm[3] ?? '').trim() });
      else if (/^\s*$/.test(l)) continue;
      else if (/^\s/.test(l)) {
        const last = frames[frames.length - 1];
        if (last && last.code === undefined && !/^\s*[\^~]+\s*$/.test(l)) last.code = l.trim();
      } else break;
    }
    const m = PY_EXC_LINE.exec((lines[j] ?? '').trim());
    if (!m) continue;
    const qualifiedType = m[1];
    const type = qualifiedType.split('.').pop()!;
    const message = [(m[2] ?? '').trim()];
    found = { type, qualifiedType, message: message[0], frames, language: 'python' };
  }
  return found;
}

const JS_ERROR_TYPES = 'Error|TypeError|RangeError|ReferenceError|SyntaxError|URIError|EvalError|AggregateError|AssertionError|[A-Z]\\w*Error';

/** A JavaScript error line (`TypeError: x is not a function`), preferring one followed by a stack. */
export function jsError(text: string): ReportedException | undefined {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const re = new RegExp(`^\\s*(?:Uncaught\\s+|Error:\\s+|//\\s*|>\\s*)?(${JS_ERROR_TYPES})(?:\\s*\\[[A-Z_]+\\])?:\\s*(.*)$`);
  let best: ReportedException | undefined;
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i]);
    if (!m) continue;
    const frames: TracebackFrame[] = [];
    for (let j = i + 1; j < lines.length && /^\s+at\s/.test(lines[j]); j++) {
      const fm = /at (?:(.+?) \()?(.+?):(\d+):\d+\)?\s*$/.exec(lines[j]);
      if (fm) frames.push({ file: fm[2], line: Number(fm[3]), func: fm[1] ?? '' });
    }
    const cand: ReportedException = { type: m[1], qualifiedType: m[1], message: m[2].trim(), frames, language: 'javascript' };
    if (!best || (frames.length && !best.frames.length)) best = cand;
  }
  return best;
}

/** Exception type names the issue mentions anywhere (`ValueError`, `KeyError`, `TypeError`…). */
export function exceptionNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt))\b/g)) out.add(m[1]);
  return out;
}

/** Does the issue describe a hang (so that a timeout can be the reproduction)? */
export function issueIsAboutHang(text: string): boolean {
  return /\b(hangs?|hanging|hung|freezes?|infinite loop|never (returns|finishes|terminates)|deadlock|times? out|timeout)\b/i.test(text);
}
