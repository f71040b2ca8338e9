/**
 * What an issue claims about its own code: the call it shows, the result it calls wrong, the one
 * it expects, or the exception it reports. Reads REPL sessions, console transcripts, scripts with
 * result comments, output blocks under "Actual"/"Expected" sections or cues, numbered
 * When/Expected/Actual lists, and sentences such as "`f(x)` returns `3`", "I would expect `4`",
 * "`3` instead of `4`". When it cannot tell which result is wrong, or nothing is stated, it says
 * so instead of guessing. Pure.
 */
import { readComment, type CommentReading } from './comments.js';
import { HEDGE, type IssueBlock, type IssueDoc } from './markdown.js';
import { expectEmpty, joinedProse, markByTitle, readLists, readSentence } from './prose.js';
import { errorIn, readSession, type Session, type ShownError, type Step } from './sessions.js';
import { displayed, oneLine, type Site } from './site.js';
import { literal } from './literals.js';
import type { CodeLang } from './parser.js';
import { assertedValue, hasCall, statements } from './syntax.js';
import { proseValue, sameShown, valueOf, type Value } from './values.js';


export interface Claim {
  lang: CodeLang;
  /** More values the issue's own snippet asserts, after the first. */
  also?: Array<{ expr: string; expected: Value }>;
  /** The issue's statements before the call, in order (its imports included). */
  setup: string[];
  /** The expression whose result the issue reports. */
  expr: string;
  expected?: Value;
  wrong?: Value;
  raises?: ShownError;
  /** The claim concerns one element of the result (`match[1]`). */
  index?: number;
  /** The issue's sentence or lines that state the result. */
  quote: string;
  /** Which shape of issue text the claim was read from. */
  shape: 'repl' | 'console' | 'script' | 'prose' | 'template';
}

export type ClaimResult = { ok: true; claim: Claim } | { ok: false; reason: string };

const PY_LANGS = new Set(['python', 'py', 'python3', 'py3', 'pycon', 'ipython', 'pyi']);
const JS_LANGS = new Set(['js', 'javascript', 'ts', 'typescript', 'jsx', 'tsx', 'node', 'nodejs', 'mjs', 'cjs', 'mts', 'cts']);
const GENERIC_LANGS = new Set(['', 'text', 'txt', 'console', 'plain', 'plaintext', 'output', 'none', 'repl', 'log']);

const QUESTION_TITLE = /^\s*(how (to|do|can|should|would|does)\b|is (it|there) (possible|a way)|can (i|we|you)\b|what is the (best|right|correct) way|\[question\]|question:|\[feature|feature( request)?:|feature request|\[request\]|\[proposal\]|proposal:|add (an? |support|option|the ability)|support (for )?\w|allow (to |for |an? )|option to\b)/i;
const FEATURE_BODY = /is your feature request related to a problem|\bfeature request\b|it would be (nice|great|useful|good) (if|to)|would be nice to have|please add (an? )?(option|support)|an option to \w+ (\w+ )?would be nice/i;

/** Does the issue ask a question or request a feature (rather than report a bug)? */
export function notABugReport(title: string, body: string): string | undefined {
  if (QUESTION_TITLE.test(title)) return /feature|add |support|allow|option|proposal/i.test(title) ? 'the issue requests a feature' : 'the issue asks a question';
  if (FEATURE_BODY.test(body)) return 'the issue requests a feature';
  return undefined;
}

/** The block's code, in the repository's language, as a session; undefined for other languages. */
function sessionOf(b: IssueBlock, lang: CodeLang): Session | undefined {
  const l = b.lang;
  if (lang === 'python' ? JS_LANGS.has(l) : PY_LANGS.has(l)) return undefined;
  if (!(lang === 'python' ? PY_LANGS.has(l) : JS_LANGS.has(l)) && !GENERIC_LANGS.has(l)) return undefined;
  return readSession(lang, b.code);
}

/** The issue says its own assertion fails (rather than asserting what it observed). */
const ASSERTION_FAILS = /\bAssertionError\b|\b(this|the|following|my) (unit )?tests? (fails?|failing|breaks?)\b|\bassert(ion)?s?\b[^.\n]{0,40}\b(fails?|failing|failed|raises?|breaks?|does not hold|doesn'?t hold)\b|\b(fails?|failing) (on|at) the assert/i;

/** Calls that only show a value (`pprint(x)`, `console.table(x)`): not what the issue reports on. */
const DISPLAY_CALL = /^(?:print|pprint|pp|display|repr|console\.\w+|util\.inspect|logging\.\w+|logger\.\w+)\s*\(/;

/** Reads the claim for a repository in `lang`, or why there is none. */
export function readClaim(doc: IssueDoc, lang: CodeLang): ClaimResult {
  const { sites, sawCode } = sitesOfBlocks(doc, lang);

  if (!sawCode && !doc.prose.some((p) => /\w\(.*\)/.test(p.text))) {
    return { ok: false, reason: doc.blocks.length ? 'the issue shows no code in this repository\'s language' : 'the issue shows no code' };
  }

  const names = new Set(sites.flatMap((s) => [...s.setup, s.expr].join('\n').match(/[A-Za-z_$][\w$]*/g) ?? []));
  for (const line of joinedProse(lang, doc.prose)) readSentence(lang, line.text, line.role, line.afterBlock, sites, names);
  readLists(lang, doc.prose, sites);
  markByTitle(doc.title, sites);

  for (const line of doc.prose) expectEmpty(lang, line.text, sites);
  const stated = sites.filter((s) => !s.correct && (s.shown || s.error || (s.expected && !s.expected.hedged)));
  if (!sites.length) return { ok: false, reason: 'the issue shows no call whose result it reports' };
  if (!stated.length) return { ok: false, reason: 'the issue states no result for its code (no wrong value, expected value or exception)' };

  const { pool, also } = choosePool(stated);
  if (pool.length > 1) return { ok: false, reason: `the issue shows ${pool.length} results and does not say which one is wrong` };
  const site = pool[0];
  if (!site.marks.size && !site.expected && !complains(doc)) return { ok: false, reason: 'the issue shows a result but does not say it is wrong' };

  const expected = site.expected && !site.expected.hedged ? site.expected : undefined;
  let wrong: Value | undefined;
  if (site.shown) {
    wrong = valueOf(lang, site.shown.value, site.printed);
    if (!wrong && !expected) return { ok: false, reason: `the result the issue shows (${oneLine(site.shown.value)}) is not a value a test can compare with` };
  }
  if (expected && wrong && sameShown(expected.value.code, wrong.code) && site.index === undefined) return { ok: false, reason: 'the issue shows the same value as wrong and as expected' };
  const quote = expected?.quote ?? site.quote ?? site.shown?.quote ?? site.error?.quote ?? site.expr;
  const claim: Claim = { lang, setup: site.setup, expr: site.expr, quote: oneLine(quote), shape: site.template ? 'template' : site.shape };
  if (site.index !== undefined) claim.index = site.index;
  if (also) claim.also = also;
  if (expected) claim.expected = expected.value;
  else if (site.index !== undefined) return { ok: false, reason: 'the issue names a wrong part of the result but not what it should be' };
  if (wrong && site.index === undefined) claim.wrong = wrong;
  if (site.error) claim.raises = site.error.error;
  if (!claim.expected && !claim.wrong && !claim.raises) return { ok: false, reason: 'the issue states no result for its code' };
  return { ok: true, claim };
}

/** The call sites of the issue's code blocks, each block's setup before it; output blocks attach to the site before them. */
function sitesOfBlocks(doc: IssueDoc, lang: CodeLang): { sites: Site[]; sawCode: boolean } {
  const sites: Site[] = [];
  let lastSite: Site | undefined;
  let sawCode = false;
  const assertionsFail = ASSERTION_FAILS.test(`${doc.title}\n${doc.prose.map((p) => p.text).join('\n')}\n${doc.blocks.map((b) => b.code).join('\n')}`);

  for (const b of doc.blocks) {
    const session = sessionOf(b, lang);
    const withCode =
      session &&
      (session.kind !== 'script' || session.steps.some((s) => s.stmt?.kind !== 'expression' || (s.stmt.expr !== undefined && hasCall(lang, s.stmt.expr))));
    if (!session || !withCode) {
      attachOutput(lang, b, lastSite);
      continue;
    }
    sawCode = true;
    substituteShownValues(lang, session, sites);
    const setup: string[] = [];
    const own: Site[] = [];
    session.steps.forEach((step, i) => {
      const isLast = i === session.steps.length - 1;
      const site = siteOf(lang, step, session.kind, setup, b, isLast && !own.length, assertionsFail);
      if (site) {
        own.push(site);
        sites.push(site);
        lastSite = site;
      }
      const keep = setupWorthy(lang, step, session.kind);
      if (keep) setup.push(keep);
    });
    // A block under "Actual" (or after "I get:") marks its result wrong when it shows just one.
    const showing = own.filter((s) => s.shown || s.error);
    if (b.role === 'current' && showing.length === 1) showing[0].marks.add('role');
  }
  return { sites, sawCode };
}

/** The one site the issue reports on: the marked ones (or all stated), narrowed to one with an expected value or its own mark; asserts of one snippet go together. */
function choosePool(stated: Site[]): { pool: Site[]; also?: Claim['also'] } {
  const marked = stated.filter((s) => s.marks.size || (s.expected && !s.expected.hedged));
  let pool = dedupe(marked.length ? marked : stated);
  if (pool.length > 1) {
    const withExpected = pool.filter((s) => s.expected && !s.expected.hedged);
    const individual = pool.filter((s) => [...s.marks].some((m) => m !== 'role'));
    if (withExpected.length === 1) pool = withExpected;
    else if (individual.length === 1) pool = individual;
    else if (individual.length === pool.length && pool.every((s) => s.marks.has('list'))) pool = [pool[0]];
  }
  let also: Claim['also'];
  if (pool.length > 1 && pool.every((s) => s.marks.has('assert') && s.block === pool[0].block)) {
    // The snippet asserts several values: the test asserts them all, in its order.
    also = pool.slice(1).map((s) => ({ expr: s.expr, expected: s.expected!.value }));
    pool = [{ ...pool[0], setup: pool[pool.length - 1].setup, quote: pool.map((s) => s.quote).join(' ') }];
  }
  return { pool, also };
}

/** A block of output: what the code before it produced (or raised), or what it should produce. */
function attachOutput(lang: CodeLang, b: IssueBlock, target: Site | undefined): void {
  const text = b.code.trim();
  if (!text || !target) return;
  const err = errorIn(lang, text);
  const hedged = HEDGE.test(b.before) || HEDGE.test(b.after);
  if (err) {
    if (!target.error && !target.shown) markError(target, err);
  } else if (b.role === 'expected') {
    const v = valueOf(lang, text, target.printed);
    if (v && (!target.expected || target.expected.hedged)) {
      target.expected = { value: v, quote: quoteOf(b, text), hedged };
      if (b.roleFrom === 'section') target.template = true;
    }
  } else if (!target.shown && !target.error && b.role !== 'steps') {
    target.shown = { value: text, quote: quoteOf(b, text) };
    if (b.role === 'current') target.marks.add('role');
    if (b.role === 'current' && b.roleFrom === 'section') target.template = true;
  }
}

/**
 * `var r = /…/` after the issue showed that value as what `pathToRegexp(':name*')` returns: the
 * transcript reproduced the returned value by hand, so it stands for that call.
 */
function substituteShownValues(lang: CodeLang, session: Session, sites: Site[]): void {
  for (const step of session.steps) {
    const st = step.stmt ?? statements(lang, step.code)?.[0];
    if (st?.kind !== 'assign' || !st.value) continue;
    const lit = literal(lang, st.value);
    if (!lit) continue;
    const source = [...sites].reverse().find((s) => s.shown && sameValueText(lang, s.shown.value, st.value!));
    if (!source) continue;
    const decl = st.declarator ? (st.declarator === 'var' ? 'const' : st.declarator) + ' ' : '';
    step.code = `${decl}${st.target} = ${source.expr}`;
    step.stmt = statements(lang, step.code)?.[0];
    session.steps.unshift(...source.setup.map((code) => ({ code, stmt: statements(lang, code)?.[0] })));
    return;
  }
}

/** Two displays of a value; regular expressions compare by source, flags aside. */
function sameValueText(lang: CodeLang, a: string, b: string): boolean {
  if (sameShown(a, b)) return true;
  if (lang !== 'js') return false;
  const src = (s: string) => /^\/(.+)\/[a-z]*;?$/.exec(s.trim())?.[1];
  return src(a) !== undefined && src(a) === src(b);
}

function dedupe(sites: Site[]): Site[] {
  const out: Site[] = [];
  for (const s of sites) {
    const same = out.find((o) => o.expr === s.expr && o.setup.join('\n') === s.setup.join('\n'));
    if (!same) out.push(s);
    else {
      if (!same.expected || same.expected.hedged) same.expected = s.expected ?? same.expected;
      same.shown ??= s.shown;
      same.error ??= s.error;
      for (const m of s.marks) same.marks.add(m);
    }
  }
  return out;
}

function complains(doc: IssueDoc): boolean {
  const text = `${doc.title}\n${doc.prose.map((p) => p.text).join('\n')}`;
  return /\b(wrong|incorrect(ly)?|bug|broken|fails?|failing|crash(es|ed)?|throws?|exception|unexpected(ly)?|instead|should|expected|expect|not work|doesn'?t work|regression|invalid|error|problem|strange|weird|odd|mistake|not (correct|right))\b/i.test(text);
}

/** A statement worth repeating before the call: imports, assignments, calls that are not displays. */
function setupWorthy(lang: CodeLang, step: Step, kind: string): string | undefined {
  const code = step.code.trim();
  if (!code) return undefined;
  const st = step.stmt ?? statements(lang, code)?.[0];
  if (!st) return undefined;
  if (assertedValue(lang, code) || /^assert\b/.test(code)) return undefined;
  if (st.kind === 'import' || st.kind === 'assign' || st.kind === 'other') return code;
  if (kind !== 'script' && (step.output !== undefined || step.error)) return undefined;
  if (displayed(lang, st.expr!).printed || !hasCall(lang, st.expr!)) return undefined;
  return code;
}

/** A call (or a value the calls before it built) whose result a step shows. */
function siteOf(lang: CodeLang, step: Step, kind: Session['kind'], setup: string[], b: IssueBlock, lastOfBlock: boolean, assertionsFail: boolean): Site | undefined {
  const code = step.code.trim();
  const st = step.stmt ?? statements(lang, code)?.[0];
  if (!st) return undefined;
  const shape: Claim['shape'] = kind === 'repl' ? 'repl' : kind === 'console' ? 'console' : b.origin === 'inline-lines' ? 'prose' : 'script';
  const mk = (expr: string, printed: boolean, setupFor = setup): Site => ({ block: b.index, setup: [...setupFor], expr, printed, shape, marks: new Set(), correct: false });
  const comment = step.comment ? readComment(lang, step.comment, b.role) : {};
  const quote = step.comment ? withComment(lang, code, step.comment) : undefined;
  if (st.kind === 'assign') {
    // `x = f()  # TypeError: …`, or the script's last statement, whose value the next block shows.
    const error = step.error ?? comment.error;
    if (error) return markError(mk(st.value!, false), error, quote);
    if (kind === 'script' && lastOfBlock && hasCall(lang, st.value!)) return mk(st.target!, false, [...setup, code]);
    return undefined;
  }
  // The snippet's own `assert f(x) == 3`: what it should give, when the issue says the assertion
  // fails. (Reporters also assert what they observe, to show the bug; that assertion passes.)
  const asserted = assertedValue(lang, code);
  if (asserted && !assertionsFail) return undefined;
  if (asserted) {
    // The expected side may be the issue's own expression (`len(API_TOKEN)`): it runs as written.
    const v = valueOf(lang, asserted.expected) ?? { code: asserted.expected, kind: 'structure' as const, shown: asserted.expected };
    if (!hasCall(lang, asserted.actual)) return undefined;
    const s = mk(asserted.actual, false);
    s.expected = { value: v, quote: code, hedged: false };
    s.marks.add('assert');
    s.quote = code;
    return s;
  }
  if (st.kind !== 'expression') return undefined;
  const { expr, printed } = displayed(lang, st.expr!);
  if (DISPLAY_CALL.test(expr)) return undefined;
  const callsBefore = setup.some((s) => hasCall(lang, s));
  const reference = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*|\[[^\]]+\])*$/.test(expr) && !/__\w+__/.test(expr);
  if (!hasCall(lang, expr) && !(callsBefore && reference)) return undefined;
  if (!hasCall(lang, expr) && kind === 'repl' && !setup.some((s) => hasCall(lang, s) && !/^\s*(import|from)\b/.test(s))) return undefined;
  const site = mk(expr, printed);
  if (step.output !== undefined) site.shown = { value: step.output, quote: `${code} -> ${oneLine(step.output)}` };
  if (step.error) markError(site, step.error);
  if (comment.error && !site.error) markError(site, comment.error, quote);
  if (step.comment) readStepComment(lang, site, comment, step.comment, quote!);
  if (b.role === 'expected' && !site.marks.size) readAsExpected(lang, site, b, printed);
  return site;
}

/** The site raised `error`, as the step's own output or its comment says. */
function markError(site: Site, error: ShownError, quote = errorLine(error)): Site {
  site.error = { error, quote };
  site.marks.add('error');
  return site;
}

/** The code with its trailing comment, as the issue wrote it. */
function withComment(lang: CodeLang, code: string, comment: string): string {
  return `${code}  ${lang === 'python' ? '#' : '//'} ${oneLine(comment)}`;
}

/** What the step's comment says of the site's result: it is right, it is wrong, it shows a value, or what it should be. */
function readStepComment(lang: CodeLang, site: Site, comment: CommentReading, text: string, quote: string): void {
  if (comment.marker === 'correct') site.correct = true;
  if (comment.marker === 'wrong') {
    site.marks.add('comment');
    site.quote = site.shown ? withComment(lang, site.shown.quote, text) : quote;
    if (comment.wrong && !site.shown) site.shown = { value: comment.wrong, quote };
  }
  if (comment.wrong !== undefined && comment.marker !== 'wrong') {
    if (!site.shown) site.shown = { value: comment.wrong, quote };
    if (comment.marker !== 'shown') site.marks.add('comment');
    site.quote = quote;
  }
  if (comment.expected !== undefined) {
    const v = valueOrWords(lang, comment.expected);
    if (v) site.expected = { value: v, quote, hedged: HEDGE.test(text) };
    site.quote = quote;
  }
}

/** Code under "Expected", or after "according to the docs": what it shows is what should come out. */
function readAsExpected(lang: CodeLang, site: Site, b: IssueBlock, printed: boolean): void {
  if (site.shown) {
    const v = valueOf(lang, site.shown.value, printed);
    if (v) site.expected = { value: v, quote: quoteOf(b, site.shown.value), hedged: HEDGE.test(b.before) };
    site.shown = undefined;
  }
  if (/\bcorrect|\bworks|\bfine\b/i.test(b.cue)) site.correct = true;
}

/** A comment's value: a literal, else its words as a string (`// expected i18nLocales`). */
function valueOrWords(lang: CodeLang, text: string): Value | undefined {
  const t = text.trim().replace(/^`(.*)`$/, '$1');
  return valueOf(lang, t) ?? proseValue(lang, { text: t, start: 0, end: t.length, quoted: /^[\w.-]+$/.test(t), delimiter: '`' });
}

function quoteOf(b: IssueBlock, value: string): string {
  const cue = (b.cue || b.heading || '').replace(/^[#*_\s]+|[*_\s]+$/g, '');
  const sentence = (cue.split(/(?<=[.!])\s+/).pop() ?? cue).replace(/[:\s]+$/, '');
  const v = oneLine(value);
  return sentence ? `${sentence}${/[?!]$/.test(sentence) ? '' : ':'} ${v}` : v;
}

function errorLine(e: ShownError): string {
  return `${e.type}${e.message ? `: ${e.message}` : ''}`;
}

