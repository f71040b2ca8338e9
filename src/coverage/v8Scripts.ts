/**
 * What runs inside the sandbox for JavaScript/TypeScript line counts. NODE_V8_COVERAGE makes every
 * Node process write V8's block coverage; a preload (NODE_OPTIONS --require) records the exact code
 * V8 compiled for the target files (runners such as jest and vitest compile transformed code through
 * `vm`, with an inline source map) and lets a SIGTERM'd worker exit normally so its coverage is
 * written. A collector then keeps only the target files' entries and writes one small JSON file.
 * Plain CommonJS, no dependencies: they run on whatever Node the image has.
 */

export const PRELOAD_JS = String.raw`'use strict';
// swt-bot change coverage: record the code V8 compiles for the target files.
(function () {
  var dir = process.env.SWT_COV_V8_DIR;
  if (!dir) return;
  var fs = require('fs'), path = require('path'), url = require('url'), Module = require('module'), vm = require('vm');
  var root = process.env.SWT_COV_ROOT || '/testbed';
  var targets;
  try { targets = new Set(JSON.parse(process.env.SWT_COV_TARGETS || '[]').map(function (t) { return path.join(root, t); })); } catch (e) { return; }
  var seen = new Set();
  var threadId = 0;
  try { threadId = require('worker_threads').threadId; } catch (e) {}
  var me = process.pid + '-' + threadId;
  var n = 0;
  function fileOf(name) {
    if (typeof name !== 'string') return undefined;
    var p = name;
    if (p.indexOf('file:') === 0) { try { p = url.fileURLToPath(p); } catch (e) { return undefined; } }
    return targets.has(p) ? path.relative(root, p) : undefined;
  }
  // Written at once: a process killed later still shows that it ran target code.
  function record(name, code) {
    var file = fileOf(name);
    if (file === undefined || typeof code !== 'string' || seen.has(file + '\0' + code)) return;
    seen.add(file + '\0' + code);
    try { fs.mkdirSync(dir, { recursive: true }); } catch (e) {}
    try { fs.writeFileSync(path.join(dir, 'sources-' + me + '-' + n++ + '.json'), JSON.stringify({ file: file, source: code })); } catch (e) {}
  }
  function nameIn(o) {
    if (typeof o === 'string') return o;
    return o && typeof o === 'object' ? o.filename || o.identifier : undefined;
  }
  var compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) { record(filename, content); return compile.apply(this, arguments); };
  function wrapClass(name) {
    var Orig = vm[name];
    if (typeof Orig !== 'function') return;
    var Wrapped = class extends Orig {
      constructor(code, options) { super(code, options); record(nameIn(options), code); }
    };
    Object.defineProperty(Wrapped, 'name', { value: name });
    vm[name] = Wrapped;
  }
  function wrapFunction(name, optionsAt) {
    var orig = vm[name];
    if (typeof orig !== 'function') return;
    vm[name] = function (code) { record(nameIn(arguments[optionsAt]), code); return orig.apply(this, arguments); };
  }
  wrapClass('Script');
  wrapClass('SourceTextModule');
  wrapFunction('runInThisContext', 1);
  wrapFunction('runInContext', 2);
  wrapFunction('runInNewContext', 2);
  wrapFunction('compileFunction', 2);
  if (typeof Module.syncBuiltinESMExports === 'function') Module.syncBuiltinESMExports();
  // Write the coverage now and say so: what a process counted is complete only with this marker.
  var flushed = false;
  function flush() {
    if (flushed || seen.size === 0) return;
    flushed = true;
    // Stopped after it: Node's own write at exit would take the same file name (pid, millisecond,
    // thread) and, within the same millisecond, replace these counts with the reset ones.
    try { var v8 = require('v8'); v8.takeCoverage(); v8.stopCoverage(); } catch (e) {}
    try { fs.writeFileSync(path.join(dir, 'done-' + me + '.json'), '{}'); } catch (e) {}
  }
  process.on('exit', flush);
  // Pools (vitest's forks, jest's workers) end their children with SIGTERM and a SIGKILL soon
  // after; by default SIGTERM exits without writing coverage at all.
  if (threadId === 0) process.on('SIGTERM', function () { flush(); process.exit(143); });
})();
`;

export const COLLECT_JS = String.raw`'use strict';
// swt-bot change coverage: keep the target files' V8 coverage and the code it refers to.
var fs = require('fs'), path = require('path'), url = require('url');
var dir = process.argv[2], outFile = process.argv[3];
var root = process.env.SWT_COV_ROOT || '/testbed';
var targets = JSON.parse(process.env.SWT_COV_TARGETS || '[]');
var byPath = new Map(targets.map(function (t) { return [path.join(root, t), t]; }));
function targetOf(u) {
  if (typeof u !== 'string') return undefined;
  var p = u;
  if (p.indexOf('file:') === 0) { try { p = url.fileURLToPath(p); } catch (e) { return undefined; } }
  return byPath.get(p);
}
function scriptLength(fns) {
  var n = 0;
  fns.forEach(function (f) { (f.ranges || []).forEach(function (r) { if (r.startOffset === 0 && r.endOffset > n) n = r.endOffset; }); });
  return n;
}
var names = [];
try { names = fs.readdirSync(dir); } catch (e) {}
var recorded = new Map();
var done = new Set();
names.forEach(function (n) {
  var d = /^done-(\d+-\d+)\.json$/.exec(n);
  if (d) done.add(d[1]);
  var m = /^sources-(\d+-\d+)-\d+\.json$/.exec(n);
  if (!m) return;
  try { recorded.set(m[1], (recorded.get(m[1]) || []).concat([JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8'))])); } catch (e) {}
});
// Processes that ran target code but ended before writing all their coverage (killed).
var lost = Array.from(recorded.keys()).filter(function (k) { return !done.has(k); });
var scripts = [];
names.forEach(function (n) {
  var m = /^coverage-(\d+)-\d+-(\d+)\.json$/.exec(n);
  if (!m) return;
  var j;
  try { j = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')); } catch (e) { return; }
  var cache = j['source-map-cache'] || {};
  var sources = recorded.get(m[1] + '-' + m[2]) || [];
  if (lost.indexOf(m[1] + '-' + m[2]) >= 0) return;
  (j.result || []).forEach(function (r) {
    var file = targetOf(r.url);
    if (file === undefined) return;
    var length = scriptLength(r.functions || []);
    var own = sources.filter(function (s) { return s.file === file && s.source.length === length; })[0];
    var cached = cache[r.url] || {};
    scripts.push({ file: file, functions: r.functions, source: own ? own.source : undefined, sourceMap: cached.data || undefined, lineLengths: cached.lineLengths || undefined });
  });
});
var files = {};
byPath.forEach(function (t, abs) { try { files[t] = fs.readFileSync(abs, 'utf8'); } catch (e) {} });
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, JSON.stringify({ version: 1, scripts: scripts, files: files, lost: lost }));
`;
