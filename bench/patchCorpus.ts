/**
 * Corpus of model-like edits for the patch robustness benchmark, generated (seeded) from the real
 * test files of the example repositories in ../shared/examples.
 *
 * Each case is a base edit (rewrite a unit; insert a new unit at a line, at EOF, an import at BOF;
 * create a new file) with one kind of damage, expressed both as a unified diff and as custom-format
 * blocks, plus the intended resulting files.
 *
 * Damage, per format:
 * - correct: none.
 * - wrong-line-numbers: unified: every hunk header shifted by 5-40 lines (±2 jitter per hunk).
 *   custom: rewrite lines moved 5-60 lines away; EOF given as a line past the end; insert lines
 *   moved 1-2 lines into the neighbouring unit (never onto another valid insertion point, which
 *   would be indistinguishable from a correct instruction for another place); BOF unchanged.
 * - missing-context: unified: 1-3 context lines dropped at the top and/or bottom of each hunk, the
 *   header left as it was. custom: the location line is omitted from rewrite blocks (the format
 *   has no context; inserts keep their location).
 * - whitespace: both: CRLF line endings, trailing spaces/tabs on ~30% of lines, one level of
 *   leading spaces written as a tab on ~30% of indented lines.
 * - missing-end-diff: custom: the last `end diff` is missing. unified analogue, an unterminated
 *   diff: the last hunk loses its trailing context (stale counts) and the final newline.
 * - wrong-indentation: custom: the code's base indentation is wrong (column 0 for nested code,
 *   one level too deep for top-level code). unified: every line of every hunk shifted by one level.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cacheDir } from '../src/util/tempDirs.js';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { structuredPatch } from 'diff';
import { analyze, languageForPath, loadLanguage, stringInteriorLines, type Container, type Lang, type Structure, type Unit } from '../src/patch/structure.js';
import { detectIndentStyle, indentWidth, isBlank, leadingWhitespace } from '../src/patch/text.js';

export interface SourceFile {
  repo: string;
  path: string;
  content: string;
}

export const EDIT_KINDS = ['rewrite', 'insert-line', 'insert-eof', 'insert-bof', 'new-file'] as const;
export type EditKind = (typeof EDIT_KINDS)[number];
export const DAMAGE_KINDS = ['correct', 'wrong-line-numbers', 'missing-context', 'whitespace', 'missing-end-diff', 'wrong-indentation'] as const;
export type DamageKind = (typeof DAMAGE_KINDS)[number];

export interface CorpusCase {
  id: string;
  repo: string;
  edit: EditKind;
  damage: DamageKind;
  /** Original content of every touched path (null: absent). */
  originals: Record<string, string | null>;
  /** Intended content of every touched path. */
  intended: Record<string, string>;
  unified: string;
  custom: string;
}

/** The repository root: the nearest folder above this module (bench/ or dist-bench/bench/) with a package.json. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** ../shared/examples relative to the repository root, or SWT_EXAMPLES_DIR. Throws a clear error if absent. */
export function resolveExamplesDir(): string {
  const dir = process.env.SWT_EXAMPLES_DIR ? resolve(process.env.SWT_EXAMPLES_DIR) : resolve(repoRoot(), '..', 'shared', 'examples');
  if (!existsSync(join(dir, 'instances.jsonl'))) {
    throw new Error(
      `examples not found: ${join(dir, 'instances.jsonl')} does not exist. The patch benchmark and examples suite read the real test files of ../shared/examples; set SWT_EXAMPLES_DIR to its location.`,
    );
  }
  return dir;
}

interface Instance {
  instance_id: string;
  repo: string;
  base_commit: string;
  test_patch: string;
}

/** The real test files touched by each instance's golden test patch, at its base commit. */
export function loadExampleTestFiles(examplesDir = resolveExamplesDir()): SourceFile[] {
  const out: SourceFile[] = [];
  const lines = readFileSync(join(examplesDir, 'instances.jsonl'), 'utf8').split('\n').filter((l) => l.trim());
  for (const l of lines) {
    const inst = JSON.parse(l) as Instance;
    const name = inst.repo.replace('/', '__');
    const bundle = join(examplesDir, 'repos', `${name}.bundle`);
    if (!existsSync(bundle)) throw new Error(`missing bundle ${bundle}`);
    const key = createHash('sha1').update(bundle).digest('hex').slice(0, 10);
    // A clone kept between runs, in swt-bot's cache (not the temp dir, which must end as it began).
    const clone = join(cacheDir(), 'bench-examples', key, name + '.git');
    if (!existsSync(join(clone, 'HEAD'))) {
      mkdirSync(dirname(clone), { recursive: true });
      execFileSync('git', ['clone', '-q', '--bare', bundle, clone], { stdio: 'ignore' });
    }
    const paths = [...inst.test_patch.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]);
    for (const p of paths) {
      if (!languageForPath(p)) continue;
      try {
        const content = execFileSync('git', ['--git-dir', clone, 'show', `${inst.base_commit}:${p}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
        out.push({ repo: inst.repo, path: p, content });
      } catch {
        // new in the test patch: not a file to edit
      }
    }
  }
  return out;
}

/** mulberry32 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

interface BlockSpec {
  path: string;
  mode: 'rewrite' | 'insert';
  loc: { kind: 'line'; line: number } | { kind: 'EOF' } | { kind: 'BOF' };
  /** Code at its true indentation in the target. */
  code: string[];
  /** For wrong line numbers on inserts: 0-based lines the model might give instead. */
  nearLines?: number[];
}

interface BaseEdit {
  repo: string;
  edit: EditKind;
  path: string;
  original: string | null;
  intended: string;
  blocks: BlockSpec[];
  lang: Lang;
}

/** Changes one literal in a line: bumps a number, or extends a string. Null if none. */
function tweakLiteral(line: string, r: Rand): string | null {
  const nums = [...line.matchAll(/\b\d+\b/g)];
  const strs = [...line.matchAll(/(['"])([^'"\\]{1,40})\1/g)];
  if (nums.length > 0 && (strs.length === 0 || r() < 0.5)) {
    const m = pick(r, nums);
    return line.slice(0, m.index) + String(Number(m[0]) + int(r, 1, 9)) + line.slice(m.index! + m[0].length);
  }
  if (strs.length > 0) {
    const m = pick(r, strs);
    const q = m[1];
    return line.slice(0, m.index) + q + m[2] + '_x' + q + line.slice(m.index! + m[0].length);
  }
  return null;
}

const ASSERT_RE = /^\s*(assert\b|expect\(|\.expect\(|assert\.|self\.assert)/;

/** The unit's lines with one assertion added (a tweaked copy of an existing one) or a literal changed. */
function modifyUnit(lines: string[], r: Rand, name = ''): string[] | null {
  if (lines.length < 3) return null;
  // Never the line holding the unit's name: a rewrite keeps the name.
  const body = lines.map((l, i) => ({ l, i })).filter(({ l, i }) => i > 0 && i < lines.length - 1 && !isBlank(l) && !(name && l.includes(name.slice(0, 20))));
  const asserts = body.filter(({ l }) => ASSERT_RE.test(l) && /[)\d'"]\s*;?$/.test(l.trim()) && !/[([{,]\s*$/.test(l));
  if (asserts.length > 0 && r() < 0.6) {
    const a = pick(r, asserts);
    const t = tweakLiteral(a.l, r);
    if (t && t !== a.l) return [...lines.slice(0, a.i + 1), t, ...lines.slice(a.i + 1)];
  }
  for (let tries = 0; tries < 6 && body.length > 0; tries++) {
    const b = pick(r, body);
    const t = tweakLiteral(b.l, r);
    if (t && t !== b.l) return [...lines.slice(0, b.i), t, ...lines.slice(b.i + 1)];
  }
  return null;
}

/** A new unit cloned from `u`: renamed and with one literal changed. */
function cloneUnit(lines: string[], u: Unit, r: Rand, suffix: string): string[] | null {
  const src = lines.slice(u.startLine, u.endLine + 1);
  const defIdx = u.defLine - u.startLine;
  let renamed: string | null = null;
  const first = src[defIdx];
  if (u.kind === 'function' || u.kind === 'method' || u.kind === 'class') {
    const re = new RegExp(`\\b${u.name.replace(/[$]/g, '\\$')}\\b`);
    if (re.test(first)) renamed = first.replace(re, `${u.name}_${suffix}`);
  } else if (u.kind === 'test' || u.kind === 'describe') {
    const m = /(['"`])((?:(?!\1).)*)\1/.exec(first);
    if (m) renamed = first.slice(0, m.index) + m[1] + m[2] + ` (${suffix})` + m[1] + first.slice(m.index + m[0].length);
  }
  if (!renamed || renamed === first) return null;
  const out = src.slice();
  out[defIdx] = renamed;
  return modifyUnit(out, r, u.name) ?? out;
}

function dedent(code: string[]): string[] {
  const w = Math.min(...code.filter((l) => !isBlank(l)).map((l) => leadingWhitespace(l).length));
  return code.map((l) => (isBlank(l) ? '' : l.slice(Math.min(w, leadingWhitespace(l).length))));
}

function blanksBetween(lines: string[], a: number, b: number): number {
  let n = 0;
  for (let i = a; i < b; i++) if (isBlank(lines[i])) n++;
  return n;
}

function gaps(c: Container): { from: number; to: number }[] {
  const out: { from: number; to: number }[] = [];
  const n = c.children.length;
  if (n === 0) return out;
  out.push({ from: Math.min(c.bodyStart, c.children[0].leadStart), to: c.children[0].leadStart });
  for (let i = 1; i < n; i++) out.push({ from: c.children[i - 1].endLine + 1, to: c.children[i].leadStart });
  out.push({ from: c.children[n - 1].endLine + 1, to: Math.max(c.children[n - 1].endLine + 1, c.bodyEnd) });
  return out;
}

function inAnyGap(s: Structure, line: number): boolean {
  return s.containers.some((c) => c.insertable && gaps(c).some((g) => g.from <= line && line <= g.to));
}

function isDef(u: Unit): boolean {
  return ['function', 'method', 'class', 'describe', 'test'].includes(u.kind);
}

function join_(lines: string[]): string {
  return lines.join('\n') + '\n';
}

function baseEdits(file: SourceFile, lang: Lang, r: Rand, count: number): BaseEdit[] {
  const text = file.content;
  const lines = text.replace(/\n$/, '').split('\n');
  const s = analyze(text, lang);
  const out: BaseEdit[] = [];
  const used = new Set<string>();
  const py = lang === 'python';
  const weights: [EditKind, number][] = [
    ['rewrite', 0.35],
    ['insert-line', 0.3],
    ['insert-eof', 0.15],
    ['insert-bof', 0.1],
    ['new-file', 0.1],
  ];
  let guard = 0;
  while (out.length < count && guard++ < count * 40) {
    let x = r();
    let kind: EditKind = 'rewrite';
    for (const [k, w] of weights) {
      if (x < w) {
        kind = k;
        break;
      }
      x -= w;
    }
    const e = makeEdit(kind);
    if (!e) continue;
    // A tweak must not break the code (the intended file has to be valid).
    if (!s.hasErrors && analyze(e.intended, lang).hasErrors) continue;
    const key = e.edit + ':' + e.intended.length + ':' + e.blocks.map((b) => (b.loc.kind === 'line' ? b.loc.line : b.loc.kind)).join(',');
    if (used.has(key)) continue;
    used.add(key);
    out.push(e);
  }
  return out;

  function makeEdit(kind: EditKind): BaseEdit | null {
    // This file, changed into `intended` by one block.
    const fileEdit = (intended: string[], block: Omit<BlockSpec, 'path'>): BaseEdit => ({
      repo: file.repo,
      edit: kind,
      path: file.path,
      original: text,
      intended: join_(intended),
      lang,
      blocks: [{ path: file.path, ...block }],
    });
    const defs = s.units.filter((u) => isDef(u) && u.endLine - u.startLine <= 60 && u.endLine - u.startLine >= 2);
    if (kind === 'rewrite') {
      if (defs.length === 0) return null;
      const u = pick(r, defs);
      const old = lines.slice(u.startLine, u.endLine + 1);
      const neu = modifyUnit(old, r, u.name);
      if (!neu) return null;
      const intended = [...lines.slice(0, u.startLine), ...neu, ...lines.slice(u.endLine + 1)];
      return fileEdit(intended, { mode: 'rewrite', loc: { kind: 'line', line: u.defLine + 1 }, code: neu });
    }
    if (kind === 'insert-line') {
      // Between two definitions of a container, or at the end of a class/describe body.
      const conts = s.containers.filter((c) => c.insertable && c.children.filter(isDef).length >= 2);
      if (conts.length === 0) return null;
      const c = pick(r, conts);
      const n = c.children.length;
      const idx = int(r, 1, c.kind === 'module' ? n - 1 : n);
      const prev = c.children[idx - 1];
      const next = c.children[idx];
      const model = [prev, next].filter((u): u is Unit => !!u && isDef(u) && u.endLine - u.startLine <= 40);
      if (model.length === 0) return null;
      const src = pick(r, model);
      const unit = cloneUnit(lines, src, r, 'regression');
      if (!unit) return null;
      // Re-indent the clone to the container's indentation (it already is: same container).
      let intended: string[];
      let at: number;
      if (next) {
        const g = idx >= 1 ? blanksBetween(lines, prev.endLine + 1, next.leadStart) : 1;
        at = next.leadStart;
        intended = [...lines.slice(0, at), ...unit, ...new Array<string>(g).fill(''), ...lines.slice(at)];
      } else {
        const g = n >= 2 ? blanksBetween(lines, c.children[n - 2].endLine + 1, c.children[n - 1].leadStart) : 1;
        at = prev.endLine + 1;
        intended = [...lines.slice(0, at), ...new Array<string>(g).fill(''), ...unit, ...lines.slice(at)];
      }
      // The line the code should start at (1-based), and lines 1-2 into a neighbouring unit.
      const gapFrom = prev.endLine + 1;
      const gapTo = next ? next.leadStart : Math.max(prev.endLine + 1, c.bodyEnd);
      const near: number[] = [];
      for (const l of [prev.endLine, prev.endLine - 1, next ? next.leadStart + 1 : -1, next ? next.leadStart + 2 : -1]) {
        if (l < 0 || l >= lines.length || (l >= gapFrom && l <= gapTo)) continue;
        const inPrev = l >= prev.leadStart && l <= prev.endLine;
        const inNext = next ? l >= next.leadStart && l <= next.endLine : false;
        if ((inPrev || inNext) && !inAnyGap(s, l)) near.push(l);
      }
      return fileEdit(intended, { mode: 'insert', loc: { kind: 'line', line: (next ? next.leadStart : gapTo) + 1 }, code: unit, nearLines: near });
    }
    if (kind === 'insert-eof') {
      const top = s.module.children.filter((u) => isDef(u) && u.endLine - u.startLine <= 40);
      let unit: string[] | null = null;
      if (top.length > 0) {
        unit = cloneUnit(lines, pick(r, top), r, 'eof');
      } else {
        // Only big top-level units (one describe): append a new describe with a cloned test.
        const tests = s.units.filter((u) => u.kind === 'test' && u.endLine - u.startLine <= 30);
        if (tests.length === 0) return null;
        const t = pick(r, tests);
        const body = cloneUnit(lines, t, r, 'eof');
        if (!body) return null;
        const d = dedent(body);
        const q = lang === 'python' ? '"' : lines.some((l) => /describe\("/.test(l)) ? '"' : "'";
        const fn = lines.some((l) => /describe\([^)]*\(\) =>/.test(l)) ? '() => {' : 'function () {';
        const style = detectIndentStyle(lines, 2);
        unit = [`describe(${q}regression${q}, ${fn}`, ...d.map((l) => (l ? ' '.repeat(style.unit) + l : '')), '})'];
      }
      if (!unit) return null;
      unit = dedent(unit);
      const kids = s.module.children;
      const last = kids[kids.length - 1];
      const g = kids.length >= 2 ? blanksBetween(lines, kids[kids.length - 2].endLine + 1, last.leadStart) : 1;
      const intended = [...lines.slice(0, last.endLine + 1), ...new Array<string>(g).fill(''), ...unit, ...lines.slice(last.endLine + 1)];
      return fileEdit(intended, { mode: 'insert', loc: { kind: 'EOF' }, code: unit });
    }
    if (kind === 'insert-bof') {
      const imports = s.module.children.filter((u) => u.kind === 'import');
      if (imports.length === 0) return null;
      const first = imports[0];
      const esm = /^\s*import\b/.test(lines[first.startLine]);
      const candidates = py
        ? ['import os', 'import re', 'import sys', 'import json', 'from unittest import mock']
        : esm
          ? ['import * as fs from "node:fs";', 'import { inspect } from "node:util";', 'import assert from "node:assert";']
          : ["var os = require('os')", "var util = require('util')", "var zlib = require('zlib')"];
      const fresh = candidates.filter((c) => !lines.includes(c));
      if (fresh.length === 0) return null;
      const imp = pick(r, fresh);
      const intended = [...lines.slice(0, first.leadStart), imp, ...lines.slice(first.leadStart)];
      return fileEdit(intended, { mode: 'insert', loc: { kind: 'BOF' }, code: [imp] });
    }
    // new-file: a new test file holding a cloned unit (and the original's imports).
    const tops = defs.filter((u) => u.endLine - u.startLine <= 30);
    if (tops.length === 0) return null;
    const u = pick(r, tops);
    const unit = cloneUnit(lines, u, r, 'new');
    if (!unit) return null;
    const imports = s.module.children.filter((x) => x.kind === 'import').flatMap((x) => lines.slice(x.startLine, x.endLine + 1));
    const body = dedent(unit);
    const content = imports.length > 0 ? [...imports, '', ...(py ? [''] : []), ...body] : body;
    const ext = file.path.slice(file.path.lastIndexOf('.'));
    const dir = file.path.includes('/') ? file.path.slice(0, file.path.lastIndexOf('/') + 1) : '';
    const newPath = `${dir}${py ? 'test_regression_' : 'regression-'}${int(r, 100, 999)}${py ? '' : '.spec'}${ext}`.replace('.spec.spec', '.spec');
    return {
      repo: file.repo,
      edit: kind,
      path: newPath,
      original: null,
      intended: join_(content),
      lang,
      blocks: [{ path: newPath, mode: 'insert', loc: { kind: 'EOF' }, code: content }],
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Expressing a base edit with damage

interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

function hunksOf(e: BaseEdit): Hunk[] {
  const p = structuredPatch('a', 'b', e.original ?? '', e.intended, undefined, undefined, { context: 3 });
  return p.hunks.map((h) => ({
    oldStart: e.original === null ? 0 : h.oldLines === 0 ? h.oldStart : h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: h.lines.filter((l) => !l.startsWith('\\')),
  }));
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

function unifiedText(e: BaseEdit, hunks: Hunk[], opts: { fence: boolean; prose: boolean; finalNewline: boolean; eol: string }): string {
  const out: string[] = [];
  if (opts.prose) out.push('Here is a test that reproduces the issue:', '');
  if (opts.fence) out.push('```diff');
  out.push(e.original === null ? '--- /dev/null' : `--- a/${e.path}`, `+++ b/${e.path}`);
  for (const h of hunks) {
    out.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`);
    out.push(...h.lines);
  }
  if (opts.fence && opts.finalNewline) out.push('```');
  if (opts.prose && opts.finalNewline) out.push('', 'This test fails before the fix and passes after it.');
  return out.join(opts.eol) + (opts.finalNewline ? opts.eol : '');
}

function customText(blocks: { path: string; mode: string; loc: string | null; code: string[] }[], opts: { fence: boolean; prose: boolean; dropLastEnd: boolean; eol: string }): string {
  const out: string[] = [];
  if (opts.prose) out.push('I will add a test that reproduces the issue.', '');
  if (opts.fence) out.push('```custom-diff');
  blocks.forEach((b, k) => {
    out.push('diff', b.path, b.mode);
    if (b.loc !== null) out.push(b.loc);
    out.push(...b.code);
    if (!(opts.dropLastEnd && k === blocks.length - 1)) out.push('end diff');
  });
  if (opts.fence) out.push('```');
  if (opts.prose) out.push('', 'The test checks the behaviour described in the issue.');
  return out.join(opts.eol) + opts.eol;
}

function damageWhitespace(line: string, r: Rand, unit: number, prefixLen: number): string {
  let l = line;
  const prefix = l.slice(0, prefixLen);
  let body = l.slice(prefixLen);
  const ws = leadingWhitespace(body);
  if (ws.length >= unit && !ws.includes('\t') && r() < 0.3) body = '\t' + body.slice(unit);
  if (body.trim() !== '' && r() < 0.3) body += pick(r, [' ', '  ', '\t', ' \t']);
  l = prefix + body;
  return l;
}

function shiftIndent(line: string, delta: number): string {
  if (isBlank(line)) return line;
  const w = leadingWhitespace(line).length;
  return ' '.repeat(Math.max(0, w + delta)) + line.slice(w);
}

export function expressCase(e: BaseEdit, damage: DamageKind, r: Rand, id: string): CorpusCase {
  const style = detectIndentStyle((e.original ?? e.intended).split('\n'), e.lang === 'python' ? 4 : 2);
  const unit = style.unit;
  const fence = r() < 0.6;
  const prose = r() < 0.5;
  let eol = '\n';

  // Unified
  let hunks = hunksOf(e).map((h) => ({ ...h, lines: h.lines.slice() }));
  let finalNewline = true;
  let uFence = fence;
  if (damage === 'wrong-line-numbers' && e.original !== null) {
    const d = (r() < 0.5 ? -1 : 1) * int(r, 5, 40);
    hunks = hunks.map((h) => {
      const j = int(r, -2, 2);
      const os = Math.max(1, h.oldStart + d + j);
      return { ...h, oldStart: os, newStart: Math.max(1, h.newStart + d + j) };
    });
  } else if (damage === 'missing-context' && e.original !== null) {
    hunks = hunks.map((h) => {
      const lines = h.lines.slice();
      const mode = int(r, 0, 2); // 0 top, 1 bottom, 2 both
      const dropTop = mode !== 1 ? int(r, 1, 3) : 0;
      const dropBottom = mode !== 0 ? int(r, 1, 3) : 0;
      for (let k = 0; k < dropTop && lines.length > 0 && lines[0].startsWith(' '); k++) lines.shift();
      for (let k = 0; k < dropBottom && lines.length > 0 && lines[lines.length - 1].startsWith(' '); k++) lines.pop();
      return { ...h, lines };
    });
  } else if (damage === 'whitespace') {
    eol = '\r\n';
    hunks = hunks.map((h) => ({ ...h, lines: h.lines.map((l) => damageWhitespace(l, r, unit, 1)) }));
    // Tabs *mixed* with spaces: if every indented line got a tab, give one back its spaces.
    const indented = hunks.flatMap((h, hi) => h.lines.map((l, li) => ({ l, hi, li }))).filter(({ l }) => /^.[ \t]+\S/.test(l));
    if (indented.length >= 1 && indented.every(({ l }) => l[1] === '\t')) {
      const { hi, li } = indented[0];
      const l = hunks[hi].lines[li];
      hunks[hi].lines[li] = l[0] + ' '.repeat(unit) + l.slice(2);
    }
  } else if (damage === 'missing-end-diff' && e.original !== null) {
    const h = hunks[hunks.length - 1];
    const lines = h.lines.slice();
    while (lines.length > 1 && lines[lines.length - 1].startsWith(' ')) lines.pop();
    hunks[hunks.length - 1] = { ...h, lines };
    finalNewline = false;
    uFence = fence;
  } else if (damage === 'missing-end-diff') {
    finalNewline = false;
  } else if (damage === 'wrong-indentation') {
    hunks = hunks.map((h) => {
      const min = Math.min(...h.lines.filter((l) => l.slice(1).trim() !== '').map((l) => leadingWhitespace(l.slice(1)).length));
      const delta = min >= unit ? -unit : unit;
      return { ...h, lines: h.lines.map((l) => l[0] + shiftIndent(l.slice(1), delta)) };
    });
  }
  const unified = unifiedText(e, hunks, { fence: uFence, prose, finalNewline, eol });

  // Custom
  const lineCount = (e.original ?? '').split('\n').length - 1;
  const blocks = e.blocks.map((b) => {
    let loc: string | null = b.loc.kind === 'line' ? String(b.loc.line) : b.loc.kind;
    let code = b.code.slice();
    if (damage === 'wrong-line-numbers' && e.original !== null) {
      if (b.mode === 'rewrite' && b.loc.kind === 'line') {
        const d = (r() < 0.5 ? -1 : 1) * int(r, 5, 60);
        loc = String(Math.min(lineCount, Math.max(1, b.loc.line + d)));
      } else if (b.loc.kind === 'EOF') loc = String(lineCount + int(r, 1, 10));
      else if (b.loc.kind === 'line' && b.nearLines && b.nearLines.length > 0) loc = String(pick(r, b.nearLines) + 1);
    } else if (damage === 'missing-context' && b.mode === 'rewrite') {
      loc = null;
    } else if (damage === 'whitespace') {
      // Models re-type code, not the content of multi-line strings.
      const verbatim = stringInteriorLines(code.join('\n') + '\n', e.lang);
      code = code.map((l, i) => (verbatim.has(i) ? l : damageWhitespace(l, r, unit, 0)));
    } else if (damage === 'wrong-indentation') {
      const verbatim = stringInteriorLines(code.join('\n') + '\n', e.lang);
      const nonBlank = code.filter((l) => !isBlank(l));
      const base = nonBlank.length ? indentWidth(nonBlank[0], unit) : 0;
      const delta = base > 0 ? -base : unit;
      code = code.map((l, i) => (verbatim.has(i) ? l : shiftIndent(l, delta)));
    }
    return { path: b.path, mode: b.mode, loc, code };
  });
  if (damage === 'whitespace') eol = '\r\n';
  const custom = customText(blocks, { fence, prose, dropLastEnd: damage === 'missing-end-diff', eol: damage === 'whitespace' ? '\r\n' : '\n' });

  return {
    id,
    repo: e.repo,
    edit: e.edit,
    damage,
    originals: { [e.path]: e.original },
    intended: { [e.path]: e.intended },
    unified,
    custom,
  };
}

export interface CorpusOptions {
  seed?: number;
  /** Base edits per source file; each yields one case per damage kind. */
  editsPerFile?: number;
}

/** Generates the corpus: editsPerFile base edits per file × every damage kind. */
export async function generateCorpus(files: SourceFile[], opts: CorpusOptions = {}): Promise<CorpusCase[]> {
  const seed = opts.seed ?? 20240611;
  const per = opts.editsPerFile ?? 25;
  const cases: CorpusCase[] = [];
  for (const [fi, f] of files.entries()) {
    const lang = languageForPath(f.path);
    if (!lang) continue;
    await loadLanguage(lang);
    const r = rng(seed + fi * 7919);
    const edits = baseEdits(f, lang, r, per);
    for (const [ei, e] of edits.entries()) {
      for (const d of DAMAGE_KINDS) cases.push(expressCase(e, d, r, `${f.repo}:${f.path}#${ei}:${e.edit}:${d}`));
    }
  }
  return cases;
}
