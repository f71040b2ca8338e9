/**
 * The repository's own API, read from its files: Python top-level packages and modules and the
 * names they define or re-export; the JavaScript package's name, entry (package.json
 * exports/main/module, mapped back to sources when the built file is absent) and its exports;
 * and how the existing tests import the package and which test directory, file suffix, module
 * system, quotes and semicolons they use. A name the issue uses but never defines is resolved
 * only through these, never from the prose.
 */
import { posix } from 'node:path';
import { isTestFile } from '../../harness/testFiles.js';
import type { RunnerName } from '../repoFiles.js';

export interface RepoView {
  files: readonly string[];
  read(path: string): Promise<string | undefined>;
  runner: RunnerName;
  /** `python`, `javascript`, `typescript`, `go`, … or `unknown` (see RepoInfo). */
  language: string;
  packageJson?: Record<string, unknown>;
}

// ---------------------------------------------------------------- JavaScript / TypeScript

export type Binding = { kind: 'default' | 'namespace'; local: string } | { kind: 'named'; local: string; imported: string };

export interface JsStyle {
  /** ESM `import` (also TypeScript) or CommonJS `require`. */
  esm: boolean;
  typescript: boolean;
  quote: "'" | '"';
  semicolons: boolean;
  indent: string;
  declare: 'const' | 'var';
  /** Directory of the new test file, its suffix (`.spec.ts`, `.test.js`, `.js`). */
  dir: string;
  suffix: string;
  /** Lines the existing tests use to bring in the runner's functions (`import { describe, it, expect } from 'vitest'`). */
  frameworkImport?: string;
  /** The tests call `test(…)` at the top level rather than `describe`/`it`. */
  topLevelTest: boolean;
  /** Callbacks are arrow functions (else `function () {}`). */
  arrows: boolean;
  /** How the existing tests import node's assert, when they do. */
  assertImport?: string;
  /** How existing tests name the package and where they import it from (relative to `dir`). */
  packageBinding?: Binding;
  packageSpecifier?: string;
}

export interface JsApi {
  name?: string;
  /** Source file of the package's entry (`src/index.ts`), when found. */
  entry?: string;
  /** The entry's named exports. */
  named: Set<string>;
  /** The entry has a default export (ESM `export default` or CommonJS `module.exports = x`). */
  hasDefault: boolean;
  /** Members of the default export (`module.exports = s; s.slugify = …`, `export default { isEmail }`). */
  defaultMembers: Set<string>;
  commonjs: boolean;
  style: JsStyle;
  files: readonly string[];
  /** The repository file a package specifier (`pkg`, `pkg/lib/x`) stands for. */
  fileForSpecifier(spec: string): string | undefined;
  /** A specifier for `file` from the test file's directory, in the tests' style. */
  specifierFor(file: string): string;
}

const JS_EXT = ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.jsx'];

/** The JS/TS source file a module path names (its own extension, another, or an index), if the repository has one. */
export function findModule(files: readonly string[], base: string): string | undefined {
  const b = posix.normalize(base).replace(/\/$/, '');
  if (files.includes(b) && JS_EXT.some((e) => b.endsWith(e))) return b;
  const noExt = b.replace(/\.(js|mjs|cjs|ts|jsx|tsx|d\.ts)$/, '');
  for (const cand of [noExt, `${noExt}/index`]) for (const e of JS_EXT) if (files.includes(cand + e)) return cand + e;
  return undefined;
}

/** A built path (`dist/index.js`, `lib/x.js`) back to the source that ships as it. */
function toSource(files: readonly string[], built: string): string | undefined {
  const direct = findModule(files, built);
  if (direct) return direct;
  const path = built.replace(/^\.\//, '');
  const rel = path.replace(/^(dist|lib|build|esm|cjs|out)(\.[\w-]+)?\//, '');
  return findModule(files, `src/${path}`) ?? findModule(files, `src/${rel}`) ?? findModule(files, rel) ?? undefined;
}

function exportTarget(exp: unknown): string | undefined {
  if (typeof exp === 'string') return exp;
  if (Array.isArray(exp)) return exp.map(exportTarget).find(Boolean);
  if (exp && typeof exp === 'object') {
    const o = exp as Record<string, unknown>;
    if ('.' in o) return exportTarget(o['.']);
    for (const k of ['source', 'import', 'require', 'node', 'default', 'types']) if (k in o) {
      const t = exportTarget(o[k]);
      if (t) return t;
    }
  }
  return undefined;
}

export async function jsApi(repo: RepoView): Promise<JsApi> {
  const files = repo.files;
  const pkg = repo.packageJson ?? {};
  const name = typeof pkg.name === 'string' ? pkg.name : undefined;
  const entry = entryOf(files, pkg);
  const tests = files.filter((f) => /\.[cm]?[jt]sx?$/.test(f) && isTestFile(f) && !f.includes('node_modules'));
  const ts = repo.language === 'typescript' || tests.some((t) => /\.tsx?$/.test(t)) && tests.filter((t) => /\.tsx?$/.test(t)).length >= tests.length / 2;
  const dir = mostTestsDir(tests) ?? (files.some((f) => f.startsWith('test/')) || !ts ? 'test' : 'src');
  // A sample of the tests there to copy the style of.
  const samples = tests.filter((t) => posix.dirname(t) === dir);
  const suffix = suffixOf(samples, ts);
  const texts: Array<{ file: string; text: string }> = [];
  for (const s of samples.slice(0, 8)) texts.push({ file: s, text: (await repo.read(s)) ?? '' });
  const style: JsStyle = { dir, suffix, ...styleOf(texts.map((t) => t.text), ts, pkg) };

  const api: JsApi = {
    name,
    entry,
    named: new Set(),
    hasDefault: false,
    defaultMembers: new Set(),
    commonjs: false,
    style,
    files,
    fileForSpecifier: (spec) => {
      if (!name || (spec !== name && !spec.startsWith(name + '/'))) return undefined;
      const sub = spec.slice(name.length + 1);
      if (!sub) return entry;
      const exp = pkg.exports && typeof pkg.exports === 'object' ? (pkg.exports as Record<string, unknown>)[`./${sub}`] : undefined;
      const t = exportTarget(exp);
      return (t && toSource(files, t)) ?? toSource(files, sub);
    },
    specifierFor: (file) => {
      let rel = posix.relative(dir, file);
      if (!rel.startsWith('.')) rel = './' + rel;
      const keepExt = style.esm && !ts && (pkg.type === 'module' || /\.mjs$/.test(suffix));
      // ESM run by node itself needs the file's extension; bundlers, ts and CommonJS do not.
      if (keepExt) return rel.replace(/\.tsx?$/, '.js');
      rel = rel.replace(/\.(ts|tsx|js|jsx|mjs|cjs)$/, '');
      return /^\.\/index$/.test(rel) ? rel : rel.replace(/\/index$/, '');
    },
  };
  if (entry) await readExports(repo, entry, api, new Set());

  // How the sample tests bind the package: `var send = require('..')`, `import * as pathToRegexp from "./index"`.
  for (const { file, text } of texts) {
    const b = packageBindingIn(text, posix.dirname(file), files, entry, name);
    if (b) {
      style.packageBinding = b.binding;
      style.packageSpecifier = b.specifier;
      break;
    }
  }
  return api;
}

/** The source of the package's entry: from package.json's exports, source, main, module or types, else an index. */
function entryOf(files: readonly string[], pkg: Record<string, unknown>): string | undefined {
  const candidates = [exportTarget(pkg.exports), pkg.source, pkg.main, pkg.module, pkg.types, pkg.typings].filter((x): x is string => typeof x === 'string');
  for (const c of candidates) {
    const entry = toSource(files, c);
    if (entry) return entry;
  }
  return findModule(files, 'src/index') ?? findModule(files, 'index') ?? findModule(files, 'lib/index');
}

/** The directory most tests live in (the shallowest among equals); undefined without tests. */
export function mostTestsDir(tests: readonly string[]): string | undefined {
  const dirs = new Map<string, number>();
  for (const t of tests) dirs.set(posix.dirname(t), (dirs.get(posix.dirname(t)) ?? 0) + 1);
  return [...dirs].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length)[0]?.[0];
}

/** How the sample tests are written: module system, quotes, semicolons, indent, declarations, framework and assert imports, callbacks. */
function styleOf(texts: string[], ts: boolean, pkg: Record<string, unknown>): Omit<JsStyle, 'dir' | 'suffix'> {
  const style: Omit<JsStyle, 'dir' | 'suffix'> = { esm: ts || pkg.type === 'module', typescript: ts, quote: "'", semicolons: true, indent: '  ', declare: 'const', topLevelTest: false, arrows: true };
  if (!texts.length) return style;
  const all = texts.join('\n');
  style.esm = ts || /^\s*import\s.+from\s+['"]/m.test(all) || (!/\brequire\(/.test(all) && pkg.type === 'module');
  style.quote = (all.match(/'/g)?.length ?? 0) >= (all.match(/"/g)?.length ?? 0) ? "'" : '"';
  const stmtLines = all.split('\n').filter((l) => /^\s*(const|let|var|import|expect|assert|t\.|st\.)\b.*[)'"\]]\s*;?\s*$/.test(l));
  style.semicolons = stmtLines.filter((l) => /;\s*$/.test(l)).length >= stmtLines.length / 2;
  style.indent = /^\t/m.test(all) ? '\t' : /^ {4}\S/m.test(all) && !/^ {2}\S/m.test(all) ? '    ' : '  ';
  style.declare = /^\s*var\s/m.test(all) && !/^\s*(const|let)\s/m.test(all) ? 'var' : 'const';
  const fw = /^\s*(?:import\s+(?:\{[^}]*\}|[\w$]+)\s+from\s+['"](?:vitest|@jest\/globals|node:test)['"]|(?:var|let|const)\s+(?:\{[^}]*\}|[\w$]+)\s*=\s*require\(['"]node:test['"]\));?\s*$/m.exec(all);
  if (fw) style.frameworkImport = fw[0].trim();
  style.topLevelTest = /^test\(/m.test(all) && !/^\s*(describe|suite)\(/m.test(all);
  style.arrows = !/\b(it|test|describe)\(\s*['"`][^'"`]*['"`]\s*,\s*(async\s+)?function\b/.test(all);
  const asrt = /^\s*(?:import\s+(?:\*\s+as\s+)?assert\s+from\s+['"](node:)?assert(\/strict)?['"]|(?:var|const|let)\s+assert\s*=\s*require\(['"](node:)?assert(\/strict)?['"]\));?\s*$/m.exec(all);
  if (asrt) style.assertImport = asrt[0].trim();
  return style;
}

function suffixOf(samples: readonly string[], ts: boolean): string {
  const counts = new Map<string, number>();
  for (const s of samples) {
    const m = /((?:\.(?:test|spec))?\.[cm]?[jt]sx?)$/.exec(s);
    if (m) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  const best = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  return best ?? (ts ? '.test.ts' : '.test.js');
}

async function readExports(repo: RepoView, file: string, api: JsApi, seen: Set<string>): Promise<void> {
  if (seen.has(file)) return;
  seen.add(file);
  const text = (await repo.read(file)) ?? '';
  for (const m of text.matchAll(/^\s*export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|enum|interface|type|abstract\s+class)\s+([A-Za-z_$][\w$]*)/gm)) api.named.add(m[1]);
  for (const m of text.matchAll(/^\s*export\s+(?:type\s+)?\{([^}]*)\}(?:\s*from\s*['"]([^'"]+)['"])?/gm)) {
    for (const part of m[1].split(',').map((s) => s.trim()).filter(Boolean)) {
      const [orig, alias] = part.replace(/^type\s+/, '').split(/\s+as\s+/).map((s) => s.trim());
      if ((alias ?? orig) === 'default') api.hasDefault = true;
      else api.named.add(alias ?? orig);
    }
  }
  for (const m of text.matchAll(/^\s*export\s+\*\s+from\s+['"](\.[^'"]+)['"]/gm)) {
    const target = findModule(repo.files, posix.join(posix.dirname(file), m[1]));
    if (target) {
      const sub: JsApi = { ...api, named: api.named, defaultMembers: new Set(), hasDefault: false };
      await readExports(repo, target, sub, seen);
    }
  }
  const def = /^\s*export\s+default\s+(?:async\s+)?(?:function\*?\s*([A-Za-z_$][\w$]*)?|class\s+([A-Za-z_$][\w$]*)?|([A-Za-z_$][\w$]*)\s*;?\s*$|\{)/m.exec(text);
  if (def) {
    api.hasDefault = true;
    const local = def[3];
    if (local) membersOf(text, local, api.defaultMembers);
    if (/^\s*export\s+default\s+\{/m.test(text)) objectKeys(text.slice(text.search(/^\s*export\s+default\s+\{/m)), api.defaultMembers);
  }
  // CommonJS
  const cjs = /^\s*(?:(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=\s*)?module\.exports\s*=\s*(?:([A-Za-z_$][\w$]*)\s*;?\s*$|\{|function\s*([A-Za-z_$][\w$]*)?|require\(['"]([^'"]+)['"]\))/m.exec(text);
  if (cjs) {
    api.commonjs = true;
    api.hasDefault = true;
    if (cjs[4]) {
      const target = findModule(repo.files, posix.join(posix.dirname(file), cjs[4]));
      if (target) await readExports(repo, target, api, seen);
    } else if (/module\.exports\s*=\s*\{/.test(cjs[0])) objectKeys(text.slice(text.indexOf(cjs[0])), api.defaultMembers);
    else for (const local of [cjs[1], cjs[2], cjs[3]].filter(Boolean)) membersOf(text, local!, api.defaultMembers);
  }
  for (const m of text.matchAll(/^\s*(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=/gm)) {
    api.commonjs = true;
    api.hasDefault = true;
    api.defaultMembers.add(m[1]);
  }
}

/** `x.member = …` assignments and `const x = { a, b: c }` keys. */
function membersOf(text: string, local: string, out: Set<string>): void {
  for (const m of text.matchAll(new RegExp(`^\\s*${local.replace(/\$/g, '\\$')}\\.([A-Za-z_$][\\w$]*)\\s*=`, 'gm'))) out.add(m[1]);
  const obj = new RegExp(`^\\s*(?:const|let|var)\\s+${local.replace(/\$/g, '\\$')}\\s*=\\s*\\{`, 'm').exec(text);
  if (obj) objectKeys(text.slice(obj.index), out);
}

/** Top-level keys of the first object literal in `text`. */
function objectKeys(text: string, out: Set<string>): void {
  const start = text.indexOf('{');
  if (start < 0) return;
  let depth = 0;
  let body = '';
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if ('{[('.includes(c)) {
      depth++;
      if (depth === 1) continue;
    } else if ('}])'.includes(c)) {
      depth--;
      if (depth === 0) break;
    }
    if (depth === 1) body += c;
  }
  for (const part of body.split(',')) {
    const m = /^\s*(?:\.\.\.)?['"]?([A-Za-z_$][\w$]*)['"]?\s*(?::|$)/.exec(part);
    if (m) out.add(m[1]);
  }
}

/** The binding and specifier a test file uses for the package (its entry, or its name). */
function packageBindingIn(text: string, fromDir: string, files: readonly string[], entry: string | undefined, name: string | undefined): { binding: Binding; specifier: string } | undefined {
  const isPackage = (spec: string) => {
    if (name && spec === name) return true;
    if (!spec.startsWith('.')) return false;
    const joined = posix.normalize(posix.join(fromDir, spec)).replace(/\/$/, '');
    const target = findModule(files, joined) ?? (joined === '.' ? entry : undefined);
    // The entry itself, or the root index that re-exports it (`require('../index')`).
    return Boolean(target && entry && (target === entry || /^index\.[cm]?[jt]s$/.test(target)));
  };
  for (const m of text.matchAll(/^\s*import\s+(\*\s+as\s+([\w$]+)|([\w$]+)|\{([^}]*)\})\s+from\s+['"]([^'"]+)['"]/gm)) {
    if (!isPackage(m[5])) continue;
    if (m[2]) return { binding: { kind: 'namespace', local: m[2] }, specifier: m[5] };
    if (m[3]) return { binding: { kind: 'default', local: m[3] }, specifier: m[5] };
    const first = m[4].split(',')[0]?.trim().split(/\s+as\s+/);
    if (first?.[0]) return { binding: { kind: 'named', imported: first[0], local: first[1] ?? first[0] }, specifier: m[5] };
  }
  for (const m of text.matchAll(/^\s*(?:var|let|const)\s+([\w$]+)\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)\s*;?\s*$/gm)) {
    if (isPackage(m[2])) return { binding: { kind: 'default', local: m[1] }, specifier: m[2] };
  }
  return undefined;
}

/** The identifier a package name reads as: `path-to-regexp` → `pathToRegexp`, `@scope/deep-merge` → `deepMerge`. */
export function packageIdentifier(name: string): string {
  const base = name.replace(/^@[^/]+\//, '');
  return base.replace(/[-_.]+([a-zA-Z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/[^\w$]/g, '');
}
