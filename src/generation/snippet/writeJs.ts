/**
 * The JavaScript/TypeScript test for a claim, in the repository's runner (describe/it for jest,
 * vitest and mocha; node:test; tap; tape), module system, quotes, semicolons and callback style,
 * importing the package the way its tests do, with one assertion.
 */
import { posix } from 'node:path';
import type { Claim } from './claims.js';
import { packageIdentifier, type Binding, type JsApi } from './repoApi.js';
import { freeNames, indentCode, requote, statements, unquote } from './syntax.js';
import { inlineLiterals, nameWords, oneLineLiteral, quoteComment, sliceWords, stableMessage, uniquePath, type WriteResult, type WrittenTest } from './testWriting.js';
import type { Value } from './values.js';

interface JsImport {
  specifier: string;
  binding: Binding;
}

/** Error classes every JavaScript runtime has (a custom one would need importing). */
const JS_ERRORS = new Set(['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'URIError', 'EvalError']);

const SUPPORTED_JS = new Set(['jest', 'vitest', 'mocha', 'node-test', 'tap', 'tape']);

export async function writeJsTest(title: string, claim: Claim, api: JsApi, runner: string): Promise<WriteResult> {
  if (!SUPPORTED_JS.has(runner)) return { ok: false, reason: `cannot tell which runner the repository's tests use (${runner})` };
  const style = api.style;
  const notes: string[] = [];
  const read = importsOf(claim, api);
  if ('reason' in read) return { ok: false, reason: read.reason };
  const { pkgImports, otherImports, body } = read;
  let { setup, expr } = inlineLiterals('js', body, claim.expr);
  setup = setup.map((s) => requote(s, style.quote));
  expr = requote(expr, style.quote);
  for (const v of [claim.expected, claim.wrong]) if (v) v.code = requote(oneLineLiteral(v.code), style.quote);
  const values = [claim.expected, claim.wrong].filter((v): v is Value => Boolean(v));
  const bound = new Set(pkgImports.map((i) => i.binding.local));
  const code = [...setup, expr, ...(claim.also ?? []).map((a) => a.expr)].join('\n');
  const free = freeNames('js', [...otherImports, code, ...values.map((v) => v.code)].join('\n')).filter((n) => !bound.has(n));
  const entrySpec = style.packageSpecifier ?? (api.entry ? api.specifierFor(api.entry) : undefined);
  for (const name of free) {
    if (!entrySpec) return { ok: false, reason: `\`${name}\` is not defined in the issue's code, and the repository's package entry was not found` };
    const b = resolveJsName(api, name, code);
    if (!b) return { ok: false, reason: `\`${name}\` is not defined in the issue's code and not exported by ${api.name ?? 'the package'}` };
    pkgImports.push({ specifier: entrySpec, binding: b });
  }
  if (!pkgImports.length) return { ok: false, reason: 'the issue\'s code does not use this repository\'s package' };

  const q = style.quote;
  const semi = style.semicolons ? ';' : '';
  const str = (s: string) => quoteString(s, q);
  const target = claim.index !== undefined ? `${expr}${style.typescript ? '?.' : ''}[${claim.index}]` : expr;
  const isAsync = /\bawait\b/.test([...setup, expr].join('\n'));
  const { kind, lines } = assertionLines(claim, runner, style, { expr, target, isAsync });
  const head = headLines(runner, style, lines, pkgImports, otherImports);
  const describeName = describeNameOf(expr, setup, pkgImports);
  const tapLike = runner === 'tap' || runner === 'tape';
  const topLevel = style.topLevelTest && (runner === 'node-test' || runner === 'jest' || runner === 'vitest');
  const ind = style.indent;
  const statementsOf = (code: string) => {
    const t = code.trimEnd();
    if (style.semicolons) return /[;}]$/.test(t) ? t : `${t};`;
    return t.replace(/;$/, '');
  };
  const block = [...quoteComment(claim, '//'), ...setup.map(statementsOf), ...lines];
  const fn = (param = '') => (style.arrows ? `${isAsync ? 'async ' : ''}(${param}) =>` : `${isAsync ? 'async ' : ''}function (${param})`);
  const plainFn = (param = '') => (style.arrows ? `(${param}) =>` : `function (${param})`);
  const out: string[] = [...head, ''];
  const name = str(title);
  if (tapLike) {
    const call = runner === 'tap' ? 't.test' : 'test';
    out.push(`${call}(${name}, ${fn('t')} {`, ...block.map((l) => indentCode('js', l, ind)), `${ind}t.end()${semi}`, `})${semi}`);
  } else if (topLevel) {
    out.push(`test(${name}, ${fn()} {`, ...block.map((l) => indentCode('js', l, ind)), `})${semi}`);
  } else {
    out.push(`describe(${str(describeName)}, ${plainFn()} {`, `${ind}it(${name}, ${fn()} {`, ...block.map((l) => indentCode('js', l, ind + ind)), `${ind}})${semi}`, `})${semi}`);
  }
  const stem = sliceWords(nameWords(title, expr), 40).join('-');
  const path = uniquePath(api.files, style.dir, stem, style.suffix, '-');
  notes.push(`snippet: ${claim.shape}; ${kind}`);
  return { ok: true, test: { path, content: out.join('\n') + '\n', kind, notes } };
}

/** The issue's setup split into imports of this package (by binding), other modules' imports, and the rest. */
function importsOf(claim: Claim, api: JsApi): { pkgImports: JsImport[]; otherImports: string[]; body: string[] } | { reason: string } {
  const style = api.style;
  const pkgImports: JsImport[] = [];
  const otherImports: string[] = [];
  const body: string[] = [];
  for (const s of claim.setup) {
    const st = statements('js', s)?.[0];
    if (st?.kind !== 'import' || st.module === undefined) {
      body.push(s);
      continue;
    }
    const file = api.fileForSpecifier(st.module) ?? relativeFile(api, st.module);
    const bindings = bindingsOf(s);
    if (file && bindings.length) {
      const spec = file === api.entry && style.packageSpecifier ? style.packageSpecifier : api.specifierFor(file);
      for (const b of bindings) pkgImports.push({ specifier: spec, binding: b });
    } else if (!st.module.startsWith('.')) otherImports.push(renderOther(s, style));
    else return { reason: `the issue's code imports ${st.module}, which is not a file of this repository` };
  }
  return { pkgImports, otherImports, body };
}

/** The test's assertions in the runner's words: the expected value, not the wrong one, or no exception. */
function assertionLines(claim: Claim, runner: string, style: JsApi['style'], at: { expr: string; target: string; isAsync: boolean }): { kind: WrittenTest['kind']; lines: string[] } {
  const { expr, target, isAsync } = at;
  const semi = style.semicolons ? ';' : '';
  const str = (s: string) => quoteString(s, style.quote);
  const structure = (v: Value) => v.kind === 'structure' || v.kind === 'regex';
  const isObject = (v: Value) => /^\{/.test(v.code.trim());
  const nodeAssert = runner === 'mocha' || runner === 'node-test';
  const tapLike = runner === 'tap' || runner === 'tape';
  const lines: string[] = [];
  let kind: WrittenTest['kind'];
  const actual = claim.expected?.arrayWithProps || claim.wrong?.arrayWithProps ? `Array.from(${target}${style.typescript ? ' ?? []' : ''})` : target;
  if (claim.expected) {
    kind = 'expected-value';
    const v = claim.expected;
    for (const [a, val] of [[actual, v] as const, ...(claim.also ?? []).map((x) => [requote(x.expr, style.quote), x.expected] as const)]) {
      if (nodeAssert) lines.push(`assert.${structure(val) ? (isObject(val) ? 'deepEqual' : 'deepStrictEqual') : 'strictEqual'}(${a}, ${val.code})${semi}`);
      // Objects compare loosely (their prototype may be null); arrays and values strictly.
      else if (tapLike) lines.push(`t.${structure(val) ? (runner === 'tap' ? (isObject(val) ? 'same' : 'strictSame') : 'deepEqual') : 'equal'}(${a}, ${val.code})${semi}`);
      else lines.push(`expect(${a}).${structure(val) ? 'toEqual' : 'toBe'}(${val.code})${semi}`);
    }
  } else if (claim.wrong) {
    kind = 'wrong-value';
    const v = claim.wrong;
    if (nodeAssert) lines.push(`assert.${structure(v) ? (isObject(v) ? 'notDeepEqual' : 'notDeepStrictEqual') : 'notStrictEqual'}(${actual}, ${v.code})${semi}`);
    else if (tapLike) lines.push(`t.${structure(v) ? (runner === 'tap' ? (isObject(v) ? 'notSame' : 'strictNotSame') : 'notDeepEqual') : runner === 'tap' ? 'not' : 'notEqual'}(${actual}, ${v.code})${semi}`);
    else lines.push(`expect(${actual}).not.${structure(v) ? 'toEqual' : 'toBe'}(${v.code})${semi}`);
  } else {
    kind = 'exception';
    const e = claim.raises!;
    const message = stableMessage(e.message);
    // Another error (the test's own mistake) is not swallowed: jest/vitest pass on it, node's assert rethrows it.
    if ((runner === 'jest' || runner === 'vitest') && !isAsync) lines.push(`expect(() => ${expr}).not.toThrow(${message ? str(message) : e.type})${semi}`);
    else if (nodeAssert && !isAsync && JS_ERRORS.has(e.type)) lines.push(`assert.doesNotThrow(() => ${expr}, ${e.type})${semi}`);
    else lines.push(`${expr}${semi}`);
  }
  return { kind, lines };
}

/** Imports: the runner's, assert, the package's, then the issue's other modules. */
function headLines(runner: string, style: JsApi['style'], lines: string[], pkgImports: JsImport[], otherImports: string[]): string[] {
  const semi = style.semicolons ? ';' : '';
  const str = (s: string) => quoteString(s, style.quote);
  const nodeAssert = runner === 'mocha' || runner === 'node-test';
  const head: string[] = [];
  const decl = style.declare;
  const topLevel = style.topLevelTest && (runner === 'node-test' || runner === 'jest' || runner === 'vitest');
  if (runner === 'vitest') head.push(style.frameworkImport ?? `import { describe, expect, it } from ${str('vitest')}${semi}`);
  if (runner === 'jest' && style.frameworkImport) head.push(style.frameworkImport);
  if (runner === 'node-test') {
    const names = topLevel ? 'test' : '{ describe, it }';
    head.push(style.frameworkImport ?? (style.esm ? `import ${names} from ${str('node:test')}${semi}` : `${decl} ${names} = require(${str('node:test')})${semi}`));
  }
  if (runner === 'tap') head.push(style.esm ? `import t from ${str('tap')}${semi}` : `${decl} t = require(${str('tap')})${semi}`);
  if (runner === 'tape') head.push(style.esm ? `import test from ${str('tape')}${semi}` : `${decl} test = require(${str('tape')})${semi}`);
  if (nodeAssert && lines.some((l) => l.startsWith('assert.'))) head.push(style.assertImport ?? (style.esm ? `import assert from ${str('assert')}${semi}` : `${decl} assert = require(${str('assert')})${semi}`));
  head.push(...renderImports(pkgImports, style, str, semi));
  head.push(...otherImports);
  return head;
}

function quoteString(s: string, q: string): string {
  const escaped = s.replace(/\\/g, '\\\\').replace(new RegExp(q, 'g'), `\\${q}`).replace(/\n/g, '\\n');
  return `${q}${escaped}${q}`;
}

/** `../` or `./src/x` in the issue: a repository file, read from the root or from the test directory. */
function relativeFile(api: JsApi, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  for (const base of ['', api.style.dir]) {
    const p = posix.normalize(posix.join(base || '.', spec));
    if (p.startsWith('..')) continue;
    if (p === '.' || p === '') return api.entry;
    const hit = ['', '.ts', '.tsx', '.js', '.mjs', '.cjs', '/index.ts', '/index.js'].map((e) => posix.normalize(p.replace(/\.js$/, '') + e)).find((f) => api.files.includes(f));
    if (hit) return hit;
  }
  return undefined;
}

/** The bindings an import statement or `require` declaration makes. */
function bindingsOf(stmt: string): Binding[] {
  const s = stmt.trim();
  const out: Binding[] = [];
  const imp = /^import\s+(?:type\s+)?([\s\S]*?)\s+from\s+['"][^'"]+['"]/.exec(s);
  if (imp) {
    const clause = imp[1].trim();
    const ns = /\*\s+as\s+([\w$]+)/.exec(clause);
    if (ns) out.push({ kind: 'namespace', local: ns[1] });
    const def = /^([\w$]+)\s*(,|$)/.exec(clause);
    if (def) out.push({ kind: 'default', local: def[1] });
    const named = /\{([^}]*)\}/.exec(clause);
    if (named) for (const part of named[1].split(',').map((x) => x.trim()).filter(Boolean)) {
      const [imported, local] = part.split(/\s+as\s+/).map((x) => x.trim());
      out.push({ kind: 'named', imported, local: local ?? imported });
    }
    return out;
  }
  const req = /^(?:const|let|var)\s+([\s\S]+?)\s*=\s*require\(\s*['"][^'"]+['"]\s*\)(\.[\w$]+)?\s*;?$/.exec(s);
  if (req) {
    const lhs = req[1].trim();
    if (req[2]) out.push({ kind: 'named', imported: req[2].slice(1), local: lhs });
    else if (lhs.startsWith('{')) {
      for (const part of lhs.slice(1, -1).split(',').map((x) => x.trim()).filter(Boolean)) {
        const [imported, local] = part.split(':').map((x) => x.trim());
        out.push({ kind: 'named', imported, local: local ?? imported });
      }
    } else out.push({ kind: 'default', local: lhs });
  }
  return out;
}

/** How a name the issue uses without defining it reaches the package, if it does. */
function resolveJsName(api: JsApi, name: string, code: string): Binding | undefined {
  const pb = api.style.packageBinding;
  if (pb && pb.local === name) return pb;
  if (api.named.has(name) || (api.commonjs && api.defaultMembers.has(name))) return { kind: 'named', imported: name, local: name };
  const whole = (): Binding => (api.hasDefault ? { kind: 'default', local: name } : { kind: 'namespace', local: name });
  if (api.name && packageIdentifier(api.name).toLowerCase() === name.toLowerCase()) return whole();
  // `X.member(…)` where the package exports `member`: X stands for the package.
  const members = [...code.matchAll(new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}\\.([A-Za-z_$][\\w$]*)`, 'g'))].map((m) => m[1]);
  if (members.length && members.every((m) => api.defaultMembers.has(m))) return { kind: 'default', local: name };
  if (members.length && members.every((m) => api.named.has(m))) return api.hasDefault && !api.commonjs ? { kind: 'namespace', local: name } : api.commonjs ? { kind: 'default', local: name } : { kind: 'namespace', local: name };
  return undefined;
}

function renderImports(imports: JsImport[], style: JsApi['style'], str: (s: string) => string, semi: string): string[] {
  const bySpec = new Map<string, Binding[]>();
  for (const i of imports) {
    const list = bySpec.get(i.specifier) ?? [];
    if (!list.some((b) => b.local === i.binding.local)) list.push(i.binding);
    bySpec.set(i.specifier, list);
  }
  const out: string[] = [];
  for (const [spec, bindings] of bySpec) {
    const named = bindings.filter((b): b is Extract<Binding, { kind: 'named' }> => b.kind === 'named');
    const list = named.map((b) => (b.imported === b.local ? b.local : style.esm ? `${b.imported} as ${b.local}` : `${b.imported}: ${b.local}`)).join(', ');
    for (const b of bindings) {
      if (b.kind === 'named') continue;
      if (style.esm) out.push(b.kind === 'namespace' ? `import * as ${b.local} from ${str(spec)}${semi}` : `import ${b.local} from ${str(spec)}${semi}`);
      else out.push(`${style.declare} ${b.local} = require(${str(spec)})${semi}`);
    }
    if (named.length) out.push(style.esm ? `import { ${list} } from ${str(spec)}${semi}` : `${style.declare} { ${list} } = require(${str(spec)})${semi}`);
  }
  return out;
}

/** An import of another module, in the test file's module system. */
function renderOther(stmt: string, style: JsApi['style']): string {
  const s = stmt.trim().replace(/;$/, '');
  const semi = style.semicolons ? ';' : '';
  const isEsm = /^import\s/.test(s);
  if (isEsm === style.esm) return s + semi;
  const spec = unquote(/['"][^'"]+['"]/.exec(s)?.[0] ?? "''");
  const bindings = bindingsOf(s);
  const q = style.quote;
  const lit = `${q}${spec}${q}`;
  if (style.esm) {
    const def = bindings.find((b) => b.kind === 'default');
    const named = bindings.filter((b) => b.kind === 'named') as Array<{ imported: string; local: string }>;
    if (def) return `import ${def.local} from ${lit}${semi}`;
    if (named.length) return `import { ${named.map((n) => (n.imported === n.local ? n.local : `${n.imported} as ${n.local}`)).join(', ')} } from ${lit}${semi}`;
    return `import ${lit}${semi}`;
  }
  const def = bindings.find((b) => b.kind !== 'named');
  const named = bindings.filter((b) => b.kind === 'named') as Array<{ imported: string; local: string }>;
  if (def) return `${style.declare} ${def.local} = require(${lit})${semi}`;
  if (named.length) return `${style.declare} { ${named.map((n) => (n.imported === n.local ? n.local : `${n.imported}: ${n.local}`)).join(', ')} } = require(${lit})${semi}`;
  return `require(${lit})${semi}`;
}

/** The package function the test exercises: `pathToRegexp`, `qs.parse`. */
function describeNameOf(expr: string, setup: string[], imports: JsImport[]): string {
  const locals = imports.map((i) => i.binding.local);
  for (const code of [expr, ...[...setup].reverse()]) {
    for (const m of code.matchAll(/(?<![\w$.])([A-Za-z_$][\w$]*)((?:\.[A-Za-z_$][\w$]*)*)\s*\(/g)) {
      if (locals.includes(m[1])) return `${m[1]}${m[2]}`;
    }
  }
  return locals[0] ?? 'issue';
}
