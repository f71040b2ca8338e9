import { posix } from 'node:path';

/**
 * A new Go test file that declares the package of its folder and also imports that package by its
 * module path (small models write `package semver` beside `import "github.com/Masterminds/semver/v3"`):
 * an import cycle, so it never builds. As the external test package (`package semver_test`) it
 * does, and its qualified calls mean what the model meant. The nearest go.mod names the module.
 * Undefined when the file is not such a test. Pure.
 */
export function externalTestPackage(file: { path: string; content: string }, readFile: (path: string) => string | undefined): string | undefined {
  const clause = /^package\s+(\w+)[ \t]*$/m.exec(file.content);
  if (!clause || clause[1]!.endsWith('_test')) return undefined;
  const folder = posix.dirname(file.path);
  for (let dir = folder; ; dir = posix.dirname(dir)) {
    const goMod = readFile(dir === '.' ? 'go.mod' : `${dir}/go.mod`);
    if (goMod !== undefined) {
      const module = /^module\s+"?([^\s"]+)"?/m.exec(goMod)?.[1];
      const below = dir === '.' ? folder : folder.slice(dir.length + 1);
      const own = below && below !== '.' ? `${module}/${below}` : module;
      if (!module || !importPaths(file.content).includes(own!)) return undefined;
      return file.content.replace(clause[0], `package ${clause[1]}_test`);
    }
    if (dir === '.' || dir === '/') return undefined;
  }
}

/** The import paths of a Go file: single imports and import blocks, aliases and all. */
function importPaths(code: string): string[] {
  const specs = [...code.matchAll(/^import\s*\(([^)]*)\)/gm)].map((m) => m[1]!).join('\n') + '\n' + [...code.matchAll(/^import\s+([^(\n][^\n]*)$/gm)].map((m) => m[1]!).join('\n');
  return [...specs.matchAll(/"([^"\n]+)"/g)].map((m) => m[1]!);
}
