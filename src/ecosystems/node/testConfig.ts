/**
 * The test files a Node project's own runner config names, at the root: ava's `files` (package.json
 * `"ava"`, `ava.config.*`), jest's `testMatch`/`testRegex` (package.json `"jest"`,
 * `jest.config.json`, `jest.config.*`), vitest's `test.include`/`test.exclude` (`vitest.config.*`,
 * `vite.config.*`, inline projects' too; only the root's `exclude`) and mocha's `spec`
 * (package.json `"mocha"`, `.mocharc.{json,yml,yaml,js,cjs}`), and Deno's own globs with deno.json's
 * `test.include`/`exclude` when Deno runs the tests. JSON, JSONC and YAML are parsed; JS/TS
 * configs are read from their syntax tree, literal strings and arrays of strings only (nothing of
 * them runs: a value built by code is not read, and the conventions stay). jest's `roots` only
 * narrow where its default patterns look, which the conventions already cover. Pure.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import picomatch from 'picomatch';
import JSON5 from 'json5';
import { parse as parseYaml } from 'yaml';
import { DENO_TEST, DENO_TEST_GLOBS, denoTestTask } from './deno.js';
import type { TestFileRules } from '../types.js';

const JS_CONFIG = /^(ava|jest|vitest|vite)\.config\.[cm]?[jt]s$|^\.mocharc\.c?js$/;
const DATA_CONFIG = /^(package\.json|jest\.config\.json|\.mocharc\.(json|jsonc|ya?ml)|deno\.jsonc?)$/;

/** The root files whose text names test files. */
export function testConfigFiles(files: readonly string[]): string[] {
  return files.filter((f) => !f.includes('/') && (JS_CONFIG.test(f) || DATA_CONFIG.test(f)));
}

type Keyed = Record<string, string[]>;

const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function parseData(path: string, text: string): any {
  try {
    return /\.ya?ml$/.test(path) ? parseYaml(text) : /^deno\./.test(path) ? JSON5.parse(text) : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The literal value of a property (a string, or an array of strings): undefined when code builds it. */
function literal(node: SyntaxNode | null): string[] | undefined {
  if (!node) return undefined;
  if (node.type === 'string') return [node.text.slice(1, -1)];
  if (node.type === 'array') {
    const items = node.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== 'comment');
    return items.every((c) => c.type === 'string') ? items.map((c) => c.text.slice(1, -1)) : undefined;
  }
  return undefined;
}

function keyName(pair: SyntaxNode): string {
  const key = pair.childForFieldName('key');
  return key ? key.text.replace(/^['"]|['"]$/g, '') : '';
}

/** Properties of a config file's object literals by their key path (`test.include`), literal values only. */
function jsProperties(root: SyntaxNode): Keyed {
  const out: Keyed = {};
  const walk = (n: SyntaxNode, path: string[]) => {
    for (const c of n.namedChildren) {
      if (!c) continue;
      if (c.type === 'pair') {
        const p = [...path, keyName(c)];
        const value = literal(c.childForFieldName('value'));
        // a key path repeated (two inline projects' `test.include`) keeps every value
        if (value) out[p.join('.')] = [...(out[p.join('.')] ?? []), ...value];
        walk(c, p);
      } else walk(c, path);
    }
  };
  walk(root, []);
  return out;
}

/** What each config file says, as `key path → values` in the runner's own terms. */
function configOf(path: string, text: string, parse: (path: string, text: string) => SyntaxNode | undefined): Keyed {
  if (JS_CONFIG.test(path)) {
    const root = parse(path, text);
    return root ? jsProperties(root) : {};
  }
  const data = parseData(path, text);
  if (!data || typeof data !== 'object') return {};
  if (path === 'package.json') {
    return {
      'ava.files': strings(data.ava?.files),
      'jest.testMatch': strings(data.jest?.testMatch),
      'jest.testRegex': strings(data.jest?.testRegex),
      'mocha.spec': strings(data.mocha?.spec),
      'mocha.recursive': data.mocha?.recursive === true ? ['true'] : [],
      deno: Object.values(data.scripts ?? {}).some((v) => typeof v === 'string' && DENO_TEST.test(v)) ? DENO_TEST_GLOBS : [],
    };
  }
  // deno.json: Deno's own globs when its test task runs the tests, and its `test.include`/`exclude`.
  if (/^deno\./.test(path)) return { deno: denoTestTask(data) !== undefined ? DENO_TEST_GLOBS : [], include: strings(data.test?.include), exclude: strings(data.test?.exclude) };
  if (path === 'jest.config.json') return { testMatch: strings(data.testMatch), testRegex: strings(data.testRegex) };
  return { spec: strings(data.spec), recursive: data.recursive === true ? ['true'] : [] };
}

/** A mocha `spec` entry: a glob, a file, or a directory (its scripts, all levels with `recursive`). */
function mochaSpec(spec: string, recursive: boolean): string {
  if (/[*?{[]/.test(spec) || /\.[cm]?[jt]sx?$/.test(spec)) return spec;
  return `${spec.replace(/\/+$/, '')}/${recursive ? '**/' : ''}*.{js,cjs,mjs,ts}`;
}

/** A deno.json include/exclude entry: a glob or a file as it is; a directory's test modules (include) or all its files (exclude). */
function denoPath(entry: string, include: boolean): string {
  if (/[*?{[]/.test(entry) || /\.[cm]?[jt]sx?$/.test(entry)) return entry;
  const dir = entry.replace(/\/+$/, '');
  return include ? `${dir}/${DENO_TEST_GLOBS[0]}` : `${dir}/**`;
}

const clean = (g: string) => g.replace(/^<rootDir>\//, '').replace(/^\.\//, '');

/** The rules every config file at the root gives, or undefined when none names test files. */
export function nodeTestFileRules(texts: Readonly<Record<string, string>>, parse: (path: string, text: string) => SyntaxNode | undefined): TestFileRules | undefined {
  const rules: TestFileRules = { globs: [], excludes: [], regexes: [], sources: [] };
  const take = (source: string, values: string[] | undefined, into: 'globs' | 'regexes' | 'excludes') => {
    if (!values?.length) return;
    rules.sources.push(source);
    for (const v of values) {
      if (into === 'globs' && v.startsWith('!')) rules.excludes.push(clean(v.slice(1)));
      else rules[into].push(into === 'regexes' ? v : clean(v));
    }
  };
  for (const [path, text] of Object.entries(texts)) {
    if (!testConfigFiles([path]).length) continue;
    const c = configOf(path, text, parse);
    if (path === 'package.json') {
      take('package.json "ava".files', c['ava.files'], 'globs');
      take('package.json "jest".testMatch', c['jest.testMatch'], 'globs');
      take('package.json "jest".testRegex', c['jest.testRegex'], 'regexes');
      take("Deno's test files (package.json runs deno test)", c.deno, 'globs');
      take('package.json "mocha".spec', c['mocha.spec']?.map((x) => mochaSpec(clean(x), (c['mocha.recursive'] ?? []).includes('true'))), 'globs');
    } else if (/^deno\./.test(path)) {
      take(`Deno's test files (${path} test task)`, c.deno, 'globs');
      take(`${path} test.include`, c.include?.map((x) => denoPath(clean(x), true)), 'globs');
      take(`${path} test.exclude`, c.exclude?.map((x) => denoPath(clean(x), false)), 'excludes');
    } else if (/^ava\./.test(path)) take(`${path} files`, c.files, 'globs');
    else if (/^jest\./.test(path)) {
      take(`${path} testMatch`, c.testMatch, 'globs');
      take(`${path} testRegex`, c.testRegex, 'regexes');
    } else if (/^vite(st)?\./.test(path)) {
      // the root's include and each inline project's (`test.projects[].test.include`)
      take(`${path} test.include`, Object.entries(c).filter(([k]) => k === 'test.include' || k.endsWith('.test.include')).flatMap(([, v]) => v), 'globs');
      take(`${path} test.exclude`, c['test.exclude'], 'excludes');
    } else {
      const recursive = (c.recursive ?? []).includes('true');
      take(`${path} spec`, c.spec?.map((s) => mochaSpec(clean(s), recursive)), 'globs');
    }
  }
  return rules.sources.length ? rules : undefined;
}

const compiled = new WeakMap<TestFileRules, (path: string) => boolean>();

/** Whether the config names `path` (repository-relative): a glob or regex matches it and no exclude does. */
export function namedByConfig(path: string, rules: TestFileRules): boolean {
  let match = compiled.get(rules);
  if (!match) {
    const include = rules.globs.length ? picomatch(rules.globs, { dot: true }) : () => false;
    const exclude = rules.excludes.length ? picomatch(rules.excludes, { dot: true }) : () => false;
    const regexes = rules.regexes.flatMap((r) => {
      try {
        return [new RegExp(r)];
      } catch {
        return [];
      }
    });
    match = (p) => (include(p) || regexes.some((re) => re.test(`/${p}`))) && !exclude(p);
    compiled.set(rules, match);
  }
  return match(path);
}
