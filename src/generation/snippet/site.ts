/**
 * A place in the code whose result the issue talks about (a call, or a variable the calls
 * before it built), and what the issue says of it. Shared by the block, comment and prose readers.
 */
import type { ShownError } from './sessions.js';
import { splitTop } from './values.js';
import type { CodeLang } from './parser.js';
import type { Value } from './values.js';

/** How the issue tells that a result is wrong. `role` alone (a block under "Actual") is the weakest. */
export type Mark = 'comment' | 'prose' | 'role' | 'list' | 'title' | 'error' | 'assert';

export interface Site {
  block: number;
  setup: string[];
  expr: string;
  printed: boolean;
  shape: 'repl' | 'console' | 'script' | 'prose' | 'template';
  shown?: { value: string; quote: string };
  error?: { error: ShownError; quote: string };
  expected?: { value: Value; quote: string; hedged: boolean };
  index?: number;
  marks: Set<Mark>;
  correct: boolean;
  quote?: string;
  /** A result came from a template section ("### Expected behavior") or a When/Expected/Actual list. */
  template?: boolean;
}

const PRINT = { python: /^print\(([\s\S]*)\)$/, js: /^console\.(?:log|dir|info)\(([\s\S]*)\)$/ };

/** `print(x)` → x; a site's expression and whether its shown output is printed text. */
export function displayed(lang: CodeLang, expr: string): { expr: string; printed: boolean } {
  const e = expr.trim().replace(/;$/, '');
  const m = PRINT[lang].exec(e);
  if (m) {
    const args = splitTop(m[1]).map((a) => a.trim());
    // console.log(value, 'label'): the extra arguments are labels.
    if (args.length >= 1 && !/^f?["'`]/.test(args[0]) && args.slice(1).every((a) => /^(['"`]).*\1$/.test(a))) return { expr: args[0], printed: true };
  }
  return { expr: e, printed: false };
}


export function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 160 ? `${t.slice(0, 157)}…` : t;
}
