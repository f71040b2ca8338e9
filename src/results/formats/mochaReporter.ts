/**
 * swt-bot's own mocha reporter, written into the run's out dir and named with `--reporter <path>`.
 * Built-in reporters differ by version (xunit has no file per test with several files; old
 * versions ignore `output=` and print XML to stdout); runner events and `test.file` are the same
 * from mocha 1.x to 12.x, so this reporter gives every version's results with their files.
 *
 * It is CommonJS in ES5 (old mocha runs on old Node, and mocha 9+ loads reporters with require)
 * and writes one JSON object per line to `mocha.jsonl` beside itself, appending synchronously so a
 * run that dies midway keeps what it reported; when that file cannot be written, the same lines go
 * to stdout behind MOCHA_MARKER. Records:
 * - `{"event":"start"}` and `{"event":"end"}` (a report without `end` is incomplete);
 * - `{"event":"test","file","title":[suites…, test],"state":"passed"|"failed"|"pending","err"?}`;
 *   a test can be reported twice (passed, then failed by `--check-leaks` or a late error): the
 *   failure wins; a failed hook fails the tests it kept from running (`"hook"` names it);
 * - `{"event":"hook","file","title","err"}` for a hook failure that failed no test;
 * - `{"event":"load-error","file","err"}` for a test file that failed to load;
 * - `{"event":"error","err"}` for an error outside any test.
 *
 * Named with `--require` as well, it wraps mocha's file loading so that each test file loads on
 * its own: a file that throws while loading is recorded and the others still run (mocha itself
 * stops the whole run). Its stdout is small on purpose (failures and a summary): mocha 1.x's
 * `mocha` wrapper leaves its child's output pipe unread.
 */

export const MOCHA_REPORTER_FILE = 'swt-mocha-reporter.cjs';
export const MOCHA_REPORT_FILE = 'mocha.jsonl';
export const MOCHA_MARKER = '##swt-mocha## ';

export const MOCHA_REPORTER_SOURCE = String.raw`'use strict';
// swt-bot mocha reporter (see src/results/formats/mochaReporter.ts): JSON lines in ${MOCHA_REPORT_FILE} beside this file.
var fs = require('fs');
var path = require('path');

var OUT = path.join(__dirname, '${MOCHA_REPORT_FILE}');
var MARKER = '${MOCHA_MARKER}';
var HOOK = /"(before|after) (all|each)" hook/;
var fd;
var loadErrors = 0;

function write(rec) {
  var line = JSON.stringify(rec) + '\n';
  if (fd === undefined) {
    try { fd = fs.openSync(OUT, 'a'); } catch (e) { fd = null; }
  }
  if (fd !== null) {
    try { fs.writeSync(fd, line); return; } catch (e) { fd = null; }
  }
  process.stdout.write(MARKER + line);
}
function say(text) {
  try { process.stdout.write(text + '\n'); } catch (e) { /* output is best effort */ }
}
function errOf(err) {
  if (err === null || err === undefined || typeof err !== 'object') return { message: String(err) };
  var e = { message: err.message === undefined ? String(err) : String(err.message) };
  if (err.name) e.name = String(err.name);
  if (err.code) e.code = String(err.code);
  if (err.timeout || /^timeout of \d+ms exceeded/i.test(e.message)) e.timeout = true;
  if (err.stack) e.stack = String(err.stack).split('\n').slice(0, 12).join('\n');
  return e;
}
function indent(text) {
  return String(text).split('\n').map(function (l) { return '      ' + l; }).join('\n');
}
function loadError(file, err) {
  var e = errOf(err);
  loadErrors++;
  write({ event: 'load-error', file: String(file), err: e });
  try { process.stderr.write('swt: ' + file + ' failed to load:\n' + indent(e.stack || e.message) + '\n'); } catch (x) { /* best effort */ }
}

// Each test file loads on its own, so one that throws does not keep the others from running.
function patchLoading(Mocha) {
  var proto = Mocha && Mocha.prototype;
  if (!proto || proto.__swtOneByOne) return;
  proto.__swtOneByOne = true;
  var loadFiles = proto.loadFiles;
  if (typeof loadFiles === 'function') {
    proto.loadFiles = function (fn) {
      var all = this.files.slice();
      var ok = [];
      for (var i = 0; i < all.length; i++) {
        this.files = [all[i]];
        try { loadFiles.call(this); ok.push(all[i]); } catch (e) { loadError(all[i], e); }
      }
      this.files = ok;
      if (fn) fn();
    };
  }
  var loadFilesAsync = proto.loadFilesAsync;
  if (typeof loadFilesAsync === 'function') {
    proto.loadFilesAsync = function () {
      var self = this;
      var args = arguments;
      var all = self.files.slice();
      var ok = [];
      var i = 0;
      function next() {
        if (i >= all.length) { self.files = ok; return Promise.resolve(); }
        var file = all[i++];
        self.files = [file];
        var p;
        try { p = Promise.resolve(loadFilesAsync.apply(self, args)); } catch (e) { p = Promise.reject(e); }
        return p.then(function () { ok.push(file); }, function (e) { loadError(file, e); }).then(next);
      }
      return next();
    };
  }
}
// mocha is loaded before its --require modules; it may sit under another name (an npm alias).
Object.keys(require.cache || {}).forEach(function (k) {
  var M = /[\\\/]lib[\\\/]mocha\.c?js$/.test(k) && require.cache[k].exports;
  if (typeof M === 'function' && M.Runner && M.prototype && typeof M.prototype.loadFiles === 'function') patchLoading(M);
});

function SwtReporter(runner) {
  var reported = [];
  var failed = [];
  var counts = { passed: 0, failed: 0, pending: 0 };

  function fileOf(r) {
    for (var n = r; n; n = n.parent) if (n.file) return String(n.file);
    return null;
  }
  function titleOf(r) {
    // --parallel hands the reporter copies without their suites, but with the path (mocha >= 8).
    if (r && typeof r.titlePath === 'function') {
      try {
        var path = r.titlePath();
        if (path && path.length) return path.filter(function (t) { return t; }).map(String);
      } catch (e) {}
    }
    var parts = [];
    for (var n = r; n && !n.root; n = n.parent) if (n.title) parts.unshift(String(n.title));
    return parts;
  }
  function report(test, state, err, hook) {
    var rec = { event: 'test', file: fileOf(test), title: titleOf(test), state: state };
    if (err !== undefined) rec.err = errOf(err);
    if (hook) rec.hook = hook;
    write(rec);
    var seen = reported.indexOf(test) >= 0;
    if (!seen) { reported.push(test); counts[state]++; }
    if (state === 'failed' && failed.indexOf(test) < 0) {
      failed.push(test);
      if (seen && counts.passed > 0) { counts.passed--; counts.failed++; }
      say('  not ok ' + rec.title.join(' > ') + (hook ? ' (' + hook + ')' : '') + '\n' + indent(rec.err.stack || rec.err.message));
    }
  }
  function testsIn(suite, out) {
    var i;
    for (i = 0; suite.tests && i < suite.tests.length; i++) out.push(suite.tests[i]);
    for (i = 0; suite.suites && i < suite.suites.length; i++) testsIn(suite.suites[i], out);
    return out;
  }
  function hookFailed(hook, err) {
    var m = HOOK.exec(String(hook.title || hook.originalTitle || ''));
    var kind = m ? '"' + m[1] + ' ' + m[2] + '" hook' : 'hook';
    // --check-leaks blames the hook after it ran: nothing was kept from running.
    var leak = err && /^global leak(s|\(s\))? detected/i.test(String(err.message));
    var scope = hook.parent && !leak ? testsIn(hook.parent, []) : [];
    var hit = [];
    for (var i = 0; i < scope.length; i++) {
      var t = scope[i];
      // A failed "before" or "after each" hook keeps the tests it has not reached from running;
      // a failed "after all" hook fails the tests it tears down; "after each" also fails the test it ran after.
      var current = hook.ctx && hook.ctx.currentTest === t;
      if (reported.indexOf(t) < 0 || (m && m[1] === 'after' && (m[2] === 'all' || current))) hit.push(t);
    }
    for (var j = 0; j < hit.length; j++) report(hit[j], 'failed', err, kind);
    if (!hit.length) {
      var rec = { event: 'hook', file: fileOf(hook), title: titleOf(hook), err: errOf(err) };
      write(rec);
      say('  not ok ' + rec.title.join(' > ') + '\n' + indent(rec.err.stack || rec.err.message));
    }
  }

  write({ event: 'start' });
  runner.on('pass', function (test) { report(test, 'passed'); });
  runner.on('pending', function (test) { report(test, 'pending'); });
  runner.on('fail', function (r, err) {
    if (r && r.type === 'hook') return hookFailed(r, err);
    if (r && fileOf(r)) return report(r, 'failed', err);
    var e = errOf(err);
    write({ event: 'error', title: r ? titleOf(r) : [], err: e });
    say('  error ' + (r && r.title ? r.title : '') + '\n' + indent(e.stack || e.message));
  });
  runner.on('end', function () {
    write({ event: 'end' });
    // Registered before mocha's own end handler: a file that failed to load fails the run's exit code too.
    if (loadErrors && typeof runner.failures === 'number') runner.failures += loadErrors;
    say('\n  ' + counts.passed + ' passing, ' + counts.failed + ' failing, ' + counts.pending + ' pending');
  });
}

module.exports = SwtReporter;
`;

/**
 * The reporter as one line (full-line `//` comments dropped, lines joined), so the command that
 * writes it stays a single line.
 */
export function mochaReporterOneLine(): string {
  return MOCHA_REPORTER_SOURCE.split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('//'))
    .join(' ');
}
