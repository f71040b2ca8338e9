/**
 * What every snippet test writer shares: the file and test names (from the title), the one
 * comment quoting the issue, and the simplifications a maintainer would make to the code
 * (single-use literals inlined, a multi-line literal on one line). Pure.
 */
import { posix } from 'node:path';
import type { Claim } from './claims.js';
import { literal } from './literals.js';
import type { CodeLang } from './parser.js';
import { identifierUses, replaceIdentifier, statements } from './syntax.js';

export interface WrittenTest {
  path: string;
  content: string;
  kind: 'expected-value' | 'wrong-value' | 'exception';
  notes: string[];
}

export type WriteResult = { ok: true; test: WrittenTest } | { ok: false; reason: string };

/** Words of the title for file and function names; the called function's name when the title says little. */
export function nameWords(title: string, expr: string): string[] {
  const words = slugWords(title);
  if (words.length >= 2) return words;
  const callee = /([A-Za-z_$][\w$]*)\s*\(/.exec(expr)?.[1];
  const own = callee ? slugWords(callee.replace(/([a-z])([A-Z])/g, '$1 $2')) : [];
  return [...own, ...words.filter((w) => w !== 'issue')].length ? [...own, ...words.filter((w) => w !== 'issue')] : words;
}

function slugWords(title: string): string[] {
  const words = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter((w) => w && !/^(the|a|an|bug|issue|fix)$/.test(w));
  return words.length ? words : ['issue'];
}

export function sliceWords(words: string[], max: number): string[] {
  const out: string[] = [];
  for (const w of words) {
    if ([...out, w].join('_').length > max) break;
    out.push(w);
  }
  return out.length ? out : [words[0].slice(0, max)];
}

export function uniquePath(files: readonly string[], dir: string, stem: string, suffix: string, sep = '_'): string {
  // pytest imports test files without packages by their base name: it must be unique in the repository.
  const taken = (p: string) => files.includes(p) || (suffix === '.py' && files.some((f) => posix.basename(f) === posix.basename(p)));
  let p = posix.normalize(posix.join(dir, `${stem}${suffix}`));
  if (taken(p)) p = posix.normalize(posix.join(dir, `${stem}${sep}issue${suffix}`));
  for (let n = 2; taken(p); n++) p = posix.normalize(posix.join(dir, `${stem}${sep}issue${sep}${n}${suffix}`));
  return p;
}

/** A literal written over several lines, on one (when no string in it can hold a newline). */
export function oneLineLiteral(code: string): string {
  if (!code.includes('\n') || /`|'''|"""/.test(code)) return code;
  return code.replace(/\s*\n\s*/g, ' ').replace(/([[{(])\s+/g, '$1 ').replace(/,\s*([\]})])/g, ' $1').replace(/\s+/g, ' ');
}

/** Inlines `name = <literal>` setup statements whose name is read exactly once afterwards. */
export function inlineLiterals(lang: CodeLang, setup: string[], expr: string): { setup: string[]; expr: string } {
  let rest = [...setup];
  let e = expr;
  for (let i = rest.length - 1; i >= 0; i--) {
    const st = statements(lang, rest[i])?.[0];
    // Short literals only: a long object reads better under its own name.
    if (!st || st.kind !== 'assign' || !st.target || !st.value || !literal(lang, st.value) || st.value.includes('\n') || st.value.length > 40) continue;
    const later = [...rest.slice(i + 1), e].join('\n');
    const uses = identifierUses(lang, later, st.target);
    const assigned = rest.slice(i + 1).some((s) => statements(lang, s)?.[0]?.target === st.target);
    if (uses.length !== 1 || assigned) continue;
    const inExpr = identifierUses(lang, e, st.target).length === 1;
    if (inExpr) e = replaceIdentifier(lang, e, st.target, st.value);
    else rest = rest.map((s, k) => (k > i && identifierUses(lang, s, st.target!).length ? replaceIdentifier(lang, s, st.target!, st.value!) : s));
    rest.splice(i, 1);
  }
  // `c = f(…)` then `c`: assert on the call itself.
  const last = rest.length ? statements(lang, rest[rest.length - 1])?.[0] : undefined;
  if (last?.kind === 'assign' && last.target === e.trim() && last.value && !last.value.includes('\n')) {
    e = last.value;
    rest = rest.slice(0, -1);
  }
  return { setup: rest, expr: e };
}

export function quoteComment(claim: Claim, marker: string): string[] {
  const q = `${marker} From the issue: ${claim.quote.replace(/\s+/g, ' ').trim()}`;
  if (claim.expected) return [q];
  if (claim.wrong) return [q, `${marker} It gives no expected value, so this only checks that the wrong one is gone.`];
  return [q, `${marker} This checks that the error is no longer raised.`];
}

/** The part of an error message a test can rely on: none when it holds addresses or paths. */
export function stableMessage(message: string): string {
  const m = message.trim();
  if (!m || /0x[0-9a-f]{4,}|\bat 0x|\/[\w.-]+\/[\w.-]+\/|[A-Z]:\\/i.test(m) || m.length > 200) return '';
  return m;
}
