/**
 * An issue's markdown as the snippet reader needs it: code blocks (fenced, indented, bare `>>>`
 * lines, lines of inline code) with the role the issue gives them — the current (wrong)
 * behaviour, the expected one, or the steps — taken from the template section they sit in
 * ("### Expected behavior") or the cue just before them ("But I actually get:"). Pure.
 */

export type Role = 'current' | 'expected' | 'steps' | 'none';

export interface IssueBlock {
  index: number;
  /** The info string's first word, lower-cased; 'pycon' for bare `>>>` lines; '' when none. */
  lang: string;
  code: string;
  origin: 'fenced' | 'indented' | 'prompt-lines' | 'inline-lines';
  /** The cue right before the block, else its section's role. */
  role: Role;
  /** Where the role comes from: the cue line, or the template section (heading). */
  roleFrom: 'cue' | 'section';
  /** The prose line just before the block ('' when none). */
  cue: string;
  /** The paragraph just before the block. */
  before: string;
  /** The prose just after the block, up to the next block or heading. */
  after: string;
  /** The heading of the section the block sits in ('' when none). */
  heading: string;
  /** Line where the block starts and the line after it ends. */
  line: number;
  end: number;
}

export interface ProseLine {
  text: string;
  /** The role of the section it sits in, or of its own label (`Expected: x`). */
  role: Role;
  /** Index of the last block before this line (-1 when none). */
  afterBlock: number;
}

export interface IssueDoc {
  title: string;
  blocks: IssueBlock[];
  prose: ProseLine[];
}

const STRONG_CURRENT = /\b(actual(ly)?|in reality|instead|currently|observed|what happen(s|ed)|what actually)\b/i;
const EXPECTED = /\b(expect(s|ed|ing|ation)?|desired?|should|wanted?|hope|would like|must (be|return|give)|correct (output|result|behaviou?r|value|answer|one)|gives correct|according to (the )?(docs|documentation|readme)|documented|docs say|readme says)\b/i;
const CURRENT = /\b(current(ly)?|result(s|ed)?|outputs?|returns?|returned|gives?|gave|got|get|prints?|printed|produces?|yields?|logs?|shows?|bug|problem|error|wrong|incorrect|broken|fails?|but)\b/i;
const STEPS = /\b(steps?|reproduc\w*|repro|replicate|code|example|minimal|what did you do|sample|snippet|how to)\b/i;

/** The role a heading or cue line gives what follows it. */
export function roleOf(text: string): Role {
  const t = text.replace(/[*_`#<>/]/g, ' ');
  const expected = EXPECTED.test(t);
  const strong = STRONG_CURRENT.test(t);
  if (expected && strong) return /\bexpected\b[^.?!]*\?\s*\bwhat\b/i.test(t) ? 'none' : /\binstead of\b/i.test(t) ? 'none' : roleByLast(t);
  if (expected) return 'expected';
  if (strong || CURRENT.test(t)) return 'current';
  if (STEPS.test(t)) return 'steps';
  return 'none';
}

/** Both cues on one line ("I was expecting … but I actually get"): the later one wins. */
function roleByLast(t: string): Role {
  const e = lastIndex(t, EXPECTED);
  const c = lastIndex(t, STRONG_CURRENT);
  return e > c ? 'expected' : 'current';
}

function lastIndex(t: string, re: RegExp): number {
  const g = new RegExp(re.source, 'gi');
  let i = -1;
  for (const m of t.matchAll(g)) i = m.index ?? i;
  return i;
}

const HEADING = /^\s{0,3}(?:#{1,6}\s+(.+?)\s*#*\s*$|\*\*([^*]+?)\*\*:?\s*$|__([^_]+?)__:?\s*$|<b>(.+?)<\/b>\s*$)/;
const FENCE = /^([ \t]{0,3})(`{3,}|~{3,})[ \t]*([^\n`]*)$/;
/** Bare REPL prompt lines in prose: Python `>>>` (also `>>` and no space), IPython `In [1]:`. */
const PY_PROMPT = /^\s*(>>>|>>(?=\s)|In \[\d*\]:|In\s+:)/;
const INLINE_ONLY = /^\s*`([^`]+)`\s*$/;

export function readIssue(title: string, body: string): IssueDoc {
  const lines = joinBrokenCodeSpans(body.replace(/\r\n?/g, '\n').split('\n'));
  const blocks: IssueBlock[] = [];
  const prose: ProseLine[] = [];
  let section: Role = 'none';
  let heading = '';
  let paragraph: string[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    const head = HEADING.exec(line);
    if (head) {
      const text = head.slice(1).find((g) => g !== undefined) ?? '';
      section = roleOf(text);
      heading = text.trim();
      paragraph = [];
      prose.push({ text, role: section, afterBlock: blocks.length - 1 });
      i++;
      continue;
    }
    const found = blockAt(lines, i);
    if (found) {
      const cue = paragraph.filter((l) => l.trim()).pop()?.trim() ?? '';
      const cueRole = cue ? roleOf(cue) : 'none';
      blocks.push({ index: blocks.length, ...found, role: cueRole !== 'none' ? cueRole : section, roleFrom: cueRole !== 'none' ? 'cue' : 'section', cue, before: paragraph.join('\n').trim(), after: '', heading, line: i });
      paragraph = [];
      i = found.end;
      continue;
    }
    i++;
    if (!line.trim()) {
      paragraph.push('');
      continue;
    }
    if (paragraph.length && paragraph[paragraph.length - 1] === '' ) paragraph = [];
    paragraph.push(line);
    prose.push({ text: line, role: section, afterBlock: blocks.length - 1 });
  }
  blocks.forEach((b, k) => {
    const next = blocks[k + 1]?.line ?? lines.length;
    const rest: string[] = [];
    for (let i = b.end; i < next && !HEADING.test(lines[i]); i++) rest.push(lines[i]);
    b.after = rest.join('\n').trim();
  });
  return { title, blocks, prose };
}

/** A block's own part, as blockAt finds it: its language, code, origin and the line after it. */
type Found = Pick<IssueBlock, 'lang' | 'code' | 'origin' | 'end'>;

/** The code block starting at line `i`, if one does: fenced, bare prompt lines, indented, or several lines of inline code. */
function blockAt(lines: string[], i: number): Found | undefined {
  const fence = FENCE.exec(lines[i]);
  if (fence) {
    const close = new RegExp(`^[ \\t]{0,3}${fence[2][0] === '`' ? '`' : '~'}{${fence[2].length},}[ \\t]*$`);
    const indent = new RegExp(`^ {0,${fence[1].length}}`);
    const { code, end } = linesWhile(lines, i + 1, (l) => !close.test(l), (l) => l.replace(indent, ''));
    return { lang: (fence[3].trim().split(/[\s{,]/)[0] ?? '').toLowerCase(), code, origin: 'fenced', end: end + 1 };
  }
  if (PY_PROMPT.test(inlineCode(lines[i]) ?? lines[i])) {
    const found = linesWhile(lines, i, (l) => Boolean(l.trim()) && !FENCE.test(l) && !HEADING.test(l), (l) => inlineCode(l) ?? l);
    return { lang: 'pycon', ...found, origin: 'prompt-lines' };
  }
  if (/^( {4,}|\t)\S/.test(lines[i]) && (i === 0 || !lines[i - 1].trim()) && !/^\s*([-*+]|\d+[.)])\s/.test(lines[i - 1] ?? '')) {
    const indented = (l: string, j: number) => /^( {4,}|\t)/.test(l) || (!l.trim() && /^( {4,}|\t)\S/.test(lines[j + 1] ?? ''));
    return { lang: '', ...linesWhile(lines, i, indented, (l) => l.replace(/^( {4}|\t)/, '')), origin: 'indented' };
  }
  const codeLine = (l: string) => {
    const c = inlineCode(l);
    return c !== undefined && looksLikeCodeLine(c);
  };
  const found = linesWhile(lines, i, codeLine, (l) => inlineCode(l)!);
  return found.end - i > 1 ? { lang: '', ...found, origin: 'inline-lines' } : undefined;
}

/** Lines from `from` on while `holds`, each as `take` gives it, and the line where they stop. */
function linesWhile(lines: string[], from: number, holds: (l: string, j: number) => boolean, take: (l: string) => string): { code: string; end: number } {
  const body: string[] = [];
  let j = from;
  for (; j < lines.length && holds(lines[j], j); j++) body.push(take(lines[j]));
  return { code: body.join('\n'), end: j };
}

/** The code of a line that holds only inline code (`` `x = 1` ``). */
function inlineCode(line: string): string | undefined {
  return INLINE_ONLY.exec(line)?.[1];
}

/** Inline code broken over two lines (`` `x `` / `` ` ``) joined into one line. */
function joinBrokenCodeSpans(lines: string[]): string[] {
  const out: string[] = [];
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (FENCE.test(l)) inFence = !inFence;
    const ticks = (l.replace(/`{2,}/g, '').match(/`/g) ?? []).length;
    const next = lines[i + 1];
    if (!inFence && ticks % 2 === 1 && next !== undefined && !FENCE.test(next) && next.includes('`') && next.trim()) {
      out.push(`${l.trimEnd()}${next.trimStart()}`);
      i++;
    } else out.push(l);
  }
  return out;
}

/** An import, assignment or call: what an inline-code line of a script looks like. */
function looksLikeCodeLine(s: string): boolean {
  return /^(from \S+ import |import \S|const |let |var )|^[A-Za-z_$][\w$.]*\s*=[^=]|^[A-Za-z_$][\w$.]*\(.*\)\s*;?$/.test(s.trim());
}

/** Hedges that make a stated expectation a guess rather than a fact. */
export const HEDGE = /(?<![a-z])(or something|or some|something like|e\.g\.|for example|maybe|perhaps|probably|i think|i guess|i believe|might|could be|not sure|or similar|or whatever)\b|\?\s*$/i;
