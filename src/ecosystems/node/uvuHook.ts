/**
 * uvu prints no names for passing tests, so swt preloads its own hook (NODE_OPTIONS `--require`)
 * that wraps uvu's own `suite()`/`test()` (CommonJS through Module._load, ES modules through a
 * module.register resolve hook that hands importers a wrapping module) and appends one JSON line
 * per event to the file named by SWT_UVU_OUT. uvu's runner is the same in 0.3 to 0.5: each test
 * runs its before.each hooks, its handler, its after.each hooks; the hook's own before.each
 * (registered first) marks the test that starts and its own after.each (registered last, at
 * `.run()`) reports it, so a failing hook fails its test as uvu does. Records:
 * - `{"e":"test","file","suite","name","status":"pass"|"fail"|"skip","type"?,"message"?}`;
 * - `{"e":"queued"|"done","file","suite"}`: a suite's `.run()`, and its after hooks finished;
 * - `{"e":"hook","file","suite","kind","message"}`: a before/after hook threw (uvu 0.5 then
 *   runs none of the suite's tests and still exits 0);
 * - `{"e":"exit","code","exec"}`: the process ended (exec: whether uvu's exec had started).
 * `file` is uvu's own name for the file being loaded (relative to the directory it was given).
 * The hook acts only in the process whose script is uvu's CLI, and takes itself out of the
 * environment there, so processes the tests spawn (and npx itself) are left alone.
 */
import { shellQuote } from '../../util/shell.js';

export const UVU_HOOK_FILE = 'swt-uvu-hook.cjs';
export const UVU_OUT_ENV = 'SWT_UVU_OUT';
/**
 * Set when the command's `-r esm` was dropped: ES module imports then resolve as esm did (`../src` →
 * `../src/index.js`, no extension → `.js`, and `uvu` to its CommonJS build, the one uvu's CLI before
 * 0.5 fills).
 */
export const UVU_ESM_ENV = 'SWT_UVU_ESM';

const HOOK_SOURCE = String.raw`'use strict';
var fs = require('fs');
var Module = require('module');
var url = require('url');
var OUT = process.env.${UVU_OUT_ENV};
var CLI = /(\.bin[\\\/]uvu$|uvu[\\\/]bin\.js$)/i;
var MAIN = /[\\\/]uvu[\\\/]dist[\\\/]index\.m?js$/;
var active = !!OUT && CLI.test(process.argv[1] || '');
var compat = process.env.${UVU_ESM_ENV} === '1';
var execState = 'none';
var wrapped = new WeakMap();
var wrappers = new WeakSet();
function write(rec) {
  try { fs.appendFileSync(OUT, JSON.stringify(rec) + '\n'); } catch (e) { }
}
function describe(err) {
  if (!err || typeof err !== 'object') return { type: typeof err, message: String(err) };
  var stack = typeof err.stack === 'string' ? err.stack.split('\n').slice(1).filter(function (l) { return l.indexOf(__filename) < 0; }).slice(0, 6).join('\n') : '';
  return { type: String(err.name || err.constructor && err.constructor.name || 'Error'), message: String(err.message) + (stack ? '\n' + stack : '') };
}
function fileNow(real) {
  var q = globalThis.UVU_QUEUE || real.QUEUE;
  var g = q && q[globalThis.UVU_INDEX || 0];
  return g && typeof g[0] === 'string' ? g[0] : null;
}
function guard(fn, onError) {
  if (typeof fn !== 'function') return fn;
  return function () {
    var r;
    try { r = fn.apply(this, arguments); } catch (e) { onError(e); throw e; }
    if (r && typeof r.then === 'function') return r.then(undefined, function (e) { onError(e); throw e; });
    return r;
  };
}
function wrapTest(real, rt, suite) {
  var M;
  function fresh() {
    var m = M = { tests: [], only: [], i: -1, cur: null, file: null };
    rt.before.each(function () {
      m.i++;
      m.cur = (m.only.length ? m.only : m.tests)[m.i] || null;
    });
  }
  function emit(m, c) {
    if (c.reported) return;
    c.reported = true;
    var rec = { e: 'test', file: m.file, suite: suite, name: c.name, status: c.errors.length || !c.ran ? 'fail' : 'pass' };
    if (c.errors.length) { var d = describe(c.errors[0]); rec.type = d.type; rec.message = d.message; }
    else if (!c.ran) rec.message = 'a before.each hook failed';
    write(rec);
  }
  function register(kind) {
    return function (name, handler) {
      var c = { name: String(name), errors: [], ran: false };
      M[kind].push(c);
      var h = guard(handler, function (e) { c.errors.push(e); });
      var fn = typeof handler === 'function' ? function () { c.ran = true; return h.apply(this, arguments); } : handler;
      return (kind === 'only' ? rt.only : rt).call(this, name, fn);
    };
  }
  function each(hook) {
    return function (fn) {
      var m = M;
      return hook(guard(fn, function (e) { if (m.cur) m.cur.errors.push(e); }));
    };
  }
  function whole(hook, kind) {
    return function (fn) {
      var m = M;
      return hook(guard(fn, function (e) { var d = describe(e); write({ e: 'hook', file: m.file, suite: suite, kind: kind, message: d.type + ': ' + d.message }); }));
    };
  }
  fresh();
  var t = register('tests');
  t.only = register('only');
  t.skip = function (name) {
    write({ e: 'test', file: fileNow(real), suite: suite, name: String(name), status: 'skip', message: 'test.skip' });
    return rt.skip.apply(this, arguments);
  };
  t.before = whole(rt.before, 'before');
  t.before.each = each(rt.before.each);
  t.after = whole(rt.after, 'after');
  t.after.each = each(rt.after.each);
  t.run = function () {
    var m = M;
    m.file = fileNow(real);
    rt.after.each(function () { if (m.cur) emit(m, m.cur); });
    rt.after(function () {
      (m.only.length ? m.only : m.tests).forEach(function (c) { if (c.ran && !c.reported) emit(m, c); });
      write({ e: 'done', file: m.file, suite: suite });
    });
    if (m.only.length) m.tests.forEach(function (c) { write({ e: 'test', file: m.file, suite: suite, name: c.name, status: 'skip', message: 'not in test.only' }); });
    write({ e: 'queued', file: m.file, suite: suite });
    var r = rt.run.apply(this, arguments);
    fresh();
    return r;
  };
  return t;
}
function wrapModule(real) {
  if (!real || typeof real.suite !== 'function' || wrappers.has(real)) return real;
  var w = wrapped.get(real);
  if (w) return w;
  w = Object.assign({}, real);
  w.suite = function (name) { return wrapTest(real, real.suite.apply(this, arguments), name === undefined ? '' : String(name)); };
  w.test = wrapTest(real, real.test, '');
  w.exec = function () {
    execState = 'running';
    return Promise.resolve(real.exec.apply(this, arguments)).then(function (v) { execState = 'done'; return v; });
  };
  wrapped.set(real, w);
  wrappers.add(w);
  return w;
}
exports.wrapModule = wrapModule;
if (active) {
  delete process.env.${UVU_OUT_ENV};
  delete process.env.${UVU_ESM_ENV};
  process.env.NODE_OPTIONS = String(process.env.NODE_OPTIONS || '').split('--require ' + __filename).join('').trim();
  var load = Module._load;
  Module._load = function (request, parent) {
    var exp = load.apply(this, arguments);
    if (!/uvu|^\.\.?$|dist/.test(String(request))) return exp;
    var file;
    try { file = Module._resolveFilename(request, parent); } catch (e) { return exp; }
    return MAIN.test(file) ? wrapModule(exp) : exp;
  };
  if (typeof Module.register === 'function') {
    var req = 'import { createRequire } from "node:module"; var req = createRequire(' + JSON.stringify(url.pathToFileURL(__filename).href) + ');'
      + ' var hook = req(' + JSON.stringify(__filename) + ');';
    var exp = ' export var suite = w.suite, test = w.test, exec = w.exec;';
    var loader = 'import { fileURLToPath } from "node:url"; var W = "swt-uvu-wrap:"; var COMPAT = ' + compat + ';'
      + ' var REQ = ' + JSON.stringify(req) + '; var EXP = ' + JSON.stringify(exp) + ';'
      + ' export async function resolve(s, c, next) {'
      + ' if (s.startsWith(W)) return { url: s, shortCircuit: true };'
      + ' var r; try { r = await next(s, c); } catch (e) {'
      + '  if (!COMPAT || !/^[.][.]?[/]/.test(s) || !/ERR_UNSUPPORTED_DIR_IMPORT|ERR_MODULE_NOT_FOUND/.test(String(e && e.code))) throw e;'
      + '  for (var x of [".js", ".mjs", "/index.js", "/index.mjs"]) { try { return await next(s.replace(/[/]$/, "") + x, c); } catch (e2) { } }'
      + '  throw e; }'
      + ' if (/[\\/]uvu[\\/]dist[\\/]index[.]mjs$/.test(r.url) && !String(c.parentURL || "").startsWith(W)) return { url: W + r.url, shortCircuit: true };'
      + ' return r; }'
      + ' export async function load(u, c, next) {'
      + ' if (!u.startsWith(W)) return next(u, c);'
      + ' var real = u.slice(W.length);'
      + ' var src = COMPAT'
      + '  ? REQ + " var w = hook.wrapModule(req(" + JSON.stringify(fileURLToPath(real).replace(/[.]mjs$/, ".js")) + "));" + EXP'
      + '  : "import * as real from " + JSON.stringify(real) + "; " + REQ + " var w = hook.wrapModule(real);" + EXP;'
      + ' return { format: "module", source: src, shortCircuit: true }; }';
    try { Module.register('data:text/javascript,' + encodeURIComponent(loader)); } catch (e) { }
  }
  process.on('exit', function (code) { write({ e: 'exit', code: code, exec: execState }); });
}
`;

/** Shell that writes the hook into the out dir (one quoted line: the source has no line comments). */
export function uvuHookWrite(out: string): string {
  return ` printf '%s\\n' ${shellQuote(HOOK_SOURCE.trim().split('\n').map((l) => l.trim()).join(' '))} > ${shellQuote(`${out}/${UVU_HOOK_FILE}`)};`;
}

/** The hook's source, for tests that run it outside the harness. */
export const UVU_HOOK_SOURCE = HOOK_SOURCE;
