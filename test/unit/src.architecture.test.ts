/**
 * The layers of src/ as docs/architecture.md's block draws them, held against every import the
 * code makes (read with the TypeScript compiler API: static, dynamic and type-only imports and
 * re-exports). An arrow may only go down the block; no folder cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve('src');
/** Not product code: leaves src/ (issue 18), so it has no place in the layers. */
const NOT_PRODUCT = new Set(['bench']);

/**
 * Arrows against the order that the code has today, each with its reason. The test fails when one
 * is no longer there, so this list only shrinks.
 */
const KNOWN: Array<{ from: string; to: string; why: string }> = [];

/** docs/architecture.md's block under "## Layers": one layer a line, its folders (`name/`) or files (`dir/file.ts`) before the description. */
export function layersOf(doc: string): string[][] {
  const section = doc.slice(doc.indexOf('## Layers'));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => l.split(/\s{2,}/)[0]!.trim().split(/\s+/).map((n) => n.replace(/\/$/, '')));
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every relative module a file names: import/export declarations, `import()` and `import type`. */
function importsOf(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteralLike(n.arguments[0])) out.push(n.arguments[0].text);
    if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) out.push(n.argument.literal.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out.filter((s) => s.startsWith('.'));
}

interface Arrow {
  from: string;
  to: string;
  /** src-relative paths of the importing and imported files. */
  file: string;
  target: string;
}

function arrows(fileNodes: Set<string>): Arrow[] {
  const nodeOf = (rel: string) => (fileNodes.has(rel) ? rel : rel.split('/')[0]!);
  const out: Arrow[] = [];
  for (const abs of tsFiles(ROOT)) {
    const file = relative(ROOT, abs);
    if (NOT_PRODUCT.has(file.split('/')[0]!)) continue;
    for (const spec of importsOf(abs)) {
      const target = relative(ROOT, resolve(dirname(abs), spec.replace(/\.js$/, '.ts')));
      const [from, to] = [nodeOf(file), nodeOf(target)];
      if (from !== to) out.push({ from, to, file, target });
    }
  }
  return out;
}

/** A cycle in the folder graph, as its path, or undefined. */
function cycleOf(edges: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n];
    if (state.get(n) === 'done') return undefined;
    state.set(n, 'open');
    path.push(n);
    for (const m of edges.get(n) ?? []) {
      const c = visit(m);
      if (c) return c;
    }
    path.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of edges.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return undefined;
}

const layers = layersOf(readFileSync('docs/architecture.md', 'utf8'));
const layerOf = new Map(layers.flatMap((names, i) => names.map((n) => [n, i] as const)));
const fileNodes = new Set([...layerOf.keys()].filter((n) => n.endsWith('.ts')));
const all = arrows(fileNodes);
const known = (a: Arrow) => KNOWN.some((k) => k.from === a.from && k.to === a.to);

describe('architecture: the docs/architecture.md order against the imports of src/', () => {
  it('the block names every folder of src/, and only folders and files that exist', () => {
    expect(layers.length).toBeGreaterThan(10);
    const folders = readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isDirectory() && !NOT_PRODUCT.has(e.name)).map((e) => e.name).sort();
    expect([...layerOf.keys()].filter((n) => !n.endsWith('.ts')).sort()).toEqual(folders);
    const files = tsFiles(ROOT).map((a) => relative(ROOT, a));
    for (const f of fileNodes) expect(files).toContain(f);
  });

  it('reads the imports (the composition root reaches the job table; the job kinds reach the pipeline)', () => {
    expect(all).toContainEqual(expect.objectContaining({ from: 'app', to: 'jobs', file: 'app/app.ts', target: 'jobs/index.ts' }));
    expect(all).toContainEqual(expect.objectContaining({ from: 'jobs', to: 'pipeline', file: 'jobs/validate.ts' }));
    expect(all.length).toBeGreaterThan(300);
  });

  it('every arrow goes down the block, but the known ones', () => {
    const against = all.filter((a) => !(layerOf.get(a.from)! < layerOf.get(a.to)!) && !known(a)).map((a) => `${a.file} → ${a.target} (${a.from} on line ${layerOf.get(a.from)! + 1}, ${a.to} on line ${layerOf.get(a.to)! + 1})`);
    expect(against).toEqual([]);
  });

  it('no folder cycle but the known arrows, and each known arrow is still there', () => {
    const edges = new Map<string, Set<string>>();
    for (const a of all.filter((x) => !known(x))) edges.set(a.from, (edges.get(a.from) ?? new Set()).add(a.to));
    expect(cycleOf(edges)).toBeUndefined();
    for (const k of KNOWN) expect(all.some((a) => a.from === k.from && a.to === k.to)).toBe(true);
  });

  it('github/types.ts imports nothing', () => {
    expect(importsOf(join(ROOT, 'github/types.ts'))).toEqual([]);
    expect(readFileSync(join(ROOT, 'github/types.ts'), 'utf8')).not.toMatch(/^import /m);
  });

  it('finds an arrow against the order and a cycle when there is one', () => {
    const edges = new Map([['jobs', new Set(['github'])], ['github', new Set(['jobs'])]]);
    expect(cycleOf(edges)).toEqual(['jobs', 'github', 'jobs']);
    expect(layersOf('# Architecture\n\n## Layers\n\n```\na/ b/    top\nc/x.ts   bottom\n```\n')).toEqual([['a', 'b'], ['c/x.ts']]);
  });
});

describe('size of the delivery folders', () => {
  const DELIVERY = ['app', 'webhooks', 'jobs', 'web', 'store', 'queue', 'github', 'settings'];
  const files = DELIVERY.flatMap((d) => tsFiles(join(ROOT, d)));

  it('no file over 450 lines', () => {
    const over = files.map((f) => [relative(ROOT, f), readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > 450);
    expect(over).toEqual([]);
  });

  it('no function over 80 lines', () => {
    const over: string[] = [];
    for (const f of files) {
      const sf = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isFunctionLike(n) && 'body' in n && n.body) {
          const lines = sf.getLineAndCharacterOfPosition(n.end).line - sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
          if (lines > 80) over.push(`${relative(ROOT, f)}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} (${lines} lines)`);
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    expect(over).toEqual([]);
  });
});

/** Where a file reads `process.env` as code (`process.env`, `process['env']`); the text of a script that runs in a container is a string, not a read. */
export function processEnvReads(text: string, file = 'x.ts'): number[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const isProcess = (e: ts.Expression) => ts.isIdentifier(e) && e.text === 'process';
  const visit = (n: ts.Node): void => {
    const read =
      (ts.isPropertyAccessExpression(n) && isProcess(n.expression) && n.name.text === 'env') ||
      (ts.isElementAccessExpression(n) && isProcess(n.expression) && ts.isStringLiteralLike(n.argumentExpression) && n.argumentExpression.text === 'env');
    if (read) lines.push(sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return lines;
}

describe('settings: the environment is read in src/settings/ only', () => {
  /** Besides settings/, each with its reason. */
  const ALLOWED: Record<string, string> = {
    'util/secrets.ts': 'scans every variable for secret values to scrub from logs and errors; it sits below settings/, which reports through util/errors.ts',
  };
  /**
   * Files whose text holds JavaScript that runs inside the container and reads the container's own
   * environment (`grep process.env src` finds them): strings, not reads of the host's.
   */
  const CONTAINER_SCRIPTS = ['coverage/v8Scripts.ts', 'ecosystems/node/jasmine.ts', 'ecosystems/node/roundsHookCommon.ts', 'ecosystems/node/uvuHook.ts'];
  const files = tsFiles(ROOT).map((a) => relative(ROOT, a)).filter((f) => !NOT_PRODUCT.has(f.split('/')[0]!));

  it('tells a read from the text of a container script', () => {
    const sample = ['const script = `var out = process.env.${NAME};`;', "const s = 'process.env.X';", 'const a = process.env.A;', "const b = process['env'];"].join('\n');
    expect(processEnvReads(sample)).toEqual([3, 4]);
  });

  it('no file outside src/settings/ reads process.env (but the allowed ones)', () => {
    const readers = files.filter((f) => processEnvReads(readFileSync(join(ROOT, f), 'utf8'), f).length > 0);
    expect(readers.filter((f) => !f.startsWith('settings/') && !(f in ALLOWED))).toEqual([]);
    expect(readers).toContain('settings/index.ts');
    for (const f of Object.keys(ALLOWED)) expect(readers).toContain(f);
  });

  it('grep process.env src finds settings/, the allowed files and the container scripts only', () => {
    const grep = files.filter((f) => readFileSync(join(ROOT, f), 'utf8').includes('process.env'));
    expect(grep.filter((f) => !f.startsWith('settings/') && !(f in ALLOWED) && !CONTAINER_SCRIPTS.includes(f))).toEqual([]);
    // Each container script still holds such text, and none reads the host's environment.
    for (const f of CONTAINER_SCRIPTS) expect([f, grep.includes(f), processEnvReads(readFileSync(join(ROOT, f), 'utf8'), f)]).toEqual([f, true, []]);
  });
});
