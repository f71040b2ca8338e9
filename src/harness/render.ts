/** Render a Verdict as GitHub markdown or as a plain-text table for the CLI. Pure. */
import type { FailureKind, TestTransition, Transition, Verdict } from '../results/types.js';
import { judgedTests, reproduces } from './classify.js';

export interface RenderOptions {
  /** Heading line (markdown: `###`); none when empty. */
  title?: string;
  /** Rows shown before the rest is summarised. */
  maxRows?: number;
  /** Characters of a failure message shown per row. */
  messageChars?: number;
}

const ORDER: Transition[] = ['F2P', 'P2F', 'F2F', 'P2P'];
const ARROW: Record<Transition, string> = { F2P: 'F→P', P2F: 'P→F', F2F: 'F→F', P2P: 'P→P' };
const MEANING: Record<Transition, string> = {
  F2P: 'fails before the fix, passes after',
  P2F: 'passes before the fix, fails after',
  F2F: 'fails before and after the fix',
  P2P: 'passes before and after the fix',
};

/** Rows in display order: F→P, P→F, F→F, P→P, then by id. */
export function orderedTests(v: Verdict): TestTransition[] {
  return [...v.tests].sort((a, b) => ORDER.indexOf(a.transition) - ORDER.indexOf(b.transition) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Why S and "likely correct" hold or not, one clause each (no yes/no). */
export function verdictReasons(v: Verdict): { success: string; likelyCorrect: string } {
  const judged = judgedTests(v);
  const f2p = judged.filter(reproduces).length;
  const failingAfter = judged.filter((t) => t.head === 'fail').length;
  const count = (tr: TestTransition['transition']) => judged.filter((t) => t.transition === tr).length;
  let s: string;
  const lost = v.lostReproductions?.length ? `the test patch takes away what went from failing to passing without it (${v.lostReproductions.join(', ')})` : undefined;
  if (lost) s = lost;
  else if (judged.length === 0) s = v.tests.length ? 'the test patch changes no test outcome' : 'no test ran';
  else if (v.success) s = `${plural(f2p, 'test')} ${f2p === 1 ? 'goes' : 'go'} from failing to passing and no test fails after the fix`;
  else if (f2p === 0) s = 'no test goes from failing to passing';
  else s = `${plural(failingAfter, 'test')} ${failingAfter === 1 ? 'fails' : 'fail'} after the fix`;

  let lc: string;
  if (v.likelyCorrect) lc = 'every test passes after the fix and at least one failed before it';
  else {
    const reasons: string[] = [];
    const p2f = count('P2F');
    const f2f = count('F2F');
    if (lost) reasons.push(lost);
    if (judged.length === 0) reasons.push(v.tests.length ? 'the test patch changes no test outcome' : 'no test ran');
    else if (f2p === 0) reasons.push('no test goes from failing to passing');
    if (p2f) reasons.push(`${plural(p2f, 'test')} ${p2f === 1 ? 'breaks' : 'break'} (P→F)`);
    if (f2f) reasons.push(`${plural(f2f, 'test')} still ${f2f === 1 ? 'fails' : 'fail'} (F→F)`);
    lc = reasons.join('; ');
  }
  return { success: s, likelyCorrect: lc };
}

const yes = (b: boolean) => (b ? 'yes' : 'no');

/**
 * One flaky test in words: how many runs failed on each flaky side, and why when a rerun alone
 * told ("fails only after X"). E.g. `failed 1 of 3 runs after the fix; fails only after t > a`.
 */
export function describeFlaky(t: TestTransition): string {
  const sides: string[] = [];
  for (const [side, flaky, words] of [['base', t.baseFlaky, 'before'], ['head', t.headFlaky, 'after']] as const) {
    const c = t.runs?.[side];
    if (flaky) sides.push(c ? `failed ${c.failed} of ${plural(c.runs, 'run')} ${words} the fix` : `changed between runs ${words} the fix`);
  }
  return [...sides, ...(t.orderDependent ? [t.orderDependent] : []), ...(t.knownFlaky ? ['seen flaky here before'] : [])].join('; ');
}

/** A failure at base that only the file's own order brings, every time (classify.ts): said beside the test. */
function inOrder(t: TestTransition): string {
  return !t.flaky && t.orderDependent ? `${t.orderDependent}, in its file's order every run (alone it passes)` : '';
}

function flakyTests(v: Verdict): TestTransition[] {
  return orderedTests(v).filter((t) => t.flaky);
}

function countsLine(v: Verdict): string {
  return ORDER.map((t) => `${ARROW[t]} ${v.counts[t]}`).join(' · ');
}

function sideLabel(t: TestTransition, side: 'base' | 'head'): string {
  const flaky = side === 'base' ? t.baseFlaky : t.headFlaky;
  if (flaky) return 'flaky';
  if (t[side] === 'pass') return 'pass';
  const kind: FailureKind | undefined = (side === 'base' ? t.baseFailure : t.headFailure)?.kind;
  return kind === 'skipped' ? 'skipped' : kind === 'assertion' || !kind ? 'fail' : kind === 'disk' ? 'fail (disk limit)' : `fail (${kind})`;
}

function sideIcon(t: TestTransition, side: 'base' | 'head'): string {
  const flaky = side === 'base' ? t.baseFlaky : t.headFlaky;
  if (flaky) return '⚠️';
  if (t[side] === 'pass') return '✅';
  return (side === 'base' ? t.baseFailure : t.headFailure)?.kind === 'skipped' ? '⏭️' : '❌';
}

/** The failure worth showing: after the fix if it fails there, else before it. */
function shownFailure(t: TestTransition): { side: 'before' | 'after'; kind: FailureKind; message?: string } | undefined {
  if (t.head === 'fail' && t.headFailure) return { side: 'after', ...t.headFailure };
  if (t.baseFailure) return { side: 'before', ...t.baseFailure };
  return t.headFailure ? { side: 'after', ...t.headFailure } : undefined;
}

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s*\n\s*/g, ' ⏎ ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A markdown code span that survives backticks and table pipes. */
function code(s: string): string {
  const runs = s.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const body = s.replace(/\|/g, '\\|');
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** A fenced block longer than any backtick run inside: a runner's output cannot close it. */
function block(s: string): string {
  const fence = '`'.repeat(Math.max(3, ...(s.match(/`+/g) ?? []).map((r) => r.length + 1)));
  return `${fence}text\n${s}\n${fence}`;
}

/** Markdown for a GitHub comment: a table of tests, then the verdict. */
export function renderMarkdown(v: Verdict, opts: RenderOptions = {}): string {
  const maxRows = opts.maxRows ?? 50;
  const msgChars = opts.messageChars ?? 120;
  const out: string[] = [];
  if (opts.title) out.push(`### ${opts.title}`, '');
  if (v.tests.length === 0) {
    out.push('_No test results._', '');
    if (v.noTests) out.push(block(v.noTests), '');
  } else {
    out.push('| Test | Before fix | After fix | Result | Details |', '| --- | --- | --- | --- | --- |');
    const rows = orderedTests(v);
    for (const t of rows.slice(0, maxRows)) {
      const f = shownFailure(t);
      const details = (f ? `${f.side}: ${f.kind}${f.message ? ` ${code(oneLine(f.message, msgChars))}` : ''}` : '') + (inOrder(t) ? `; ${inOrder(t)}` : '');
      const result = `${reproduces(t) && !t.preexisting && !t.notJudged ? '**F→P**' : ARROW[t.transition]}${t.flaky ? ' (flaky)' : ''}${t.preexisting ? ' (pre-existing)' : ''}${t.notJudged ? ' (not judged)' : ''}${t.fileLevel ? ' (file-level)' : ''}`;
      out.push(`| ${code(t.id)} | ${sideIcon(t, 'base')} ${sideLabel(t, 'base')} | ${sideIcon(t, 'head')} ${sideLabel(t, 'head')} | ${result} | ${details} |`);
    }
    if (rows.length > maxRows) {
      const rest = rows.slice(maxRows);
      const byT = ORDER.filter((tr) => rest.some((t) => t.transition === tr)).map((tr) => `${rest.filter((t) => t.transition === tr).length} ${ARROW[tr]}`);
      out.push('', `_…and ${plural(rest.length, 'more test')} (${byT.join(', ')})._`);
    }
    out.push('', countsLine(v), '');
  }
  const flaky = flakyTests(v);
  if (flaky.length) {
    out.push('**Flaky tests** (outcome changed between runs on the same code; not counted for S or the fix filter):', '');
    out.push(...flaky.map((t) => `- ⚠️ ${code(t.id)}: ${describeFlaky(t)}`), '');
  }
  const why = verdictReasons(v);
  out.push(`- ${v.success ? '✅' : '❌'} **S (the tests reproduce the issue): ${yes(v.success)}**: ${why.success}.`);
  out.push(`- ${v.likelyCorrect ? '✅' : '❌'} **Fix likely correct: ${yes(v.likelyCorrect)}**: ${why.likelyCorrect}.`);
  return `${out.join('\n')}\n`;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function clipStart(s: string, n: number): string {
  return s.length <= n ? s : `…${s.slice(s.length - n + 1)}`;
}

/** A plain-text table for the terminal. */
export function renderText(v: Verdict, opts: RenderOptions & { width?: number } = {}): string {
  const maxRows = opts.maxRows ?? 200;
  const msgChars = opts.messageChars ?? 100;
  const idWidth = Math.max(20, Math.min(opts.width ?? 70, Math.max(4, ...v.tests.map((t) => t.id.length))));
  const out: string[] = [];
  if (opts.title) out.push(opts.title, '');
  if (v.tests.length === 0) out.push(v.noTests ? `No test results: ${v.noTests}` : 'No test results.');
  else {
    const sideWidth = Math.max(10, ...v.tests.flatMap((t) => [sideLabel(t, 'base').length, sideLabel(t, 'head').length]));
    const cols = [idWidth, sideWidth, sideWidth];
    out.push(`${pad('TEST', cols[0])}  ${pad('BEFORE FIX', cols[1])}  ${pad('AFTER FIX', cols[2])}  RESULT`);
    const rows = orderedTests(v);
    for (const t of rows.slice(0, maxRows)) {
      out.push(
        `${pad(clipStart(t.id, cols[0]), cols[0])}  ${pad(sideLabel(t, 'base'), cols[1])}  ${pad(sideLabel(t, 'head'), cols[2])}  ${ARROW[t.transition]}${t.flaky ? ' (flaky)' : ''}${t.preexisting ? ' (pre-existing)' : ''}${t.notJudged ? ' (not judged)' : ''}${t.fileLevel ? ' (file-level)' : ''}`,
      );
      const f = shownFailure(t);
      if (f?.message && (t.transition !== 'P2P' || t.flaky)) out.push(`    ${f.side} fix: ${oneLine(f.message, msgChars)}`);
      if (inOrder(t)) out.push(`    ${inOrder(t)}`);
    }
    if (rows.length > maxRows) out.push(`… and ${plural(rows.length - maxRows, 'more test')}`);
    out.push('', countsLine(v));
  }
  const flaky = flakyTests(v);
  if (flaky.length) out.push('Flaky (not counted for S or the fix filter):', ...flaky.map((t) => `  ${t.id}: ${describeFlaky(t)}`));
  const why = verdictReasons(v);
  out.push(`S (reproduces the issue): ${yes(v.success)}: ${why.success}`);
  out.push(`Fix likely correct:       ${yes(v.likelyCorrect)}: ${why.likelyCorrect}`);
  return `${out.join('\n')}\n`;
}

export { MEANING as TRANSITION_MEANING };

/** Aliases under the names the CLI and the GitHub layer use. */
export const renderVerdictText = renderText;
export const renderVerdictMarkdown = renderMarkdown;
