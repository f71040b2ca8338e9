/**
 * The product's shape: no function over 80 lines, no file in src/ over 450, measured with the
 * TypeScript compiler API (a function counts from its first line to its last, nested ones inside it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = process.cwd();
const MAX_FUNCTION_LINES = 80;
const MAX_FILE_LINES = 450;

/**
 * Offenders not yet split, to be removed from this list as they go (and the list with them). The
 * delivery side (app/, github/, jobs/, web/) is being split into jobs per kind in parallel.
 */
const SHRINKING_ALLOWLIST = new Set<string>([]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** A function's name as a reader finds it: its own, or the variable, property or class member it is given to. */
function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const own = (node as ts.FunctionLikeDeclaration).name;
  if (own) return own.getText(sf);
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) return parent.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  return `<anonymous@${line}>`;
}

interface Measure {
  file: string;
  lines: number;
  functions: Array<{ name: string; lines: number }>;
}

function measure(path: string): Measure {
  const text = readFileSync(path, 'utf8');
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const functions: Measure['functions'] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      functions.push({ name: nameOf(node, sf), lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { file: relative(ROOT, path).split(sep).join('/'), lines: text.replace(/\n$/, '').split('\n').length, functions };
}

describe('the shape of src/', () => {
  const measures = sources(join(ROOT, 'src')).map(measure);
  const tooLongFunctions = measures.flatMap((m) => m.functions.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => `${m.file}:${f.name} (${f.lines} lines)`));
  const tooLongFiles = measures.filter((m) => m.lines > MAX_FILE_LINES).map((m) => `${m.file} (${m.lines} lines)`);
  const allowed = (entry: string) => SHRINKING_ALLOWLIST.has(entry.replace(/ \(\d+ lines\)$/, ''));

  it('reads every product file', () => {
    expect(measures.length).toBeGreaterThan(150);
    expect(measures.reduce((n, m) => n + m.functions.length, 0)).toBeGreaterThan(1000);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(tooLongFunctions.filter((e) => !allowed(e))).toEqual([]);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    expect(tooLongFiles.filter((e) => !allowed(e))).toEqual([]);
  });

  it('keeps the allowlist to offenders that still exist', () => {
    const offenders = new Set([...tooLongFunctions, ...tooLongFiles].map((e) => e.replace(/ \(\d+ lines\)$/, '')));
    expect([...SHRINKING_ALLOWLIST].filter((e) => !offenders.has(e))).toEqual([]);
  });
});
