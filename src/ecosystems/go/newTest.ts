import { posix } from 'node:path';
import { regexEscape } from '../command.js';

/**
 * A new Go test file as small models write it, made to build as they meant (each step is a compile
 * error Go gives for sure, never a change of what the test checks):
 * - it declares the package of its folder and also imports that package by its module path
 *   (`package semver` beside `import ".../semver/v3"`: an import cycle), or calls that package
 *   by its name with no import (`semver.NewConstraint` in `package semver`): it becomes the external
 *   test package (`package semver_test`), importing its folder's package;
 * - a standard-library import it never uses is left out (`"fmt" imported and not used`).
 * The nearest go.mod names the module. Undefined when nothing changes. Pure.
 */
export function tidyGoTest(file: { path: string; content: string }, readFile: (path: string) => string | undefined): string | undefined {
  let code = file.content;
  const clause = /^package\s+(\w+)[ \t]*$/m.exec(code);
  const own = clause && !clause[1]!.endsWith('_test') ? ownImportPath(posix.dirname(file.path), readFile) : undefined;
  if (clause && own) {
    const name = clause[1]!;
    const imported = importPaths(code).includes(own);
    const qualified = new RegExp(`\\b${name}\\.[A-Z]`).test(withoutImports(code));
    if (imported || (qualified && !importNames(code).includes(name))) {
      code = code.replace(clause[0], `package ${name}_test`);
      if (!imported) code = addImport(code, own);
    }
  }
  code = withoutUnusedStdImports(code);
  return code === file.content ? undefined : code;
}

/** The import path of a folder's package: the nearest go.mod's module plus the folder below it. */
function ownImportPath(folder: string, readFile: (path: string) => string | undefined): string | undefined {
  for (let dir = folder; ; dir = posix.dirname(dir)) {
    const goMod = readFile(dir === '.' ? 'go.mod' : `${dir}/go.mod`);
    if (goMod !== undefined) {
      const module = /^module\s+"?([^\s"]+)"?/m.exec(goMod)?.[1];
      const below = dir === '.' ? folder : folder.slice(dir.length + 1);
      return module && (below && below !== '.' ? `${module}/${below}` : module);
    }
    if (dir === '.' || dir === '/') return undefined;
  }
}

/** The import specs of a Go file, single and in blocks: alias ('' when none), path, and the line as written. */
function importSpecs(code: string): Array<{ alias: string; path: string; line: string }> {
  const lines = [
    ...[...code.matchAll(/^import\s*\(([^)]*)\)/gm)].flatMap((m) => m[1]!.split('\n')),
    ...[...code.matchAll(/^import\s+([^(\n][^\n]*)$/gm)].map((m) => m[0]),
  ];
  return lines.flatMap((line) => {
    const m = /^\s*(?:import\s+)?([\w.]+\s+)?"([^"\n]+)"\s*(\/\/.*)?$/.exec(line);
    return m ? [{ alias: (m[1] ?? '').trim(), path: m[2]!, line }] : [];
  });
}

/** The code with its import declarations taken out: where a package's use is looked for. */
const withoutImports = (code: string) => code.replace(/^import[^\n]*$|^import\s*\([^)]*\)/gm, '');

const importPaths = (code: string) => importSpecs(code).map((s) => s.path);
/** The names imports bind: an alias, else the path's last element (a major version suffix skipped). */
const packageName = (path: string) => path.split('/').filter((p) => !/^v\d+$/.test(p)).pop()!;
const importNames = (code: string) => importSpecs(code).map((s) => s.alias || packageName(s.path));

function addImport(code: string, path: string): string {
  const block = /^import\s*\(\n/m.exec(code);
  if (block) return code.replace(block[0], `${block[0]}\t"${path}"\n`);
  return code.replace(/^(package\s+\w+[ \t]*\n)/m, `$1\nimport "${path}"\n`);
}

/** Standard-library imports (no dot in the first element, so the name is the last) that nothing uses, left out. */
function withoutUnusedStdImports(code: string): string {
  const body = withoutImports(code);
  let out = code;
  for (const s of importSpecs(code)) {
    if (s.alias || s.path.split('/')[0]!.includes('.') || new RegExp(`\\b${regexEscape(packageName(s.path))}\\.`).test(body)) continue;
    out = out.replace(`${s.line}\n`, '');
  }
  // An import block left empty goes too.
  return out.replace(/^import\s*\(\s*\)\n\n?/m, '');
}
