/**
 * Retrieval for zero-shot-plus (SWT-bench §4.3: BM25 over the repository, as SWE-bench's
 * retrieval baseline): the source files most relevant to the issue by BM25 (wink-bm25-text-search),
 * then the existing test files for that code (by name and by what they import).
 */
import { posix } from 'node:path';
import bm25 from 'wink-bm25-text-search';
import { ecosystemOfPath } from '../ecosystems/index.js';
import { isTestPath } from '../harness/testFiles.js';
import { listRepoFiles, readRepoFile } from './repoFiles.js';
import { fileHead } from './filePreview.js';

export interface RetrievedFile {
  path: string;
  score: number;
  content: string;
  truncated: boolean;
}

export interface RetrievalResult {
  sources: RetrievedFile[];
  tests: RetrievedFile[];
}

/** Lines of a project file shown: go.mod's module path, package.json's name and type come first. */
const PROJECT_FILE_LINES = 12;

const STOP = new Set([
  'the', 'and', 'for', 'with', 'that', 'this', 'from', 'are', 'was', 'but', 'not', 'you', 'have', 'has', 'when', 'what', 'which',
  'its', 'into', 'than', 'then', 'there', 'their', 'will', 'would', 'should', 'could', 'can', 'our', 'been', 'being', 'also',
  'def', 'self', 'return', 'import', 'const', 'let', 'var', 'function', 'true', 'false', 'none', 'null', 'undefined', 'if', 'else',
  'in', 'is', 'it', 'of', 'on', 'or', 'to', 'as', 'at', 'be', 'by', 'an', 'we', 'do', 'so', 'no',
]);

/** Code-aware tokens: identifiers whole and split on snake_case / camelCase, lower-cased. */
export function codeTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const word = m[0];
    const lower = word.toLowerCase();
    if (lower.length >= 2 && !STOP.has(lower)) out.push(lower);
    const parts = word
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[_\s]+/)
      .map((p) => p.toLowerCase())
      .filter((p) => p.length >= 2 && !STOP.has(p));
    if (parts.length > 1) out.push(...parts);
  }
  return out;
}

const pathText = (p: string) => p.replace(/[/._-]+/g, ' ');

/** Ranks files by BM25 against the query; [] when the library cannot index (fewer than 3 documents are padded). */
export function rankBm25(docs: Array<{ id: string; path: string; body: string }>, query: string, limit: number): Array<{ id: string; score: number }> {
  if (!docs.length) return [];
  const engine = bm25();
  engine.defineConfig({ fldWeights: { path: 3, body: 1 }, bm25Params: { k1: 1.2, b: 0.75, k: 1 } });
  engine.definePrepTasks([codeTokens]);
  for (const d of docs) engine.addDoc({ path: pathText(d.path), body: d.body }, d.id);
  // The library refuses to consolidate fewer than 3 documents.
  for (let i = docs.length; i < 3; i++) engine.addDoc({ path: '', body: '' }, `\u0000pad${i}`);
  engine.consolidate();
  return engine
    .search(query, limit + 3)
    .filter(([id]) => !String(id).startsWith('\u0000pad'))
    .slice(0, limit)
    .map(([id, score]) => ({ id: String(id), score }));
}

function stemOf(path: string): string {
  return posix.basename(path).replace(/\.(test|spec)(?=\.)/, '').replace(/\.[^.]+$/, '').replace(/^test_|_test$/g, '');
}

/** Does a test file's text import or name a source module? */
function testCovers(testPath: string, testText: string, source: string): boolean {
  const stem = stemOf(source);
  if (stem === '__init__' || stem === 'index') {
    const pkg = posix.basename(posix.dirname(source));
    return pkg !== '.' && new RegExp(`\\b${pkg}\\b`).test(testText);
  }
  if (stemOf(testPath) === stem) return true;
  const mod = source.replace(/\.[^.]+$/, '').replace(/^(src|lib)\//, '');
  const dotted = mod.split('/').join('.');
  if (source.endsWith('.py')) return new RegExp(`(from|import)\\s+[\\w.]*\\b${stem}\\b|${dotted.replace(/\./g, '\\.')}`).test(testText);
  return new RegExp(`['"][^'"]*\\b${stem}(\\.[cm]?[jt]sx?)?['"]`).test(testText);
}

/**
 * The most relevant source files for the issue, then existing tests for them, within a
 * character budget (sources first, tests get what is left but at least a third).
 */
export async function retrieve(repoDir: string, query: string, opts: { maxChars?: number; maxFiles?: number; maxTests?: number } = {}): Promise<RetrievalResult> {
  const maxChars = opts.maxChars ?? 60_000;
  const maxFiles = opts.maxFiles ?? 8;
  const maxTests = opts.maxTests ?? 3;
  // Code is what some ecosystem owns (Go, Rust, Java, C… as well as Python and JS/TS).
  const files = (await listRepoFiles(repoDir)).filter((f) => ecosystemOfPath(f) !== undefined);
  const texts = new Map<string, string>();
  await Promise.all(
    files.map(async (f) => {
      const t = await readRepoFile(repoDir, f, 400_000);
      if (t !== undefined) texts.set(f, t);
    }),
  );
  const sourcesAll = files.filter((f) => texts.has(f) && !isTestPath(f));
  const testsAll = files.filter((f) => texts.has(f) && isTestPath(f) && !/conftest\.py$/.test(f));
  const ranked = rankBm25(sourcesAll.map((p) => ({ id: p, path: p, body: texts.get(p)! })), query, maxFiles);

  const sourceBudget = Math.floor(maxChars * (testsAll.length ? 2 / 3 : 1));
  const sources: RetrievedFile[] = [];
  let used = 0;
  for (const r of ranked) {
    const content = texts.get(r.id)!;
    const left = sourceBudget - used;
    if (left < 500) break;
    const truncated = content.length > left;
    const kept = truncated ? content.slice(0, content.lastIndexOf('\n', left) + 1 || left) : content;
    sources.push({ path: r.id, score: r.score, content: kept, truncated });
    used += kept.length;
  }

  // Existing tests for that code: by name or import first, then BM25 among test files.
  const covering = testsAll.filter((t) => sources.some((s) => testCovers(t, texts.get(t)!, s.path)));
  const testRank = rankBm25(testsAll.map((p) => ({ id: p, path: p, body: texts.get(p)! })), query, maxTests * 2);
  const order = [...covering.sort((a, b) => (testRank.find((r) => r.id === b)?.score ?? 0) - (testRank.find((r) => r.id === a)?.score ?? 0)), ...testRank.map((r) => r.id)];
  const tests: RetrievedFile[] = [];
  for (const t of [...new Set(order)]) {
    if (tests.length >= maxTests) break;
    const content = texts.get(t)!;
    const left = maxChars - used;
    if (left < 500) break;
    const truncated = content.length > left;
    const kept = truncated ? content.slice(0, content.lastIndexOf('\n', left) + 1 || left) : content;
    tests.push({ path: t, score: testRank.find((r) => r.id === t)?.score ?? 0, content: kept, truncated });
    used += kept.length;
  }
  return { sources, tests };
}

/** The root files that name the project (Ecosystem.projectFile) of the ecosystems `files` are in, by their first lines. */
export async function projectFiles(repoDir: string, files: readonly RetrievedFile[]): Promise<RetrievedFile[]> {
  const named = new Set(files.flatMap((f) => ecosystemOfPath(f.path)?.projectFile ?? []));
  const out: RetrievedFile[] = [];
  for (const path of named) {
    const text = await readRepoFile(repoDir, path, 100_000);
    if (text !== undefined) out.push(fileHead({ path, score: 0, content: text, truncated: false }, PROJECT_FILE_LINES));
  }
  return out;
}
