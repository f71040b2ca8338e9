/**
 * What ships: `dist` (what `npm run build` emits), the npm package and the Docker image hold the
 * product and no benchmark code. bench/ is built apart (npm run bench:build, into dist-bench/).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = process.cwd();
const isBench = (path: string) => /^(bench|dist-bench)(\/|$)/.test(path);

/** The source files `npm run build` compiles, each with the relative modules it imports. */
function buildProgram(): { files: string[]; imports: Map<string, string[]> } {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(String(d.messageText)); } });
  if (!config) throw new Error('tsconfig.build.json did not parse');
  const program = ts.createProgram(config.fileNames, config.options);
  const files: string[] = [];
  const imports = new Map<string, string[]>();
  for (const sf of program.getSourceFiles()) {
    const rel = relative(ROOT, sf.fileName).split(sep).join('/');
    if (rel.startsWith('node_modules/') || sf.isDeclarationFile) continue;
    files.push(rel);
    imports.set(rel, sf.statements.filter(ts.isImportDeclaration).map((d) => (d.moduleSpecifier as ts.StringLiteral).text));
  }
  return { files, imports };
}

/** The paths the Dockerfile copies from the build context (not from an earlier stage). */
function dockerContextSources(): string[] {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  return lines
    .filter((l) => /^COPY\s/.test(l) && !/--from=/.test(l))
    .flatMap((l) => l.trim().split(/\s+/).slice(1, -1));
}

describe('no benchmark code ships', () => {
  const { files, imports } = buildProgram();

  it('npm run build compiles only src/, and no file of it imports bench/', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => !f.startsWith('src/'))).toEqual([]);
    const reachingBench = [...imports].filter(([, specs]) => specs.some((s) => /(^|\/)bench\//.test(s))).map(([f]) => f);
    expect(reachingBench).toEqual([]);
  });

  it('dist, once built, holds no benchmark output', () => {
    // The build empties dist first, so a benchmark emitted by an older layout cannot linger.
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.build).toMatch(/rmSync\('dist'/);
    if (existsSync(join(ROOT, 'dist'))) expect(existsSync(join(ROOT, 'dist', 'bench'))).toBe(false);
  });

  it('the npm package lists no benchmark files', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files.filter((f) => isBench(f.replace(/^!/, '')))).toEqual([]);
  });

  it('the Docker image copies no benchmark files from the context', () => {
    const sources = dockerContextSources();
    expect(sources).toEqual(expect.arrayContaining(['src', 'package.json']));
    const tracked = execFileSync('git', ['ls-files', '-z', '--', ...sources], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    expect(tracked.length).toBeGreaterThan(100);
    expect(tracked.filter(isBench)).toEqual([]);
    expect(tracked.filter((f) => f.endsWith('.ts') && /from '(\.\.\/)+bench\//.test(readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });
});
