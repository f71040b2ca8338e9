/**
 * The pytest test for a claim: a function named after the issue in the repository's test
 * directory, importing what the code uses the way the repository's tests do, with one
 * assertion: equal to the expected value, not the wrong one, or not raising the reported error.
 */
import type { Claim } from './claims.js';
import { resolvePythonNames, type PythonApi } from './repoApiPython.js';
import { freeNames, indentCode, isPythonStdlib, statements } from './syntax.js';
import { inlineLiterals, nameWords, oneLineLiteral, quoteComment, sliceWords, stableMessage, uniquePath, type WriteResult, type WrittenTest } from './testWriting.js';
import type { Value } from './values.js';

export async function writePytest(title: string, claim: Claim, api: PythonApi): Promise<WriteResult> {
  const imports = claim.setup.filter((s) => statements('python', s)?.[0]?.kind === 'import').map((s) => s.trim());
  const body = claim.setup.filter((s) => statements('python', s)?.[0]?.kind !== 'import');
  const { setup, expr } = inlineLiterals('python', body, claim.expr);
  for (const v of [claim.expected, claim.wrong]) if (v) v.code = oneLineLiteral(v.code);
  const values = [claim.expected, claim.wrong, ...(claim.also ?? []).map((a) => a.expected)].filter((v): v is Value => Boolean(v));
  const code = [...setup, expr, ...(claim.also ?? []).map((a) => a.expr), ...values.map((v) => v.code)].join('\n');
  const kept = await withoutStarImports(api, imports, code);
  const free = freeNames('python', [...kept, code].join('\n'));
  const resolved = await resolvePythonNames(api, free, code);
  if (resolved.unresolved.length) {
    return { ok: false, reason: `\`${resolved.unresolved[0]}\` is not defined in the issue's code and not found in the repository's modules` };
  }
  if (!resolved.lines.concat(kept).some((l) => importsRepo(api, l))) return { ok: false, reason: 'the issue\'s code does not use this repository\'s package' };
  for (const n of values.flatMap((v) => v.needs ?? [])) if (!resolved.lines.includes(`import ${n}`) && !kept.some((k) => new RegExp(`^import\\s+${n}\\b`).test(k))) resolved.lines.push(`import ${n}`);
  const { kind, lines } = assertionLines(claim, expr);
  const fn = `test_${sliceWords(nameWords(title, expr), 50).join('_')}`;
  const short = sliceWords(nameWords(title, expr), 40).join('_');
  const stem = api.testSuffixStyle === 'suffix' ? `${short}_test` : `test_${short}`;
  const path = uniquePath(api.files, api.testDir, stem, '.py');
  const indent = (l: string) => indentCode('python', l, '    ');
  const content = [
    ...orderPythonImports([...kept, ...resolved.lines]),
    '',
    '',
    `def ${fn}():`,
    ...quoteComment(claim, '#').map(indent),
    ...setup.map(indent),
    ...lines.map(indent),
    '',
  ].join('\n');
  return { ok: true, test: { path, content: content.replace(/^\n+/, ''), kind, notes: [`snippet: ${claim.shape}; ${kind}`] } };
}

/** `from pkg import *` becomes an import of the names the code uses from pkg (none: dropped). */
async function withoutStarImports(api: PythonApi, imports: string[], code: string): Promise<string[]> {
  const kept: string[] = [];
  for (const imp of imports) {
    const star = /^from\s+([\w.]+)\s+import\s+\*$/.exec(imp);
    if (!star) {
      kept.push(imp);
      continue;
    }
    const names = await api.namesOf(star[1]);
    const used = freeNames('python', code).filter((n) => names.has(n));
    if (used.length) kept.push(`from ${star[1]} import ${used.join(', ')}`);
  }
  return kept;
}

/** The test's one assertion: equal to the expected value (and the snippet's other asserts), not the wrong one, or not raising the reported error. */
function assertionLines(claim: Claim, expr: string): { kind: WrittenTest['kind']; lines: string[] } {
  const target = claim.index !== undefined ? `${expr}[${claim.index}]` : expr;
  if (claim.expected) {
    return { kind: 'expected-value', lines: [`assert ${target} == ${claim.expected.code}`, ...(claim.also ?? []).map((a) => `assert ${a.expr} == ${a.expected.code}`)] };
  }
  if (claim.wrong) return { kind: 'wrong-value', lines: [`assert ${target} != ${claim.wrong.code}`] };
  const e = claim.raises!;
  const message = stableMessage(e.message);
  const lines = message ? ['try:', `    ${expr}`, `except ${e.type} as error:`, `    assert ${pyString(message)} not in str(error)`] : [expr];
  return { kind: 'exception', lines };
}

function importsRepo(api: PythonApi, line: string): boolean {
  const from = /^from\s+([\w.]+)\s+import/.exec(line);
  const mods = from ? [from[1]] : (/^import\s+(.+)$/.exec(line)?.[1] ?? '').split(',').map((m) => m.trim().split(/\s+/)[0]);
  return mods.some((mod) => api.modules.has(mod.split('.')[0]));
}

/** Standard library first, then the rest, like isort would. */
function orderPythonImports(lines: string[]): string[] {
  const uniq = [...new Set(lines)];
  const std = uniq.filter((l) => isPythonStdlib((/^(?:from|import)\s+([\w]+)/.exec(l)?.[1] ?? '')));
  const rest = uniq.filter((l) => !std.includes(l));
  return std.length && rest.length ? [...std, '', ...rest] : [...std, ...rest];
}

/** A Python string literal, single-quoted unless that needs escapes. */
function pyString(s: string): string {
  if (!/[\\\n\r]/.test(s)) {
    if (!s.includes("'")) return `'${s}'`;
    if (!s.includes('"')) return `"${s}"`;
  }
  return JSON.stringify(s);
}
