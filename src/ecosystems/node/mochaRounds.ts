/**
 * mocha's confirmation rounds inside the first run (RunnerDef.roundsInProcess): a module the
 * command requires after the harness's reporter wraps mocha's `run`, and once the run is done
 * (its report written, before mocha exits with its failures) runs the chosen tests again, once
 * per round, in a new Mocha with the run's options, its `--file` files first and a name pattern.
 * mocha keeps no module registry of its own, so before each round the hook puts back what the
 * process had once the `--require` modules were loaded and before the first test file was: it
 * drops every module of the project loaded since from require's cache (native addons stay: they
 * cannot load twice; so do the dependencies under node_modules, as vitest's rounds keep them:
 * loading them again cost more than the tests) and every global made since (so `--check-leaks`
 * sees a leak again). The round loads its
 * files with require (an `import()` would find its first copy); an ES module test file fails to
 * load there and gets no round. Process state (listeners, timers, patched built-ins) carries
 * over: a round that differs from the run proves nothing (freshProcess false). The finished
 * runners stop catching uncaught errors during the rounds (they would throw them: their run is
 * over). Each round writes with a copy of the harness's reporter whose report is
 * `mocha.jsonl.round<N>`. Tests are chosen as jest's are (jestRounds.ts). Pure.
 */
import { ROUNDS_HOOK_COMMON } from './roundsHookCommon.js';
import { MOCHA_REPORT_FILE } from '../../results/formats/mochaReporter.js';
import { hookNamedByCommand, ROUNDS_HOOK_DIR, roundReport } from '../command.js';
import type { RunnerDef } from '../types.js';

export const MOCHA_ROUNDS_FILE = `${ROUNDS_HOOK_DIR}/mocha-rounds.cjs`;

/** CommonJS in ES5 (old mocha runs on old Node); one statement per line, no line comments: printf writes it line by line. */
export const MOCHA_ROUNDS_SOURCE = String.raw`'use strict';
var fs = require('fs');
var path = require('path');
${ROUNDS_HOOK_COMMON}
var REPORT = '${MOCHA_REPORT_FILE}';
var modulesBefore = null; var globalsBefore = null;
function snapshot() { if (modulesBefore) return; modulesBefore = Object.keys(require.cache); globalsBefore = Object.getOwnPropertyNames(global); }
function freshState() {
  Object.keys(require.cache).forEach(function (k) { if (modulesBefore.indexOf(k) < 0 && !/\.node$/.test(k) && !/[\\\/]node_modules[\\\/]/.test(k)) delete require.cache[k]; });
  Object.getOwnPropertyNames(global).forEach(function (k) { if (globalsBefore.indexOf(k) < 0) { try { delete global[k]; } catch (e) { return; } } });
}
function quietly(fn, done) {
  var out = process.stdout.write; var err = process.stderr.write;
  process.stdout.write = function () { return true; }; process.stderr.write = function () { return true; };
  fn(function () { process.stdout.write = out; process.stderr.write = err; done(); });
}
function chosenIn(suite, out) {
  (suite.tests || []).forEach(function (t) {
    var file = t.file && relative(t.file);
    if (!file || !plan.lines[file] || !require.cache[path.resolve(String(t.file))]) return;
    var title = t.fullTitle();
    if (!named(title) || out.titles.indexOf(title) >= 0) return;
    out.titles.push(title);
    if (out.files.indexOf(String(t.file)) < 0) out.files.push(String(t.file));
  });
  (suite.suites || []).forEach(function (s) { chosenIn(s, out); });
  return out;
}
function detach(runner) {
  var off = [['uncaughtException', runner && runner.uncaught], ['unhandledRejection', runner && runner.unhandled]].filter(function (l) { return typeof l[1] === 'function' && process.listeners(l[0]).indexOf(l[1]) >= 0; });
  off.forEach(function (l) { process.removeListener(l[0], l[1]); });
  return function () { off.forEach(function (l) { process.on(l[0], l[1]); }); };
}
function reporterFile(first) {
  if (first.options && typeof first.options.reporter === 'string' && /swt-mocha-reporter\.cjs$/.test(first.options.reporter)) return first.options.reporter;
  var at = process.argv.lastIndexOf('--reporter');
  return at > 0 && /swt-mocha-reporter\.cjs$/.test(String(process.argv[at + 1])) ? process.argv[at + 1] : null;
}
function rounds(Mocha, first, runner, finish) {
  var chosen = chosenIn(first.suite, { titles: [], files: [] });
  var reporter = reporterFile(first);
  if (!chosen.titles.length || !reporter || !modulesBefore) return finish();
  var source = fs.readFileSync(reporter, 'utf8');
  var reattach = detach(runner);
  function done() { reattach(); finish(); }
  var round = 0;
  function next() {
    if (++round > plan.rounds) return done();
    var own = path.join(path.dirname(reporter), 'swt-mocha-rounds-reporter' + round + '.cjs');
    fs.writeFileSync(own, source.split("'" + REPORT + "'").join("'" + REPORT + '.round' + round + "'"));
    freshState();
    var options = {}; Object.keys(first.options).forEach(function (k) { options[k] = first.options[k]; });
    options.reporter = own; options.grep = undefined; options.fgrep = undefined; options.invert = false; options.parallel = false;
    var m = new Mocha(options);
    m.swtRound = true;
    m.files = [].concat(first.options.file || []).map(function (f) { return path.resolve(String(f)); }).filter(function (f) { return chosen.files.indexOf(f) < 0; }).concat(chosen.files);
    m.grep(new RegExp('^(?:' + chosen.titles.map(escapeRe).join('|') + ')$'));
    quietly(function (back) { var r; try { r = m.run(function () { detach(r); back(); }); } catch (e) { back(); } }, next);
  }
  next();
}
function wrap(Mocha) {
  var proto = Mocha.prototype;
  if (proto.swtRounds) return;
  proto.swtRounds = true;
  ['loadFiles', 'loadFilesAsync'].forEach(function (name) {
    var load = proto[name];
    if (typeof load === 'function') proto[name] = function () { if (!this.swtRound) snapshot(); return load.apply(this, arguments); };
  });
  var run = proto.run;
  proto.run = function (fn) {
    var self = this;
    if (self.swtRound || !self.options || self.options.parallel || self.options.watch) return run.apply(self, arguments);
    snapshot();
    var runner = run.call(self, function () {
      var args = arguments;
      function finish() { if (typeof fn === 'function') fn.apply(null, args); }
      try { rounds(Mocha, self, runner, finish); } catch (e) { finish(); }
    });
    return runner;
  };
}
if (plan) {
  Object.keys(require.cache || {}).forEach(function (k) {
    var M = /[\\\/]lib[\\\/]mocha\.c?js$/.test(k) && require.cache[k].exports;
    if (typeof M === 'function' && M.Runner && M.prototype && typeof M.prototype.run === 'function') wrap(M);
  });
}
`.split('\n');

export const mochaRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  // The command requires the hook (mocha's `command` with `rounds`).
  prepare: hookNamedByCommand(MOCHA_ROUNDS_FILE, MOCHA_ROUNDS_SOURCE),
  report: roundReport,
  hookFailed: /mocha-rounds\.cjs/,
  // Process-level state (listeners, timers, patched built-ins) carries over between rounds.
  freshProcess: false,
};
