/**
 * The issue's sentences about its code: "`f(x)` returns `3`", "This returns `true`", "I would
 * expect `4`", "`3` instead of `4`", "`result` is `x`", numbered When/Expected/Actual lists, a
 * title naming the wrong result. Each attaches a shown, wrong or expected value to a site. Pure.
 */
import { HEDGE, roleOf, type ProseLine, type Role } from './markdown.js';
import { displayed, type Site } from './site.js';
import { literal } from './literals.js';
import type { CodeLang } from './parser.js';
import { hasCall, isAmbient, statements } from './syntax.js';
import { normShown, proseSpans, proseValue, sameShown, valueOf, type ProseSpan, type Value } from './values.js';

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
export function joinedProse(lang: CodeLang, prose: ProseLine[]): ProseLine[] {
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
export function readSentence(lang: CodeLang, line: string, sectionRole: Role, afterBlock: number, sites: Site[], names: Set<string>): void {
  const expanded = sentenceSpans(lang, line, names);
  if (!expanded.some((s) => !s.call)) return;
  const hedged = HEDGE.test(line) && !/^\s*(shouldn'?t|should not|isn'?t|wouldn'?t)\b/i.test(line);
  const sentence: Sentence = { lang, line, sectionRole, afterBlock, sites, expanded, hedged };
  if (insteadOf(sentence)) return;
  for (let k = 0; k < expanded.length; k++) valueAt(sentence, k);
}

type Span = ProseSpan & { call?: boolean; verb?: 'current' | 'expected' };

/** One sentence being read: its spans (values and calls) and the sites they speak of. */
interface Sentence {
  lang: CodeLang;
  line: string;
  sectionRole: Role;
  afterBlock: number;
  sites: Site[];
  expanded: Span[];
  hedged: boolean;
}

/** The sentence's values and calls, in order: code spans, bare calls, and `f(x) = y` split into a call and its result. */
function sentenceSpans(lang: CodeLang, line: string, names: Set<string>): Span[] {
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
  const expanded: Span[] = [];
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
  return expanded;
}

/** A sentence that names no call speaks of the code above it only when that block shows one call. */
function lastSiteBefore({ sites, afterBlock }: Sentence): Site | undefined {
  const s = [...sites].reverse().find((x) => x.block <= afterBlock && !x.correct) ?? sites.find((x) => !x.correct);
  if (!s || s.shape === 'prose' || s.block < 0) return s;
  // Of a block's calls, the one it prints is the one its output speaks of.
  const inBlock = sites.filter((x) => x.block === s.block && x.shape !== 'prose' && x.shape !== 'template' && !x.correct);
  const printed = inBlock.filter((x) => x.printed);
  const pool = printed.length ? printed : inBlock;
  return pool.length === 1 ? pool[0] : undefined;
}

/** The site of a call the sentence names: one of the code's, or a new prose site (never the language's own functions). */
function siteFor({ lang, sites, afterBlock }: Sentence, expr: string): Site | undefined {
  const e = displayed(lang, expr).expr;
  const known = sites.find((s) => s.expr.replace(/\s+/g, ' ') === e.replace(/\s+/g, ' '));
  if (known) return known;
  // `Math.floor(…)`, `len(…)`: the language's own functions are not what the issue reports on.
  if (isAmbient(lang, /^(?:new\s+)?([A-Za-z_$][\w$]*)/.exec(e)?.[1] ?? '')) return undefined;
  const s: Site = { block: afterBlock, setup: [], expr: e, printed: false, shape: 'prose', marks: new Set(), correct: false };
  sites.push(s);
  return s;
}

/** "V1 instead of V2": the wrong value and the expected one; true when the sentence is read so. */
function insteadOf(sentence: Sentence): boolean {
  const { lang, line, sites, expanded, hedged } = sentence;
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
      const target = byValue?.site ?? (call ? siteFor(sentence, call.text) : lastSiteBefore(sentence));
      if (!target) return true;
      if (byValue?.index !== undefined) target.index = byValue.index;
      else if (!byValue) {
        if (target.shown && !sameShown(target.shown.value, v1.text) && !sameShown(target.shown.value, wrong.code)) return true;
        target.shown ??= { value: wrong.code, quote: sentenceOf(line, v1.start, v2.end) };
      }
      target.marks.add('prose');
      if (!target.expected || target.expected.hedged) target.expected = { value: expected, quote: sentenceOf(line, v1.start, v2.end), hedged };
      target.quote = sentenceOf(line, v1.start, v2.end);
      return true;
    }
  }
  return false;
}

/** The k-th span, a value: what the sentence says of it (expected, current, correct) lands on the site it speaks of. */
function valueAt(sentence: Sentence, k: number): void {
  const { lang, line, sectionRole, sites, expanded, hedged } = sentence;
  const v = expanded[k];
  if (v.call) return;
  const prev = expanded.slice(0, k).reverse().find((s) => !s.call);
  const gapStart = Math.max(prev ? prev.end : 0, ...expanded.slice(0, k).filter((s) => s.call).map((s) => s.end));
  const gap = v.verb ? '' : line.slice(gapStart, v.start);
  let exp = v.verb === 'expected' || (EXP_VERB.test(gap) && !NEGATED.test(gap.replace(EXP_VERB, '')));
  let cur = v.verb === 'current' || (!exp && CUR_VERB.test(gap));
  if (!exp && !cur) return;
  // Under "Expected", "`f(x)` returns `4`" says what it should return.
  if (cur && sectionRole === 'expected') [exp, cur] = [true, false];
  const value = proseValue(lang, v);
  if (!value) return;
  const call = expanded.slice(0, k).reverse().find((s) => s.call);
  const own = call ? siteFor(sentence, call.text) : undefined;
  if (call && !own) return;
  // With no call in the sentence, only "This returns `x`", "Out: x" or "`result` is `x`" speak of the code above.
  const subject = line.slice(0, v.start).split(/(?<=[.!?])\s+/).pop() ?? '';
  const named = /^\s*`([A-Za-z_$][\w$.]*)`\s+(?:is|was|gives|returns|contains|becomes|equals|should be|should return)\s*:?\s*$/i.exec(subject);
  const byName = named ? sites.find((x) => x.expr === named[1]) : undefined;
  if (!own && !byName && cur && !DEIXIS.test(subject)) return;
  const target = own ?? byName ?? lastSiteBefore(sentence);
  if (!target) return;
  if (exp) {
    if (!target.expected || target.expected.hedged) {
      target.expected = { value, quote: sentenceOf(line, call?.start ?? v.start, v.end), hedged: hedged || HEDGE.test(line.slice(0, v.start)) };
      if (sectionRole === 'expected') target.template = true;
    }
    return;
  }
  if (target.shown) {
    if (sameShown(target.shown.value, v.text) || sameShown(target.shown.value, value.code)) {
      target.marks.add('prose');
      target.quote = sentenceOf(line, call?.start ?? v.start, v.end);
    } else if (own) target.correct = true; // two different results for one call: say nothing
    return;
  }
  // "… returns `x` as expected": within this sentence, up to the next call it names.
  const nextCall = expanded.slice(k + 1).find((s) => s.call);
  const rest = line.slice(v.end, nextCall ? nextCall.start : undefined).split(/(?<=[.!?])\s/)[0];
  if (/\bas expected\b|\bcorrect(ly)?\b|\bworks?\b/i.test(rest)) {
    target.correct = true;
    return;
  }
  // "Returns `x` on Windows, but `y` on the others": two results in one sentence, no expectation between them.
  const other = expanded.slice(k + 1).find((s) => !s.call);
  const sentenceEnd = line.slice(v.end).search(/[.!?](\s|$)/);
  if (other && (sentenceEnd < 0 || other.start < v.end + sentenceEnd) && !EXP_VERB.test(line.slice(v.end, other.start)) && !/\binstead of\b/i.test(line.slice(v.end, other.start))) {
    target.correct = true;
    return;
  }
  target.shown = { value: value.code, quote: sentenceOf(line, call?.start ?? v.start, v.end) };
  target.marks.add('prose');
  target.quote = target.shown.quote;
}

/** The sentence(s) of `line` from the one holding `start` to the one holding `end`. */
function sentenceOf(line: string, start: number, end: number): string {
  const before = line.slice(0, start);
  const from = Math.max(0, ...[...before.matchAll(/[.!?]\s+(?=\S)/g)].map((m) => m.index! + m[0].length));
  const after = line.slice(end).search(/[.!?](\s|$)/);
  return line.slice(from, after < 0 ? line.length : end + after + 1).trim();
}

/**
 * Numbered lists under "When:" / "Expected:" / "Actual:" labels: the n-th call, its expected and
 * its actual result.
 */
export function readLists(lang: CodeLang, prose: ProseLine[], sites: Site[]): void {
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
export function expectEmpty(lang: CodeLang, line: string, sites: Site[]): void {
  const m = /`([A-Za-z_$][\w$.]*)`\s+should\s+be\s+empty\b/i.exec(line);
  if (!m) return;
  const site = sites.find((s) => s.expr === m[1] && s.shown && !s.expected);
  const wrong = site?.shown && valueOf(lang, site.shown.value, site.printed);
  if (!site || !wrong) return;
  const code = /^[ub]?['"`]/.test(wrong.code) ? "''" : wrong.code.startsWith('[') ? '[]' : wrong.code.startsWith('{') ? '{}' : undefined;
  if (code) site.expected = { value: { code, kind: code === "''" ? 'primitive' : 'structure', shown: 'empty' }, quote: line.trim(), hedged: false };
}

/** A title that names the shown result ("Plural of shoe comes out as sho") marks it wrong. */
export function markByTitle(title: string, sites: Site[]): void {
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

