/**
 * An answer that gives one test file in a fenced block without saying where it goes: it is put at
 * a new path beside the repository's own tests, named after one of them so that the ecosystem's
 * test-file rules (harness/testFiles.ts) see a test file. Language-blind: the path follows the
 * tests the repository has.
 */
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { ecosystemOfPath } from '../ecosystems/index.js';
import { isTestFile, isTestPath } from '../harness/testFiles.js';
import { detectFormat, fencedBlocks, parseWholeFiles } from '../patch/index.js';
import { listRepoFiles } from './repoFiles.js';
import { findModule } from './snippet/repoApi.js';

/** Fences that hold commands or output, never a test file. */
const NOT_CODE = /^(bash|sh|shell|console|terminal|text|txt|output|plaintext|log|diff|patch)$/i;

/** A new test file's path beside the repository's tests (in the folder that has the most), or undefined when it has none. */
export function newTestPath(files: readonly string[]): string | undefined {
  const tests = files.filter((f) => isTestFile(f)).sort();
  if (!tests.length) return undefined;
  const byDir = new Map<string, string[]>();
  for (const t of tests) byDir.set(posix.dirname(t), [...(byDir.get(posix.dirname(t)) ?? []), t]);
  const [dir, inDir] = [...byDir].sort((a, b) => b[1].length - a[1].length || a[0].length - b[0].length)[0]!;
  const existing = new Set(files);
  for (const template of inDir) {
    const name = posix.basename(template);
    const dot = name.indexOf('.', 1);
    const [stem, rest] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    // `test-swt-repro.js` for ava's `test-*.js`, beside a root `test.js`.
    for (const candidate of [`${stem}_swt_repro${rest}`, `swt_repro_${stem}${rest}`, `${stem}SwtRepro${rest}`, `SwtRepro${stem}${rest}`, `${stem}-swt-repro${rest}`]) {
      const path = dir === '.' ? candidate : `${dir}/${candidate}`;
      if (!existing.has(path) && isTestFile(path)) return path;
    }
  }
  return undefined;
}

const extensionOf = (path: string) => /\.[^./]+$/.exec(path)?.[0] ?? '';

/**
 * The answer, unchanged when it has a diff or a named test file; else its test file named at a
 * new test path: the largest code block when no block names its file, or the one new file it
 * names under a name the repository's runner would not run (`test_parse.go` for Go), when that
 * file is in the language of the repository's tests.
 */
export async function nameLooseTest(answer: string, repoDir: string): Promise<{ text: string; path?: string }> {
  const format = detectFormat(answer);
  if (format === 'files') return renameNamedTest(answer, repoDir);
  if (format !== 'unknown') return { text: answer };
  const blocks = fencedBlocks(answer).filter((b) => !NOT_CODE.test(b.info.split(/\s/)[0] ?? '') && b.body.trim().split('\n').length >= 3);
  const block = blocks.sort((a, b) => b.body.length - a.body.length)[0];
  if (!block) return { text: answer };
  const files = await listRepoFiles(repoDir);
  const path = newTestPath(files);
  if (!path) return { text: answer };
  return { text: wholeFile(path, tidied(path, block.body, repoDir, files) ?? block.body), path };
}

/** Relative module paths a JS/TS file imports or requires (`./index.js`, `../lib/a`). */
export function relativeImports(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]*)\1/gm)].map((m) => m[2]!);
}

/** Does `spec`, imported from directory `dir`, name a module the repository has? */
function resolves(dir: string, spec: string, files: readonly string[]): boolean {
  const target = posix.normalize(posix.join(dir, spec));
  return !target.startsWith('../') && findModule(files, target) !== undefined;
}

/**
 * A new JS/TS test file whose relative imports do not resolve where the model put it (small models
 * write `./index.js` from a folder of their own) goes where they all do: the repository's root or
 * its tests' folder, under its own name when that is a test file there, else the new test path.
 */
function placeByImports(file: { path: string; content: string }, files: readonly string[]): string | undefined {
  const specs = relativeImports(file.content);
  const have = new Set(files);
  if (!specs.length || have.has(file.path) || !/\.[cm]?[jt]sx?$/.test(file.path) || specs.every((s) => resolves(posix.dirname(file.path), s, files))) return undefined;
  const fallback = newTestPath(files);
  for (const dir of [...new Set(['.', ...(fallback ? [posix.dirname(fallback)] : [])])]) {
    if (!specs.every((s) => resolves(dir, s, files))) continue;
    const own = dir === '.' ? posix.basename(file.path) : `${dir}/${posix.basename(file.path)}`;
    if (!have.has(own) && isTestFile(own)) return own;
    if (fallback && posix.dirname(fallback) === dir) return fallback;
  }
  return undefined;
}

/** A new test file as its ecosystem tidies one a model wrote (Ecosystem.tidyNewTest), else as written. */
function tidied(path: string, content: string, repoDir: string, files: readonly string[]): string | undefined {
  const have = new Set(files);
  const read = (p: string) => (have.has(p) ? readFileSync(join(repoDir, p), 'utf8') : undefined);
  return have.has(path) ? undefined : ecosystemOfPath(path)?.tidyNewTest?.({ path, content }, read);
}

const wholeFile = (path: string, content: string) => `${path}\n\`\`\`\n${content}${content.endsWith('\n') ? '' : '\n'}\`\`\`\n`;

async function renameNamedTest(answer: string, repoDir: string): Promise<{ text: string; path?: string }> {
  const named = parseWholeFiles(answer);
  const files = await listRepoFiles(repoDir);
  if (named.some((f) => isTestPath(f.path))) {
    if (named.length !== 1) return { text: answer };
    const moved = placeByImports(named[0]!, files);
    const path = moved ?? named[0]!.path;
    const content = tidied(path, named[0]!.content, repoDir, files);
    return moved || content !== undefined ? { text: wholeFile(path, content ?? named[0]!.content), path } : { text: answer };
  }
  const path = newTestPath(files);
  const existing = new Set(files);
  const file = path ? named.filter((f) => !existing.has(f.path) && extensionOf(f.path) === extensionOf(path)) : [];
  if (!path || file.length !== 1) return { text: answer };
  return { text: wholeFile(path, tidied(path, file[0]!.content, repoDir, files) ?? file[0]!.content), path };
}
