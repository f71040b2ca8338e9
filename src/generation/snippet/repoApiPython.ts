/**
 * The Python side of the repository's own API (repoApi.ts reads it): its top-level packages and
 * modules, the names they define or re-export, and how a name the issue uses resolves through them.
 */
import { posix } from 'node:path';
import { mostTestsDir, type RepoView } from './repoApi.js';
import { isTestFile } from '../../harness/testFiles.js';
import { isPythonStdlib } from './syntax.js';

export interface PythonApi {
  /** Importable top-level modules: `sqlparse` → `sqlparse/__init__.py`. */
  modules: Map<string, string>;
  /** Test files' imports of repository names: `parse_duration` → `from durations import parse_duration`. */
  testImports: Map<string, string>;
  /** The directory and naming of test files. */
  testDir: string;
  testSuffixStyle: 'prefix' | 'suffix';
  files: readonly string[];
  read(path: string): Promise<string | undefined>;
  /** Top-level names a module defines or re-exports (cached). */
  namesOf(module: string): Promise<Set<string>>;
  /** The file of a dotted module, or undefined. */
  fileOf(module: string): string | undefined;
}

const NOT_MODULES = new Set(['setup', 'conftest', 'noxfile', 'tasks', 'fabfile', 'manage', 'docs', 'tests', 'test', 'testing', 'examples', 'benchmarks', 'scripts']);

export async function pythonApi(repo: RepoView): Promise<PythonApi> {
  const files = repo.files;
  const modules = topLevelModules(files);
  const fileOf = (module: string): string | undefined => {
    const parts = module.split('.');
    const top = modules.get(parts[0]);
    if (!top) return undefined;
    if (parts.length === 1) return top;
    const base = top.endsWith('/__init__.py') ? posix.dirname(top) : undefined;
    if (!base) return undefined;
    const rel = parts.slice(1).join('/');
    return [`${base}/${rel}.py`, `${base}/${rel}/__init__.py`].find((p) => files.includes(p));
  };
  const cache = new Map<string, Promise<Set<string>>>();
  const namesOf = (module: string): Promise<Set<string>> => {
    let p = cache.get(module);
    if (!p) {
      p = (async () => {
        const file = fileOf(module);
        const text = file ? await repo.read(file) : undefined;
        const out = new Set<string>();
        if (!text) return out;
        for (const m of text.matchAll(/^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)/gm)) out.add(m[1] ?? m[2]);
        for (const m of text.matchAll(/^from\s+(\.*[\w.]*)\s+import\s+(\([^)]*\)|[^\n]+)/gm)) {
          const names = m[2].replace(/[()]/g, '').split(',').map((s) => s.trim()).filter(Boolean);
          for (const n of names) {
            if (n === '*') {
              const target = resolveRelative(module, m[1], Boolean(file?.endsWith('__init__.py')));
              if (target && target !== module) for (const x of await namesOf(target)) if (!x.startsWith('_')) out.add(x);
            } else out.add(n.split(/\s+as\s+/).pop()!.trim());
          }
        }
        for (const m of text.matchAll(/^import\s+([\w.]+)(?:\s+as\s+(\w+))?/gm)) out.add(m[2] ?? m[1].split('.')[0]);
        return out;
      })();
      cache.set(module, p);
    }
    return p;
  };
  const tests = files.filter((f) => f.endsWith('.py') && isTestFile(f));
  const testImports = await testImportsOf(repo, tests.slice(0, 30), modules);
  const testDir = mostTestsDir(tests) ?? 'tests';
  const suffix = tests.filter((t) => /_test\.py$/.test(t)).length > tests.filter((t) => /(^|\/)test_[^/]*\.py$/.test(t)).length;
  return { modules, testImports, testDir, testSuffixStyle: suffix ? 'suffix' : 'prefix', files, read: repo.read, namesOf, fileOf };
}

/** Importable top-level packages and modules at the root, under src/ or lib/ (the first found wins). */
function topLevelModules(files: readonly string[]): Map<string, string> {
  const modules = new Map<string, string>();
  for (const f of files) {
    for (const r of ['', 'src/', 'lib/']) {
      if (r && !f.startsWith(r)) continue;
      const rest = f.slice(r.length);
      let m = /^([A-Za-z_]\w*)\/__init__\.py$/.exec(rest);
      if (m && !NOT_MODULES.has(m[1]) && !modules.has(m[1])) modules.set(m[1], f);
      m = /^([A-Za-z_]\w*)\.py$/.exec(rest);
      if (m && !NOT_MODULES.has(m[1]) && !/^test_|_test$/.test(m[1]) && !modules.has(m[1])) modules.set(m[1], f);
    }
  }
  return modules;
}

/** The tests' `from <repository module> import name` lines, by the name they bind. */
async function testImportsOf(repo: RepoView, tests: readonly string[], modules: Map<string, string>): Promise<Map<string, string>> {
  const testImports = new Map<string, string>();
  for (const t of tests) {
    const text = (await repo.read(t)) ?? '';
    for (const m of text.matchAll(/^from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]+)/gm)) {
      if (!modules.has(m[1].split('.')[0])) continue;
      for (const n of m[2].replace(/[()]/g, '').split(',').map((s) => s.trim()).filter(Boolean)) {
        const [name, alias] = n.split(/\s+as\s+/);
        if (name !== '*') testImports.set((alias ?? name).trim(), `from ${m[1]} import ${n}`);
      }
    }
  }
  return testImports;
}

function resolveRelative(module: string, spec: string, isPackage: boolean): string | undefined {
  const dots = /^\.*/.exec(spec)![0].length;
  if (!dots) return spec;
  const parts = module.split('.');
  const base = isPackage ? parts : parts.slice(0, -1);
  const up = base.slice(0, base.length - (dots - 1));
  const rest = spec.slice(dots);
  return [...up, ...(rest ? rest.split('.') : [])].join('.');
}

export interface PythonImports {
  lines: string[];
  unresolved: string[];
}

/**
 * Import lines for the names a snippet uses without defining them: the standard library,
 * repository modules (with the submodules the code reaches through attributes), names the
 * existing tests import, names a package exports, and names defined in one of its modules.
 */
export async function resolvePythonNames(api: PythonApi, names: readonly string[], code: string): Promise<PythonImports> {
  const lines: string[] = [];
  const unresolved: string[] = [];
  const add = (l: string) => {
    if (!lines.includes(l)) lines.push(l);
  };
  for (const name of names) {
    if (api.testImports.has(name)) {
      add(api.testImports.get(name)!);
      continue;
    }
    if (api.modules.has(name)) {
      // `dateutil.parser.parse(…)`: import the deepest submodule the code reaches.
      let mod = name;
      for (const m of code.matchAll(new RegExp(`(?<![\\w.])${name}((?:\\.[A-Za-z_]\\w*)+)`, 'g'))) {
        const parts = m[1].slice(1).split('.');
        for (let k = parts.length; k > 0; k--) {
          const cand = [name, ...parts.slice(0, k)].join('.');
          if (api.fileOf(cand) && !(await api.namesOf([name, ...parts.slice(0, k - 1)].join('.'))).has(parts[k - 1])) {
            if (cand.length > mod.length) mod = cand;
            break;
          }
        }
      }
      add(`import ${mod}`);
      continue;
    }
    if (isStdlib(name)) {
      add(`import ${name}`);
      continue;
    }
    let found: string | undefined;
    for (const mod of api.modules.keys()) if ((await api.namesOf(mod)).has(name)) { found = mod; break; }
    if (!found) {
      const defining: string[] = [];
      for (const f of api.files) {
        if (!f.endsWith('.py') || isTestFile(f)) continue;
        const mod = moduleOfFile(api, f);
        if (!mod || mod.split('.').length < 2) continue;
        if ((await api.namesOf(mod)).has(name)) defining.push(mod);
      }
      // A package that re-exports its private module's name (`parser/__init__` from `parser/_parser`): the package.
      const shortest = [...defining].sort((a, b) => a.length - b.length)[0];
      if (shortest && defining.every((d) => d === shortest || d.startsWith(shortest + '.'))) found = shortest;
    }
    if (found) add(`from ${found} import ${name}`);
    else unresolved.push(name);
  }
  return { lines, unresolved };
}

function moduleOfFile(api: PythonApi, file: string): string | undefined {
  for (const [name, top] of api.modules) {
    if (!top.endsWith('/__init__.py')) continue;
    const base = posix.dirname(top);
    if (file.startsWith(base + '/')) {
      const rel = file.slice(base.length + 1).replace(/\.py$/, '').replace(/\/__init__$/, '');
      return [name, ...(rel && rel !== '__init__' ? rel.split('/') : [])].join('.');
    }
  }
  return undefined;
}

const isStdlib = isPythonStdlib;
