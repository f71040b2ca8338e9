/**
 * Comments beside the statements: `returns X`, `expected Y`, `X but should be Y`,
 * `expected X received Y`, markers (`wrong`, `odd`, `correct one`) and `TypeError: …`. Pure.
 */
import type { Role } from './markdown.js';
import { errorIn, type ShownError } from './sessions.js';
import { literal } from './literals.js';
import type { CodeLang } from './parser.js';

export interface CommentReading {
  wrong?: string;
  expected?: string;
  /** `shown`: the comment only shows the value (not that it is wrong). */
  marker?: 'wrong' | 'correct' | 'shown';
  error?: ShownError;
}

const C_EXP_CUE = /\b(?:expected|expecting|expect|should (?:be|return|give|equal|output|print|have been)|must (?:be|return)|want(?:ed)?|correct(?: result| output| value)?(?: is|:)|required|desired)\b\s*(?:===?|:)?/gi;
const C_WRONG_CUE = /(?:\b(?:(?:it|this|which) )?(?:returns?|returned|gives?|gave|got|outputs?|prints?|printed|logs?|results? in|resulted in|received|produces?|yields?|evaluates? to|becomes?|actual(?:ly)?(?: result| output)?|current(?:ly)?(?: result| output)?|instead|but is|is)\b|=>|->|→|^=)\s*(?:===?|:)?/gi;
const C_WRONG_MARK = /\b(wrong|odd|incorrect|bug|buggy|unexpected|not expected|broken|bad|fails?|failed|weird|strange|surprising)\b|❌|✗|✘/i;
const C_CORRECT_MARK = /^(?:(?:as\s+)?expected|correct(?: one)?|ok|works?|fine|good|right|as it should|this works|✓|✔|✅)\W*$/i;

/** A comment beside a statement: `returns X`, `expected Y`, `X but should be Y`, `wrong`, `TypeError: …`. */
export function readComment(lang: CodeLang, comment: string, role: Role): CommentReading {
  const text = comment.replace(/\s+/g, ' ').trim();
  if (!text) return {};
  const bare = text.replace(/^(?:raises|throws|error:?)\s+/i, '');
  if (/^(?:Uncaught\s+)?(?:[A-Za-z_]\w*\.)*[A-Z]\w*(Error|Exception)\b(:|$)/.test(bare)) {
    const err = errorIn(lang, bare) ?? errorIn(lang === 'python' ? 'js' : 'python', bare);
    if (err) return { error: err };
  }
  if (C_CORRECT_MARK.test(text)) return { marker: 'correct' };
  // Cut the comment at its cues: "expected X received Y", "returns X, expected Y", "X but should be Y".
  const cues: Array<{ at: number; end: number; kind: 'expected' | 'wrong' }> = [];
  for (const m of text.matchAll(C_EXP_CUE)) cues.push({ at: m.index!, end: m.index! + m[0].length, kind: 'expected' });
  for (const m of text.matchAll(C_WRONG_CUE)) if (!cues.some((c) => m.index! < c.end && m.index! + m[0].length > c.at)) cues.push({ at: m.index!, end: m.index! + m[0].length, kind: 'wrong' });
  cues.sort((a, b) => a.at - b.at);
  const out: CommentReading = {};
  const clean = (s: string) => s.replace(/^[\s,;:]+|[\s,;:.]+$/g, '').replace(/\s*\b(but|and|while)$/i, '').replace(/^\((.*)\)$/, '$1').trim();
  if (cues.length) {
    const lead = clean(text.slice(0, cues[0].at));
    cues.forEach((c, i) => {
      const v = clean(text.slice(c.end, i + 1 < cues.length ? cues[i + 1].at : text.length));
      if (!v) return;
      if (c.kind === 'expected') out.expected ??= v;
      else out.wrong ??= v;
    });
    if (lead && !/^(not|this|it|that)$/i.test(lead) && cues[0].kind === 'expected') out.wrong ??= lead;
    if (/^not\b/i.test(text) && out.expected && !out.wrong) return { marker: 'wrong', wrong: out.expected.replace(/^expected\s*/i, '') };
    if (out.expected || out.wrong) {
      if (role === 'expected' && out.wrong && !out.expected) return { expected: out.wrong };
      return out;
    }
  }
  if (/^not expected\b/i.test(text)) {
    const v = clean(text.replace(/^not expected/i, ''));
    return v ? { marker: 'wrong', wrong: v } : { marker: 'wrong' };
  }
  if (C_WRONG_MARK.test(text)) return { marker: 'wrong' };
  // `print(f(x))  # [1, 2]`: a comment that is only a value shows what the line gave.
  if (literal(lang, text) && !/^[A-Za-z_$][\w$]*$/.test(text)) return role === 'expected' ? { expected: text } : { wrong: text, marker: 'shown' };
  return {};
}

