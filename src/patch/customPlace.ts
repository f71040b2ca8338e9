/**
 * Where and how custom-format code goes into a file (customApply.ts applies the blocks): the file's
 * state as blocks edit it (lines, line map, incremental parse), the code prepared and re-indented,
 * the unit a line snaps to, the place an insertion takes.
 */
import type { Tree } from 'web-tree-sitter';
import { analyze, analyzeTree, DEFINITION_KINDS, parse, stringInteriorLines, unitAt, type Container, type Lang, type Structure, type Unit, type UnitKind } from './structure.js';
import { indentWidth, isBlank, leadingWhitespace, renderIndent, type IndentStyle, type SplitText } from './text.js';

export interface FileState {
  path: string;
  before: string | null;
  text: SplitText;
  /** Edits so far, in current coordinates, to map the model's (original) line numbers. */
  edits: { at: number; removed: number; added: number }[];
  /** Where the next BOF insertion goes (after earlier BOF insertions). */
  bofCursor: number | null;
  /** The last parse of this file, kept in step with edits for incremental re-parsing. */
  tree: Tree | null;
}

type Family = 'fn' | 'class' | 'describe' | 'test' | 'hook' | 'import' | 'statement';

export function family(k: UnitKind): Family {
  if (k === 'function' || k === 'method') return 'fn';
  return k;
}

const DEFAULT_GAP: Record<string, number> = { 'python:module': 2, 'python:class': 1 };

export function defaultUnit(lang: Lang | null): number {
  return lang === 'python' ? 4 : 2;
}

/** Maps a line number of the original file to current coordinates. */
export function mapLine(state: FileState, line: number): number {
  let l = line;
  for (const e of state.edits) {
    if (l >= e.at + e.removed) l += e.added - e.removed;
    else if (l > e.at) l = e.at;
  }
  return l;
}

/** Replaces `removed` lines at `at` with `newLines`, keeping the line map and the parse tree in step. */
export function spliceLines(state: FileState, at: number, removed: number, newLines: string[]): void {
  const lines = state.text.lines;
  if (state.tree) {
    let start = 0;
    for (let i = 0; i < at; i++) start += lines[i].length + 1;
    let oldEnd = start;
    for (let i = at; i < at + removed; i++) oldEnd += lines[i].length + 1;
    let newEnd = start;
    for (const l of newLines) newEnd += l.length + 1;
    state.tree.edit({
      startIndex: start,
      oldEndIndex: oldEnd,
      newEndIndex: newEnd,
      startPosition: { row: at, column: 0 },
      oldEndPosition: { row: at + removed, column: 0 },
      newEndPosition: { row: at + newLines.length, column: 0 },
    });
  }
  lines.splice(at, removed, ...newLines);
  recordEdit(state, at, removed, newLines.length);
}

/** The file's structure, re-parsing incrementally after edits. */
export function structureOf(state: FileState, lang: Lang): Structure {
  const text = state.text.lines.length === 0 ? '' : state.text.lines.join('\n') + '\n';
  const tree = parse(text, lang, state.tree);
  state.tree?.delete();
  state.tree = tree;
  return analyzeTree(tree, text, lang);
}

function recordEdit(state: FileState, at: number, removed: number, added: number) {
  state.edits.push({ at, removed, added });
  if (state.bofCursor !== null && at <= state.bofCursor) state.bofCursor += added - removed;
}

/** A block's code, prepared: LF lines with tabs expanded and the first line's indentation removed. */
export interface PreparedCode {
  lines: string[];
  /** Columns per level in the model's code. */
  unit: number;
  /** Lines inside multi-line strings: kept verbatim. */
  verbatim: Set<number>;
}

export function prepareCode(code: string, targetUnit: number, lang: Lang | null = null): PreparedCode {
  const raw = code.split('\n').map((l) => l.replace(/[ \t\r]+$/, ''));
  const verbatim = lang ? stringInteriorLines(raw.join('\n') + '\n', lang) : new Set<number>();
  // A tab is one level of the target file: models mix tabs into otherwise matching code.
  const widths = raw.map((l, i) => (isBlank(l) || verbatim.has(i) ? -1 : indentWidth(l, targetUnit)));
  const first = widths.find((w) => w >= 0) ?? 0;
  const lines = raw.map((l, i) => (verbatim.has(i) ? l : widths[i] < 0 ? '' : ' '.repeat(Math.max(0, widths[i] - first)) + l.slice(leadingWhitespace(l).length)));
  let unit = 0;
  for (const w of widths) if (w > first) unit = gcd(unit, w - first);
  return { lines, unit: unit === 0 ? targetUnit : unit, verbatim };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Re-indents prepared code (first line at column 0) so that it starts at `targetWidth`. */
export function indentCode(code: PreparedCode, targetWidth: number, style: IndentStyle): string[] {
  const rel = code.lines.map((l, i) => (l === '' || code.verbatim.has(i) ? -1 : leadingWhitespace(l).length));
  let scale = 1;
  // Rescale only a clean, different unit (2 vs 4 spaces); anything else keeps its relative layout.
  if (code.unit !== style.unit && [2, 3, 4, 8].includes(code.unit) && rel.every((w) => w < 0 || w % code.unit === 0)) scale = style.unit / code.unit;
  return code.lines.map((l, i) => (code.verbatim.has(i) ? l : rel[i] < 0 ? '' : renderIndent(targetWidth + rel[i] * scale, style) + l.slice(rel[i])));
}

/** The first definition in the block's code, by parsing it. */
export function firstDefinition(code: PreparedCode, lang: Lang): { unit: Unit; structure: Structure } | null {
  const text = code.lines.join('\n') + '\n';
  const s = analyze(text, lang);
  const def = s.module.children.find((u) => DEFINITION_KINDS.has(u.kind));
  if (def) return { unit: def, structure: s };
  if (lang !== 'python') {
    // A bare method (`name(args) { ... }`) only parses inside a class body.
    const wrapped = analyze(`class __SwtWrap__ {\n${text}}\n`, lang);
    const cls = wrapped.module.children[0];
    const m = cls?.body?.children.find((u) => u.kind === 'method');
    if (m) return { unit: { ...m, startLine: m.startLine - 1, endLine: m.endLine - 1, defLine: m.defLine - 1, leadStart: m.leadStart - 1 }, structure: wrapped };
  }
  return null;
}

/** Kind of what the code mainly is, for choosing where an insertion can go. */
export function codeKinds(code: PreparedCode, lang: Lang): { first: Unit | null; allImports: boolean; isMethod: boolean } {
  const s = analyze(code.lines.join('\n') + '\n', lang);
  const kids = s.module.children;
  const first = kids.find((u) => DEFINITION_KINDS.has(u.kind)) ?? kids[0] ?? null;
  const allImports = kids.length > 0 && kids.every((u) => u.kind === 'import');
  let isMethod = false;
  if (lang === 'python' && first && first.kind === 'function') isMethod = first.firstParam === 'self' || first.firstParam === 'cls';
  if (lang !== 'python' && (!first || first.kind === 'statement')) {
    const def = firstDefinition(code, lang);
    if (def && def.unit.kind === 'method') return { first: def.unit, allImports: false, isMethod: true };
  }
  return { first, allImports, isMethod };
}

/** Containers an inserted unit of this kind may go into. */
function allowedContainer(c: Container, kinds: ReturnType<typeof codeKinds>, lang: Lang): boolean {
  if (!c.insertable) return false;
  if (kinds.allImports) return c.kind === 'module';
  const k = kinds.first?.kind;
  if (lang === 'python') {
    if (kinds.isMethod) return c.kind === 'class';
    if (k === 'function' || k === 'class') return c.kind === 'module' || c.kind === 'class';
    return c.kind === 'module' || c.kind === 'class';
  }
  if (kinds.isMethod || k === 'method') return c.kind === 'class';
  if (k === 'test' || k === 'describe' || k === 'hook') return c.kind === 'module' || c.kind === 'describe';
  return c.kind === 'module' || c.kind === 'describe';
}

function blankCount(lines: string[], from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (isBlank(lines[i] ?? '')) n++;
  return n;
}

function defaultGap(lang: Lang | null, c: Container): number {
  return DEFAULT_GAP[`${lang}:${c.kind}`] ?? 1;
}

/** Blank lines between child i-1 and child i. */
function gapBefore(lines: string[], c: Container, i: number): number {
  const prev = c.children[i - 1];
  const cur = c.children[i];
  return blankCount(lines, prev.endLine + 1, cur.leadStart);
}

function indentOfContainer(c: Container, lines: string[], style: IndentStyle): number {
  if (c.childIndent !== null) return indentWidth(c.childIndent, style.unit);
  const ownerIndent = c.owner ? indentWidth(c.owner.indent, style.unit) : 0;
  void lines;
  return c.kind === 'module' ? 0 : ownerIndent + style.unit;
}

export interface Insertion {
  container: Container;
  /** Index of the child the code goes before; children.length means the end. */
  index: number;
}

/** Computes the new lines for inserting `code` into a container at a child boundary. */
export function insertAt(state: FileState, lang: Lang | null, ins: Insertion, code: PreparedCode, style: IndentStyle, separateFromImports = true): { bodyStart: number; bodyLength: number } {
  const lines = state.text.lines;
  const c = ins.container;
  const n = c.children.length;
  const width = indentOfContainer(c, lines, style);
  const body = indentCode(code, width, style);
  const blanks = (k: number) => new Array<string>(k).fill('');
  let at: number;
  let newLines: string[];
  if (n === 0) {
    at = c.kind === 'module' ? lines.length : c.bodyStart;
    const g = c.kind === 'module' && lines.length > 0 && !isBlank(lines[lines.length - 1]) ? defaultGap(lang, c) : 0;
    newLines = [...blanks(g), ...body];
  } else if (ins.index >= n) {
    const last = c.children[n - 1];
    at = last.endLine + 1;
    const g = n >= 2 ? gapBefore(lines, c, n - 1) : defaultGap(lang, c);
    newLines = [...blanks(g), ...body];
  } else {
    const next = c.children[ins.index];
    at = next.leadStart;
    let g = ins.index >= 1 ? gapBefore(lines, c, ins.index) : n >= 2 ? gapBefore(lines, c, 1) : defaultGap(lang, c);
    if (!separateFromImports && next.kind === 'import') g = 0;
    newLines = [...body, ...blanks(g)];
  }
  spliceLines(state, at, 0, newLines);
  const lead = newLines.indexOf(body[0]);
  return { bodyStart: at + Math.max(0, lead), bodyLength: body.length };
}

export function describeUnit(u: Unit): string {
  const label = u.kind === 'test' || u.kind === 'describe' || u.kind === 'hook' ? `${u.kind} "${u.name}"` : `${u.kind} ${u.name}`;
  return `${label} (line ${u.startLine + 1})`;
}

interface Boundary {
  container: Container;
  index: number;
  from: number;
  to: number;
}

function boundaries(c: Container): Boundary[] {
  const out: Boundary[] = [];
  const n = c.children.length;
  if (n === 0) {
    out.push({ container: c, index: 0, from: c.bodyStart, to: Math.max(c.bodyStart, c.bodyEnd) });
    return out;
  }
  out.push({ container: c, index: 0, from: Math.min(c.bodyStart, c.children[0].leadStart), to: c.children[0].leadStart });
  for (let i = 1; i < n; i++) out.push({ container: c, index: i, from: c.children[i - 1].endLine + 1, to: c.children[i].leadStart });
  out.push({ container: c, index: n, from: c.children[n - 1].endLine + 1, to: Math.max(c.children[n - 1].endLine + 1, c.bodyEnd) });
  return out;
}

/** Snaps a 0-based line to an insertion boundary, or explains why it cannot. */
export function snapLine(structure: Structure, line: number, kinds: ReturnType<typeof codeKinds>, lang: Lang): { ins: Insertion; note: string } | { error: string } {
  const cands: { b: Boundary; d: number }[] = [];
  for (const c of structure.containers) {
    if (!allowedContainer(c, kinds, lang)) continue;
    for (const b of boundaries(c)) {
      const d = line < b.from ? b.from - line : line > b.to ? line - b.to : 0;
      cands.push({ b, d });
    }
  }
  if (cands.length === 0) return { error: 'no place in the file can hold this code' };
  cands.sort((x, y) => x.d - y.d);
  const best = cands[0];
  const second = cands.find((c) => c.b !== best.b && !(c.b.container === best.b.container && c.b.index === best.b.index));
  const where = best.b.container.owner ? `in ${describeUnit(best.b.container.owner)}` : 'at module level';
  if (best.d === 0) {
    if (second && second.d === 0) return { error: `line ${line + 1} is ambiguous: it is a boundary both ${where} and ${second.b.container.owner ? `in ${describeUnit(second.b.container.owner)}` : 'at module level'}` };
    return { ins: { container: best.b.container, index: best.b.index }, note: '' };
  }
  const inside = unitAt(structure.units, line);
  const clear = best.d <= 3 && (!second || second.d >= 2 * best.d + 1);
  if (!clear) {
    return { error: `line ${line + 1} falls inside ${inside ? describeUnit(inside) : 'code'} and is not clearly nearer to one boundary` };
  }
  return {
    ins: { container: best.b.container, index: best.b.index },
    note: `line ${line + 1} falls inside ${inside ? describeUnit(inside) : 'code'}; inserted at the nearest boundary ${where} (line ${best.b.to + 1})`,
  };
}

function isHeaderStatement(u: Unit, lines: string[]): boolean {
  if (u.kind === 'import') return true;
  if (u.kind !== 'statement') return false;
  const t = lines[u.startLine].trim();
  return /^(['"`]|[rRbBuU]{1,2}["'])/.test(t) && u.endLine - u.startLine < 200;
}

/** The insertion point for BOF. */
export function bofInsertion(structure: Structure, lines: string[], allImports: boolean): Insertion {
  const kids = structure.module.children;
  if (allImports) {
    const firstImport = kids.findIndex((u) => u.kind === 'import' && !/__future__/.test(lines[u.startLine]));
    if (firstImport >= 0) return { container: structure.module, index: firstImport };
  }
  let i = 0;
  while (i < kids.length && isHeaderStatement(kids[i], lines)) i++;
  return { container: structure.module, index: i };
}

const PROSE_RE = /^[A-Z][A-Za-z'’]*(\s+\S+){2,}.*[.!:]?$/;

/**
 * For a block without `end diff`: if its code does not parse but does once a trailing tail that
 * starts like prose (a sentence) is dropped, returns the code without that tail.
 */
export function dropTrailingProse(code: string, lang: Lang): string | null {
  const lines = code.split('\n');
  if (!analyze(code + '\n', lang).hasErrors) return null;
  for (let cut = lines.length - 1; cut >= Math.max(1, lines.length - 12); cut--) {
    const tail = lines.slice(cut).filter((l) => !isBlank(l));
    if (tail.length === 0 || !PROSE_RE.test(tail[0].trim()) || /[;{}()[\],]$/.test(tail[0].trim())) continue;
    const head = lines.slice(0, cut);
    while (head.length > 0 && isBlank(head[head.length - 1])) head.pop();
    if (head.length === 0) return null;
    const text = head.join('\n');
    if (!analyze(text + '\n', lang).hasErrors) return text;
  }
  return null;
}

export function ensureNewFileText(lines: string[]): SplitText {
  return { lines, eol: '\n', finalNewline: true };
}
