/**
 * What an issue claims about its own code: the call it shows, the result it calls wrong, the one
 * it expects, or the exception it reports. Reads REPL sessions, console transcripts, scripts with
 * result comments, output blocks under "Actual"/"Expected" sections or cues, numbered
 * When/Expected/Actual lists, and sentences such as "`f(x)` returns `3`", "I would expect `4`",
 * "`3` instead of `4`". When it cannot tell which result is wrong, or nothing is stated, it says
 * so instead of guessing. Pure.
 */
import { HEDGE, roleOf, type IssueBlock, type IssueDoc, type ProseLine, type Role } from './markdown.js';
import { errorIn, readSession, type Session, type ShownError, type Step } from './sessions.js';
import { assertedValue, hasCall, isAmbient, literal, statements, type CodeLang } from './syntax.js';
import { normShown, proseSpans, proseValue, sameShown, splitTop, valueOf, type ProseSpan, type Value } from './values.js';

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

/** How the issue tells that a result is wrong. `role` alone (a block under "Actual") is the weakest. */
type Mark = 'comment' | 'prose' | 'role' | 'list' | 'title' | 'error' | 'assert';

interface Site {
  block: number;
  setup: string[];
  expr: string;
  printed: boolean;
  shape: Claim['shape'];
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

const PRINT = { python: /^print\(([\s\S]*)\)$/, js: /^console\.(?:log|dir|info)\(([\s\S]*)\)$/ };

/** `print(x)` → x; a site's expression and whether its shown output is printed text. */
function displayed(lang: CodeLang, expr: string): { expr: string; printed: boolean } {
  const e = expr.trim().replace(/;$/, '');
  const m = PRINT[lang].exec(e);
  if (m) {
    const args = splitTop(m[1]).map((a) => a.trim());
    // console.log(value, 'label'): the extra arguments are labels.
    if (args.length >= 1 && !/^f?["'`]/.test(args[0]) && args.slice(1).every((a) => /^(['"`]).*\1$/.test(a))) return { expr: args[0], printed: true };
  }
  return { expr: e, printed: false };
}

interface CommentReading {
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

/** Reads the claim for a repository in `lang`, or why there is none. */
export function readClaim(doc: IssueDoc, lang: CodeLang): ClaimResult {
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

/** A block of output: what the code before it produced (or raised), or what it should produce. */
function attachOutput(lang: CodeLang, b: IssueBlock, target: Site | undefined): void {
  const text = b.code.trim();
  if (!text || !target) return;
  const err = errorIn(lang, text);
  const hedged = HEDGE.test(b.before) || HEDGE.test(b.after);
  if (err) {
    if (!target.error && !target.shown) target.error = { error: err, quote: errorLine(err) };
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
  return /\b(wrong|incorrect(ly)?|bug|broken|fails?|failing|unexpected(ly)?|instead|should|expected|expect|not work|doesn'?t work|regression|invalid|error|problem|strange|weird|odd|mistake|not (correct|right))\b/i.test(text);
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
  const quote = step.comment ? `${code}  ${lang === 'python' ? '#' : '//'} ${oneLine(step.comment)}` : undefined;
  if (st.kind === 'assign') {
    // `x = f()  # TypeError: …`, or the script's last statement, whose value the next block shows.
    const error = step.error ?? comment.error;
    if (error) {
      const s = mk(st.value!, false);
      s.error = { error, quote: quote ?? errorLine(error) };
      s.marks.add('error');
      return s;
    }
    if (kind === 'script' && lastOfBlock && hasCall(lang, st.value!)) return mk(st.target!, false, [...setup, code]);
    return undefined;
  }
  // The snippet's own `assert f(x) == 3`: what it should give, when the issue says the assertion
  // fails. (Reporters also assert what they observe, to show the bug; that assertion passes.)
  const asserted = assertedValue(lang, code);
  if (asserted && !assertionsFail) return undefined;
  if (asserted) {
    const v = valueOf(lang, asserted.expected);
    if (!v || !hasCall(lang, asserted.actual)) return undefined;
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
  if (step.error) {
    site.error = { error: step.error, quote: errorLine(step.error) };
    site.marks.add('error');
  }
  if (comment.error && !site.error) {
    site.error = { error: comment.error, quote: quote! };
    site.marks.add('error');
  }
  if (comment.marker === 'correct') site.correct = true;
  if (comment.marker === 'wrong') {
    site.marks.add('comment');
    site.quote = site.shown ? `${site.shown.quote}  ${lang === 'python' ? '#' : '//'} ${oneLine(step.comment!)}` : quote;
    if (comment.wrong && !site.shown) site.shown = { value: comment.wrong, quote: quote! };
  }
  if (comment.wrong !== undefined && comment.marker !== 'wrong') {
    if (!site.shown) site.shown = { value: comment.wrong, quote: quote! };
    if (comment.marker !== 'shown') site.marks.add('comment');
    site.quote = quote;
  }
  if (comment.expected !== undefined) {
    const v = valueOrWords(lang, comment.expected);
    if (v) site.expected = { value: v, quote: quote!, hedged: HEDGE.test(step.comment!) };
    site.quote = quote;
  }
  if (b.role === 'expected' && !site.marks.size) {
    // Code under "Expected", or after "according to the docs": what should come out.
    if (site.shown) {
      const v = valueOf(lang, site.shown.value, printed);
      if (v) site.expected = { value: v, quote: quoteOf(b, site.shown.value), hedged: HEDGE.test(b.before) };
      site.shown = undefined;
    }
    if (/\bcorrect|\bworks|\bfine\b/i.test(b.cue)) site.correct = true;
  }
  return site;
}

/** A comment's value: a literal, else its words as a string (`// expected i18nLocales`). */
function valueOrWords(lang: CodeLang, text: string): Value | undefined {
  const t = text.trim().replace(/^`(.*)`$/, '$1');
  return valueOf(lang, t) ?? proseValue(lang, { text: t, start: 0, end: t.length, quoted: /^[\w.-]+$/.test(t), delimiter: '`' });
}

// ---------------------------------------------------------------- prose

const CUR_VERB = /(?:\b(?:actual(?:ly)?(?: output| result| value)?|returns?|returned|gives?|gave|got|get|gets|results? in|resulted in|outputs?|prints?|printed|produces?|produced|yields?|evaluates? to|comes? out as|shows?|logs?|becomes?|turns? into|is|was|are|out)\b|==|===|=>|->|→|=)\s*(?:of\s*)?:?\s*$/i;
const EXP_VERB = /\b(?:expect(?:ed|ing)?(?:\s+(?:to\s+)?(?:get|see|be|return|output|have|produce))?(?:\s+(?:it\s+to\s+)?(?:produce|output|result|value|return))?(?:\s+(?:is|would be|should be))?|should\s+(?:be|return|give|produce|output|print|equal|yield|have been)(?:\s+return)?|must\s+(?:be|return)|would\s+expect|i\s+hope\s+(?:the\s+)?(?:out(?:put)?)?|want(?:ed)?(?:\s+to\s+get)?|desired(?:\s+(?:output|result))?|correct\s+(?:result|output|value|answer)(?:\s+(?:is|be|would be|should be))?|intended|required)\s*:?\s*$/i;
const DEIXIS = /^\s*(?:[-*>]\s*)?(?:(?:this|it|that|which|then|and|but|instead|now|i|we|you|the (?:result|output|return value|value))\b[\w\s',]{0,30}?)?(?:\b(?:returns?|returned|gives?|gave|got|get|gets|outputs?|output|out|prints?|printed|produces?|yields?|logs?|shows?|results? in|resulted in|actual(?: output| result)?|result)\b)\s*:?\s*$/i;
const EQUALITY_STATED = /\b(says?|said|should|expected|expect|documented|docs|documentation|readme|according|must|supposed|but|however|instead|raises?|throws?|fails?)\b/i;
const NEGATED = /\b(not|n't|never)\s+(?:\w+\s+){0,2}$/i;
const BARE_CALL = /(?<![\w$.`])((?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*\((?:[^()`]|\((?:[^()`]|\([^()`]*\))*\))*\)(?:\.[A-Za-z_$][\w$]*(?:\((?:[^()`]|\([^()`]*\))*\))?)*)/g;

/**
 * Prose with a call alone on its line and its result a line or two later ("`f(x)`" / "will
 * output :" / "`{…}`") read as one sentence.
 */
function joinedProse(lang: CodeLang, prose: ProseLine[]): ProseLine[] {
  const out: ProseLine[] = [];
  for (let i = 0; i < prose.length; i++) {
    const p = prose[i];
    const alone = /^\s*`[^`]+`\s*$/.test(p.text) && /\(/.test(p.text);
    if (alone) {
      let text = p.text;
      let j = i + 1;
      for (; j < prose.length && j <= i + 2 && prose[j].afterBlock === p.afterBlock; j++) {
        text += ' ' + prose[j].text;
        if (proseSpans(prose[j].text).length) break;
      }
      if (j > i + 1 && j < prose.length) {
        out.push({ ...p, text });
        i = j;
        continue;
      }
    }
    // "This gives the following as output:" / "`value`"
    const next = prose[i + 1];
    const lone = next && /^\s*`([^`]+)`\s*\.?\s*$/.exec(next.text);
    if (/:\s*$/.test(p.text) && lone && next.afterBlock === p.afterBlock && !isCall(lang, lone[1])) {
      out.push({ ...p, text: `${p.text} ${next.text.trim()}` });
      i++;
      continue;
    }
    out.push(p);
  }
  return out;
}

/** Is this the call of a function (not an operator expression, not `f(...)` placeholder)? */
function isCall(lang: CodeLang, text: string): boolean {
  const st = statements(lang, text);
  if (!st || st.length !== 1 || st[0].kind !== 'expression' || literal(lang, text)) return false;
  const e = st[0].expr!;
  return hasCall(lang, e) && /^(new\s+)?[A-Za-z_$][\w$.]*\s*\(/.test(e) && /\)(\.[A-Za-z_$][\w$]*(\([^]*\))?|\[[^\]]*\])*\s*;?$/.test(e) && !/\(\s*\.\.\.\s*\)/.test(e);
}

/** One prose line: values it states and what they belong to. */
function readSentence(lang: CodeLang, line: string, sectionRole: Role, afterBlock: number, sites: Site[], names: Set<string>): void {
  // A variable of the issue's code named in the prose (`merged`) is not a value.
  let spans = proseSpans(line).filter((s) => !(s.delimiter === '`' && names.has(s.text.trim())));
  // Calls written bare in the sentence (`slugify(u"x") returns …`) swallow the spans inside them.
  const calls: ProseSpan[] = [];
  const codeSpans = spans.filter((s) => s.delimiter === '`');
  for (const m of line.matchAll(BARE_CALL)) {
    if (codeSpans.some((c) => m.index! >= c.start && m.index! < c.end)) continue;
    if (isCall(lang, m[1])) calls.push({ text: m[1], start: m.index!, end: m.index! + m[1].length, quoted: false, delimiter: '' });
  }
  spans = spans.filter((s) => !calls.some((c) => s.start >= c.start && s.end <= c.end));
  // `f(x) = y` / `f(x) == y` inside one code span: a call and its result.
  const expanded: Array<ProseSpan & { call?: boolean; verb?: 'current' | 'expected' }> = [];
  for (const s of [...spans, ...calls].sort((a, b) => a.start - b.start)) {
    if (calls.includes(s)) {
      expanded.push({ ...s, call: true });
      continue;
    }
    const eq = s.delimiter === '`' ? /^(.*?\))\s*(===?|=>|->|→|=)\s*(.+)$/.exec(s.text) : null;
    if (eq && isCall(lang, eq[1])) {
      expanded.push({ ...s, text: eq[1], call: true });
      // `f(x) == 3` states what should hold only where the sentence says so ("the README says …, but …").
      const equality = eq[2].startsWith('==');
      if (!equality || EQUALITY_STATED.test(line)) expanded.push({ ...s, text: eq[3], verb: equality ? 'expected' : 'current', delimiter: '`' });
      continue;
    }
    expanded.push({ ...s, call: s.delimiter === '`' && isCall(lang, s.text) });
  }
  if (!expanded.some((s) => !s.call)) return;
  const hedged = HEDGE.test(line) && !/^\s*(shouldn'?t|should not|isn'?t|wouldn'?t)\b/i.test(line);
  // A sentence that names no call speaks of the code above it only when that block shows one call.
  const lastSiteBefore = () => {
    const s = [...sites].reverse().find((x) => x.block <= afterBlock && !x.correct) ?? sites.find((x) => !x.correct);
    if (!s || s.shape === 'prose' || s.block < 0) return s;
    // Of a block's calls, the one it prints is the one its output speaks of.
    const inBlock = sites.filter((x) => x.block === s.block && x.shape !== 'prose' && x.shape !== 'template' && !x.correct);
    const printed = inBlock.filter((x) => x.printed);
    const pool = printed.length ? printed : inBlock;
    return pool.length === 1 ? pool[0] : undefined;
  };
  const siteFor = (expr: string): Site | undefined => {
    const e = displayed(lang, expr).expr;
    const known = sites.find((s) => s.expr.replace(/\s+/g, '') === e.replace(/\s+/g, ''));
    if (known) return known;
    // `Math.floor(…)`, `len(…)`: the language's own functions are not what the issue reports on.
    if (isAmbient(lang, /^(?:new\s+)?([A-Za-z_$][\w$]*)/.exec(e)?.[1] ?? '')) return undefined;
    const s: Site = { block: afterBlock, setup: [], expr: e, printed: false, shape: 'prose', marks: new Set(), correct: false };
    sites.push(s);
    return s;
  };

  // "V1 instead of V2"
  const inst = /\binstead of\b/i.exec(line);
  if (inst) {
    // The values right around "instead of": `X` instead of `Y`.
    const v1 = [...expanded].reverse().find((s) => s.end <= inst.index && !s.call && /^[\s,)]*(?:\w+\s+){0,2}$/.test(line.slice(s.end, inst.index)));
    const v2 = expanded.find((s) => s.start >= inst.index + inst[0].length && !s.call && /^\s*(?:the\s+)?$/.test(line.slice(inst.index + inst[0].length, s.start)));
    const wrong = v1 && proseValue(lang, v1);
    const expected = v2 && proseValue(lang, v2);
    if (v1 && wrong && expected) {
      const byValue = matchShown(lang, sites, wrong);
      const call = [...expanded].reverse().find((s) => s.call && s.end <= v1.start);
      const target = byValue?.site ?? (call ? siteFor(call.text) : lastSiteBefore());
      if (!target) return;
      if (byValue?.index !== undefined) target.index = byValue.index;
      else if (!byValue) {
        if (target.shown && !sameShown(target.shown.value, v1.text) && !sameShown(target.shown.value, wrong.code)) return;
        target.shown ??= { value: wrong.code, quote: line };
      }
      target.marks.add('prose');
      if (!target.expected || target.expected.hedged) target.expected = { value: expected, quote: line, hedged };
      target.quote = line;
      return;
    }
  }

  for (let k = 0; k < expanded.length; k++) {
    const v = expanded[k];
    if (v.call) continue;
    const prev = expanded.slice(0, k).reverse().find((s) => !s.call);
    const gapStart = Math.max(prev ? prev.end : 0, ...expanded.slice(0, k).filter((s) => s.call).map((s) => s.end));
    const gap = v.verb ? '' : line.slice(gapStart, v.start);
    let exp = v.verb === 'expected' || (EXP_VERB.test(gap) && !NEGATED.test(gap.replace(EXP_VERB, '')));
    let cur = v.verb === 'current' || (!exp && CUR_VERB.test(gap));
    if (!exp && !cur) continue;
    // Under "Expected", "`f(x)` returns `4`" says what it should return.
    if (cur && sectionRole === 'expected') [exp, cur] = [true, false];
    const value = proseValue(lang, v);
    if (!value) continue;
    const call = expanded.slice(0, k).reverse().find((s) => s.call);
    const own = call ? siteFor(call.text) : undefined;
    if (call && !own) continue;
    // With no call in the sentence, only "This returns `x`", "Out: x" or "`result` is `x`" speak of the code above.
    const subject = line.slice(0, v.start).split(/(?<=[.!?])\s+/).pop() ?? '';
    const named = /^\s*`([A-Za-z_$][\w$.]*)`\s+(?:is|was|gives|returns|contains|becomes|equals|should be|should return)\s*:?\s*$/i.exec(subject);
    const byName = named ? sites.find((x) => x.expr === named[1]) : undefined;
    if (!own && !byName && cur && !DEIXIS.test(subject)) continue;
    const target = own ?? byName ?? lastSiteBefore();
    if (!target) continue;
    if (exp) {
      if (!target.expected || target.expected.hedged) {
        target.expected = { value, quote: line, hedged: hedged || HEDGE.test(line.slice(0, v.start)) };
        if (sectionRole === 'expected') target.template = true;
      }
      continue;
    }
    if (target.shown) {
      if (sameShown(target.shown.value, v.text) || sameShown(target.shown.value, value.code)) {
        target.marks.add('prose');
        target.quote = line;
      } else if (own) target.correct = true; // two different results for one call: say nothing
      continue;
    }
    if (/\bas expected\b|\bcorrect(ly)?\b|\bworks?\b/i.test(line.slice(v.end))) {
      target.correct = true;
      continue;
    }
    target.shown = { value: value.code, quote: line };
    target.marks.add('prose');
    target.quote = line;
  }
}

/**
 * Numbered lists under "When:" / "Expected:" / "Actual:" labels: the n-th call, its expected and
 * its actual result.
 */
function readLists(lang: CodeLang, prose: ProseLine[], sites: Site[]): void {
  let role: Role = 'none';
  const calls = new Map<number, string>();
  const expected = new Map<number, { v: Value; line: string }>();
  const actual = new Map<number, { v: Value; line: string }>();
  for (const p of prose) {
    const item = /^\s*(\d+)[.)]\s+(.*)$/.exec(p.text);
    if (!item) {
      if (/^\s*[^`]{1,40}:\s*$/.test(p.text)) role = roleOf(p.text);
      continue;
    }
    const spans = proseSpans(item[2]);
    if (spans.length !== 1) continue;
    const n = Number(item[1]);
    const text = spans[0].text.trim();
    if (isCall(lang, text)) calls.set(n, text);
    else if (role === 'expected' || role === 'current') {
      const v = proseValue(lang, { ...spans[0], text });
      if (v) (role === 'expected' ? expected : actual).set(n, { v, line: p.text.trim() });
    }
  }
  for (const [n, expr] of [...calls].sort((a, b) => a[0] - b[0])) {
    const e = expected.get(n);
    const a = actual.get(n);
    if (!e && !a) continue;
    const s: Site = { block: -1, setup: [], expr, printed: false, shape: 'template', marks: new Set(['list']), correct: false, template: true };
    if (e) s.expected = { value: e.v, quote: `${expr}: expected ${e.v.shown}${a ? `, actual ${a.v.shown}` : ''}`, hedged: false };
    if (a) s.shown = { value: a.v.code, quote: `${expr}: actual ${a.v.shown}` };
    s.quote = s.expected?.quote ?? s.shown?.quote;
    sites.push(s);
  }
}

/** "`result` should be empty": the empty value of the kind the issue shows as wrong. */
function expectEmpty(lang: CodeLang, line: string, sites: Site[]): void {
  const m = /`([A-Za-z_$][\w$.]*)`\s+should\s+be\s+empty\b/i.exec(line);
  if (!m) return;
  const site = sites.find((s) => s.expr === m[1] && s.shown && !s.expected);
  const wrong = site?.shown && valueOf(lang, site.shown.value, site.printed);
  if (!site || !wrong) return;
  const code = /^[ub]?['"`]/.test(wrong.code) ? "''" : wrong.code.startsWith('[') ? '[]' : wrong.code.startsWith('{') ? '{}' : undefined;
  if (code) site.expected = { value: { code, kind: code === "''" ? 'primitive' : 'structure', shown: 'empty' }, quote: line.trim(), hedged: false };
}

/** A title that names the shown result ("Plural of shoe comes out as sho") marks it wrong. */
function markByTitle(title: string, sites: Site[]): void {
  const words = new Set(title.toLowerCase().split(/[^\p{L}\p{N}_-]+/u).filter(Boolean));
  for (const s of sites) {
    if (!s.shown || s.correct) continue;
    const v = s.shown.value.trim().replace(/^[ub]?(['"])(.*)\1$/, '$2').toLowerCase();
    if (v && /^[\p{L}\p{N}_-]+$/u.test(v) && words.has(v)) s.marks.add('title');
  }
}

/** The site whose shown result is this value, or holds it as its only matching element. */
function matchShown(lang: CodeLang, sites: Site[], v: Value): { site: Site; index?: number } | undefined {
  for (const s of [...sites].reverse()) {
    if (!s.shown) continue;
    if (sameShown(s.shown.value, v.code) || sameShown(s.shown.value, v.shown)) return { site: s };
    const whole = valueOf(lang, s.shown.value, s.printed);
    if (whole?.elements) {
      const hits = whole.elements.map((e, i) => (normShown(e) === normShown(v.code) ? i : -1)).filter((i) => i >= 0);
      if (hits.length === 1) return { site: s, index: hits[0] };
    }
  }
  return undefined;
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

export function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 160 ? `${t.slice(0, 157)}…` : t;
}
