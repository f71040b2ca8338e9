/**
 * Applies custom-format blocks to file contents in memory.
 *
 * - `rewrite` replaces the unit (function, method, class, describe/it/test block) named by the first
 *   definition in the block's code. Not found by exact name: a unique similar name, else the unit at
 *   the given line if the code resembles it, else the code is inserted as a new unit (all reported).
 * - `insert` adds the code at BOF (with the imports for import code, after the file's header and
 *   imports otherwise), at EOF, or at a line, snapped to the nearest boundary between units of a
 *   container the code belongs in (module, class body, describe body). A line that falls inside a
 *   unit without being clearly nearer to one boundary is refused, never guessed.
 * - Indentation is normalised to the target: the code is shifted (tabs expanded, units rescaled when
 *   consistent) to the indentation of the replaced unit or of the container's statements.
 */
import { languageForPath, loadLanguage, type Lang, type Structure, type Unit } from './structure.js';
import { bofInsertion, codeKinds, defaultUnit, describeUnit, dropTrailingProse, ensureNewFileText, family, firstDefinition, indentCode, insertAt, mapLine, prepareCode, snapLine, spliceLines, structureOf, type FileState, type Insertion, type PreparedCode } from './customPlace.js';
import type { BlockLocation, CustomBlock } from './customFormat.js';
import { codeSimilarity, detectIndentStyle, indentWidth, joinText, nameSimilarity, splitText, type IndentStyle } from './text.js';

/** Original content of a file, or null if it does not exist. */
export type ReadFile = (path: string) => string | null;

export interface FileChange {
  path: string;
  /** Null for a new file. */
  before: string | null;
  after: string;
}

export interface CustomApplyResult {
  changes: FileChange[];
  warnings: string[];
  errors: string[];
}


/** Applies blocks in order. Never throws for a bad block: errors are collected. */
export async function applyCustomBlocks(blocks: CustomBlock[], readFile: ReadFile): Promise<CustomApplyResult> {
  const warnings: string[] = [];
  const errors: string[] = [];
  const states = new Map<string, FileState>();
  const getState = (path: string): FileState => {
    let s = states.get(path);
    if (!s) {
      const before = readFile(path);
      s = { path, before, text: before === null ? ensureNewFileText([]) : splitText(before), edits: [], bofCursor: null, tree: null };
      states.set(path, s);
    }
    return s;
  };
  for (const [bi, block] of blocks.entries()) {
    const label = `block ${bi + 1} (${block.mode} ${block.path})`;
    try {
      const state = getState(block.path);
      const lang = languageForPath(block.path);
      if (lang) await loadLanguage(lang);
      const msg = applyBlock(state, block, lang);
      for (const w of msg.warnings) warnings.push(`${label}: ${w}`);
      if (msg.error) errors.push(`${msg.code ?? 'PATCH_DOES_NOT_APPLY'}: ${label}: ${msg.error}`);
    } catch (e) {
      errors.push(`PATCH_DOES_NOT_APPLY: ${label}: ${(e as Error).message}`);
    }
  }
  const changes: FileChange[] = [];
  for (const s of states.values()) {
    s.tree?.delete();
    s.tree = null;
    if (s.edits.length === 0) continue;
    const after = joinText(s.text);
    if (after !== s.before) changes.push({ path: s.path, before: s.before, after });
  }
  return { changes, warnings, errors };
}

interface BlockOutcome {
  warnings: string[];
  error?: string;
  code?: string;
}

/** What a block works with once its code is prepared for the file. */
interface BlockContext {
  state: FileState;
  block: CustomBlock;
  lang: Lang;
  code: PreparedCode;
  style: IndentStyle;
  /** The block's line, in the file's current coordinates. */
  hint: number | null;
  structure: Structure;
  warnings: string[];
}

function applyBlock(state: FileState, block: CustomBlock, lang: Lang | null): BlockOutcome {
  const warnings: string[] = [];
  const lines = state.text.lines;
  const style = detectIndentStyle(lines, defaultUnit(lang));
  let codeText = block.code;
  if (!block.terminated && lang) {
    const trimmed = dropTrailingProse(codeText, lang);
    if (trimmed !== null) {
      warnings.push(`dropped ${codeText.split('\n').length - trimmed.split('\n').length} trailing line(s) of prose from the unterminated block`);
      codeText = trimmed;
    }
  }
  const code = prepareCode(codeText, style.unit, lang);
  if (state.before === null && lines.length === 0) {
    if (block.mode === 'rewrite') warnings.push('the file does not exist; created it with the code');
    state.text.finalNewline = true;
    spliceLines(state, lines.length, 0, indentCode(code, 0, style));
    return { warnings };
  }
  const loc = block.location;
  const hint = loc.kind === 'line' ? mapLine(state, Math.max(0, loc.line - 1)) : null;
  if (!lang) return insertWithoutGrammar(state, block, code, style, hint, warnings);
  const structure = structureOf(state, lang);
  if (structure.hasErrors) warnings.push('the file has syntax errors; unit boundaries may be approximate');
  const ctx: BlockContext = { state, block, lang, code, style, hint, structure, warnings };
  return block.mode === 'rewrite' ? rewriteBlock(ctx) : insertBlock(ctx);
}

/** No grammar for the file: plain line-based insertion only. */
function insertWithoutGrammar(state: FileState, block: CustomBlock, code: PreparedCode, style: IndentStyle, hint: number | null, warnings: string[]): BlockOutcome {
  const lines = state.text.lines;
  const loc = block.location;
  if (block.mode === 'rewrite') return { warnings, error: `cannot rewrite in ${block.path}: no grammar for this file type (use insert)` };
  const body = indentCode(code, 0, style);
  let at = loc.kind === 'BOF' ? 0 : loc.kind === 'line' && hint !== null ? Math.min(hint, lines.length) : lines.length;
  if (loc.kind === 'line' && hint !== null && at < lines.length) {
    const w = indentWidth(lines[at], style.unit);
    body.splice(0, body.length, ...indentCode(code, w, style));
  }
  if (at === lines.length && lines.length > 0 && !state.text.finalNewline) state.text.finalNewline = true;
  at = Math.max(0, at);
  spliceLines(state, at, 0, body);
  return { warnings };
}

/** `rewrite`: the unit the code defines replaced, found by name, a similar name or the line; else the code inserted as new. */
function rewriteBlock(ctx: BlockContext): BlockOutcome {
  const { state, lang, code, style, hint, structure, warnings } = ctx;
  const lines = state.text.lines;
  const def = firstDefinition(code, lang);
  if (!def) return { warnings, error: 'the code has no function, class, method or describe/it/test block to rewrite' };
  const target = def.unit;
  const found = unitToRewrite(ctx, structure, target);
  if ('error' in found) return { warnings, error: found.error };
  const match = found.unit;
  if (!match) {
    // Most likely a new unit announced as a rewrite: insert it instead of overwriting something else.
    const place = hint !== null ? snapLine(structure, hint, codeKinds(code, lang), lang) : { ins: { container: structure.module, index: structure.module.children.length }, note: '' };
    if ('error' in place) return { warnings, error: `no ${target.kind} named "${target.name}" to rewrite, and inserting it failed: ${place.error}` };
    warnings.push(`no ${target.kind} named "${target.name}" to rewrite; inserted it as a new unit ${hint !== null ? `near line ${hint + 1}` : 'at EOF'}`);
    if (place.note) warnings.push(place.note);
    insertAt(state, lang, place.ins, code, style);
    return { warnings };
  }
  // Replace the span; keep the old decorators when the new code has none.
  let start = match.startLine;
  if (match.decorated && !target.decorated && lang === 'python') {
    start = match.defLine;
    warnings.push(`kept the decorators of ${describeUnit(match)}: the new code has none`);
  }
  if (hint !== null && (hint < match.startLine - 3 || hint > match.endLine + 3)) {
    const loc = ctx.block.location;
    warnings.push(`line ${loc.kind === 'line' ? loc.line : ''} does not point at ${describeUnit(match)}; matched by name`);
  }
  const body = indentCode(code, indentWidth(lines[start], style.unit), style);
  spliceLines(state, start, match.endLine - start + 1, body);
  return { warnings };
}

/** The unit a rewrite replaces: by exact name (several: the one at the line, else the most similar), else by a similar name or resemblance; undefined for none. */
function unitToRewrite(ctx: BlockContext, structure: Structure, target: Unit): { unit?: Unit } | { error: string } {
  const { hint, warnings } = ctx;
  const lines = ctx.state.text.lines;
  const newText = ctx.code.lines.join('\n');
  const similarity = (u: Unit) => codeSimilarity(newText, lines.slice(u.startLine, u.endLine + 1).join('\n'));
  const sameFamily = structure.units.filter((u) => family(u.kind) === family(target.kind));
  const exact = sameFamily.filter((u) => u.name === target.name);
  if (exact.length === 1) return { unit: exact[0] };
  if (exact.length > 1) {
    const atHint = hint !== null ? exact.filter((u) => u.startLine <= hint && hint <= u.endLine) : [];
    if (atHint.length >= 1) return { unit: atHint[atHint.length - 1] };
    const scored = exact.map((u) => ({ u, s: similarity(u) })).sort((a, b) => b.s - a.s);
    if (scored[0].s - scored[1].s < 0.1) return { error: `${exact.length} units are named "${target.name}" (lines ${exact.map((u) => u.startLine + 1).join(', ')}); give the line number of the one to rewrite` };
    warnings.push(`${exact.length} units are named "${target.name}"; chose ${describeUnit(scored[0].u)}, the most similar to the new code`);
    return { unit: scored[0].u };
  }
  // Fuzzy: a similar name, else the unit at the given line if the code resembles it.
  const similar = sameFamily
    .map((u) => ({ u, s: nameSimilarity(u.name, target.name) }))
    .filter((x) => x.s >= 0.75)
    .sort((a, b) => b.s - a.s);
  if (similar.length === 1 || (similar.length > 1 && similar[0].s - similar[1].s >= 0.1)) {
    warnings.push(`no ${target.kind} named "${target.name}"; matched the similar name ${describeUnit(similar[0].u)}`);
    return { unit: similar[0].u };
  }
  if (hint === null) {
    // No line to go by: a unit the new code clearly resembles (renamed by the model).
    const scored = sameFamily.map((u) => ({ u, s: similarity(u) })).sort((a, b) => b.s - a.s);
    if (scored.length > 0 && scored[0].s >= 0.6 && (scored.length === 1 || scored[0].s - scored[1].s >= 0.15)) {
      warnings.push(`no ${target.kind} named "${target.name}"; rewrote ${describeUnit(scored[0].u)}, which the code resembles`);
      return { unit: scored[0].u };
    }
    return {};
  }
  const near = sameFamily.filter((u) => u.startLine - 2 <= hint && hint <= u.endLine + 1).sort((a, b) => a.endLine - a.startLine - (b.endLine - b.startLine))[0];
  if (near && similarity(near) >= 0.5) {
    warnings.push(`no ${target.kind} named "${target.name}"; rewrote ${describeUnit(near)}, the definition at line ${hint + 1}, which the code resembles`);
    return { unit: near };
  }
  return {};
}

/** `insert`: at BOF (imports with the imports), at EOF, or at a line snapped to a boundary between units. */
function insertBlock(ctx: BlockContext): BlockOutcome {
  const { state, lang, code, style, hint, structure, warnings } = ctx;
  const loc = ctx.block.location;
  const kinds = codeKinds(code, lang);
  if (loc.kind === 'BOF') {
    if (state.bofCursor !== null && kinds.allImports) {
      const body = indentCode(code, 0, style);
      const at = state.bofCursor;
      spliceLines(state, at, 0, body);
      state.bofCursor = at + body.length;
      return { warnings };
    }
    const placed = insertAt(state, lang, bofInsertion(structure, state.text.lines, kinds.allImports), code, style, false);
    if (kinds.allImports) state.bofCursor = placed.bodyStart + placed.bodyLength;
    return { warnings };
  }
  if (loc.kind === 'EOF' || loc.kind === 'none' || (hint !== null && hint >= structure.lineCount)) {
    if (loc.kind === 'line') warnings.push(`line ${loc.line} is past the end of the file (${structure.lineCount} lines); inserted at EOF`);
    const ins: Insertion = { container: structure.module, index: structure.module.children.length };
    if (kinds.isMethod || (kinds.first?.kind === 'method' && lang !== 'python')) {
      return { warnings, error: 'a method cannot go at the end of the file; give a line inside the class' };
    }
    insertAt(state, lang, ins, code, style);
    return { warnings };
  }
  const snapped = snapLine(structure, hint ?? 0, kinds, lang);
  if ('error' in snapped) return { warnings, error: snapped.error };
  if (snapped.note) warnings.push(snapped.note);
  insertAt(state, lang, snapped.ins, code, style);
  return { warnings };
}

export type { BlockLocation };
