/**
 * jest's confirmation rounds inside the first run (RunnerDef.roundsInProcess): a module preloaded
 * through NODE_OPTIONS (in jest's workers too). Where jest-runner keeps `runTest` in a module of
 * its own (jest 24 to 29), it wraps it: right after a patched file's run, in the same process, it
 * runs that file again once per round, with only the tests whose name holds one of the plan's
 * names (the titles an added line declares, else its literals: a data-driven test's new row),
 * silent, without coverage, without stacks or code frames in the file's formatted failure message
 * (which the rounds never read: they keep each test's own; formatting it took a fifth of
 * path-to-regexp's failing rounds), telling jest nothing, and writes each round's result to a round
 * file (what jest's --json report says of the tests it ran, not of the ones its name pattern
 * skipped: 183 KB a round on path-to-regexp, for 37 of 703; a failure's details may hold what
 * JSON cannot). Once a round's file has declared its tests, the hook drops from jest-circus's tree
 * every test the round does not run and every group left empty (their hooks would not run
 * either), and marks their snapshots checked, as jest does a skipped test's (else the file would
 * be written again, and under -u lose them): jest would otherwise walk, announce and report each
 * skipped one, and path-to-regexp's rounds took twice as long (a round that finds none of its
 * tests reports none, and they rerun). While a round runs, jest-runtime shows no source maps: a
 * round counts for its outcomes, and parsing a large test file's map again for its first stack
 * trace cost a round a third of its time; its traces keep the transformed file's lines. It also
 * wraps @jest/core's runCLI: once the run is done (its report written) it writes those results as the rounds'
 * reports beside the run's own; where a file has none (jest 30, whose runTest is bundled), it
 * calls runCLI again for each round instead, with the same tests (jest's own test locations
 * would cost the run more than the rounds save). jest gives every test file run a new module
 * registry and global either way, so a round sees what a new jest process would, without paying
 * node's, jest's and the transformer's start again; from runTest, not runCLI's configuration,
 * haste map and scheduling either. Pure.
 */
import { ROUNDS_HOOK_COMMON } from './roundsHookCommon.js';
import { ROUNDS_HOOK_DIR, ROUNDS_PLAN_FILE, roundReport, writeRoundsHook } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

const HOOK_FILE = `${ROUNDS_HOOK_DIR}/jest-rounds.cjs`;

/** CommonJS in ES5 (old jest runs on old Node); one statement per line, no line comments: printf writes it line by line. */
export const JEST_ROUNDS_SOURCE = String.raw`'use strict';
var Module = require('module');
var fs = require('fs');
var path = require('path');
${ROUNDS_HOOK_COMMON}
var load = Module._load;
var wrapped = false;
var inRound = false;
var pruning = null;
function quietly(fn) {
  var out = process.stdout.write; var err = process.stderr.write;
  process.stdout.write = function () { return true; }; process.stderr.write = function () { return true; };
  function back(v) { process.stdout.write = out; process.stderr.write = err; return v; }
  return fn().then(back, function (e) { back(); throw e; });
}
function chosenIn(results) {
  var tests = []; var files = [];
  ((results && results.testResults) || []).forEach(function (file) {
    var wanted = plan.lines[relative(file.testFilePath)];
    if (!wanted) return;
    (file.testResults || file.assertionResults || []).forEach(function (t) {
      if (!named(t.fullName) || tests.indexOf(t.fullName) >= 0) return;
      tests.push(t.fullName);
      if (files.indexOf(file.testFilePath) < 0) files.push(file.testFilePath);
    });
  });
  return { tests: tests, files: files };
}
function patternOf(tests) { return '^(?:' + tests.map(escapeRe).join('|') + ')$'; }
function pruningFor(chosen) {
  var p = { files: Object.create(null), tests: Object.create(null) };
  chosen.files.forEach(function (f) { p.files[f] = true; });
  chosen.tests.forEach(function (t) { p.tests[t] = true; });
  return p;
}
function prune(block, titles, dropped) {
  var own = function (t) { var name = titles.concat(t.name).join(' '); if (pruning.tests[name] === true) return true; dropped[name] = true; return false; };
  if (block.tests) block.tests = block.tests.filter(own);
  var left = block.tests ? block.tests.length : 0;
  block.children = block.children.filter(function (c) {
    if (c.type === 'test') { var kept = own(c); if (kept && !block.tests) left++; return kept; }
    var inside = prune(c, titles.concat(c.name), dropped); left += inside; return inside > 0;
  });
  return left;
}
function circusState(global) {
  var sym = Object.getOwnPropertySymbols(global).filter(function (s) { return String(s) === 'Symbol(JEST_STATE_SYMBOL)'; })[0];
  var state = sym && global[sym];
  return state && state.rootDescribeBlock && Array.isArray(state.rootDescribeBlock.children) ? state : null;
}
function snapshotsOf(global) {
  var matchers = global[Symbol.for('$$jest-matchers-object')];
  var snapshots = matchers && matchers.state && matchers.state.snapshotState;
  return snapshots && typeof snapshots.markSnapshotsAsCheckedForTest === 'function' && typeof snapshots.getUncheckedCount === 'function' ? snapshots : null;
}
function pruneRound(global) {
  var state = circusState(global);
  var snapshots = snapshotsOf(global);
  if (!state || !snapshots) return;
  var dropped = Object.create(null);
  prune(state.rootDescribeBlock, [], dropped);
  if (snapshots.getUncheckedCount() > 0) Object.keys(dropped).forEach(function (name) { snapshots.markSnapshotsAsCheckedForTest(name); });
}
function ran(a) { return a.status === 'passed' || a.status === 'failed'; }
function reported(a) {
  var details = (a.failureDetails || []).map(function (d) { return d && typeof d === 'object' && d.matcherResult ? { matcherResult: {} } : {}; });
  return { ancestorTitles: a.ancestorTitles, title: a.title, fullName: a.fullName, status: a.status, failureMessages: a.failureMessages, failureDetails: details };
}
function withFileRounds(runTest) {
  return function (testPath, globalConfig) {
    var args = Array.prototype.slice.call(arguments);
    return runTest.apply(this, args).then(function (first) {
      if (globalConfig.watch || globalConfig.watchAll || !plan.lines[relative(testPath)]) return first;
      var chosen = chosenIn({ testResults: [Object.assign({}, first, { testFilePath: testPath })] });
      if (!chosen.tests.length) return first;
      var again = args.slice();
      again[1] = Object.assign({}, globalConfig, { testNamePattern: patternOf(chosen.tests), silent: true, collectCoverage: false, noStackTrace: true });
      if (again.length > 5) again[5] = function () { };
      var chosenOnly = pruningFor(chosen);
      var round = 0;
      function next() {
        if (++round > plan.rounds) return undefined;
        inRound = true; pruning = chosenOnly;
        return runTest.apply(null, again).then(function (r) {
          inRound = false; pruning = null;
          var failed = r.numFailingTests > 0 || !!r.testExecError;
          writePart('jest', round, testPath, { name: testPath, status: failed ? 'failed' : 'passed', message: r.failureMessage || '', assertionResults: (r.testResults || []).filter(ran).map(reported) });
          return next();
        });
      }
      return Promise.resolve().then(next).then(function () { return first; }, function () { inRound = false; pruning = null; return first; });
    });
  };
}
function fromFiles(chosen, outputFile) {
  var rounds = partsOf('jest', chosen.files);
  if (rounds) rounds.forEach(function (suites, i) { fs.writeFileSync(outputFile + '.round' + (i + 1), JSON.stringify({ testResults: suites })); });
  return !!rounds;
}
function withRounds(runCLI, argv, projects) {
  if (argv.watch || argv.watchAll || !argv.outputFile) return runCLI(argv, projects);
  return runCLI(argv, projects).then(function (first) {
    var chosen = chosenIn(first.results);
    if (!chosen.tests.length || fromFiles(chosen, argv.outputFile)) return first;
    var pattern = patternOf(chosen.tests);
    var chosenOnly = pruningFor(chosen);
    var round = 0;
    function next() {
      if (++round > plan.rounds) return first;
      var again = {};
      Object.keys(argv).forEach(function (k) { again[k] = argv[k]; });
      again._ = chosen.files; again.runTestsByPath = true; again.testNamePattern = pattern; again.noStackTrace = true;
      again.outputFile = argv.outputFile + '.round' + round;
      pruning = chosenOnly;
      return quietly(function () { return runCLI(again, projects); }).then(function () { pruning = null; return next(); }, function () { pruning = null; return first; });
    }
    return next();
  });
}
function runtimeForRounds(Runtime) {
  var maps = Runtime.prototype.getSourceMaps;
  var own = function () { return inRound ? null : maps.apply(this, arguments); };
  own.swtRounds = true;
  Runtime.prototype.getSourceMaps = own;
  var requireModule = Runtime.prototype.requireModule;
  Runtime.prototype.requireModule = function (from, moduleName) {
    var exp = requireModule.apply(this, arguments);
    if (pruning && moduleName === undefined && pruning.files[from] === true && this._environment) pruneRound(this._environment.global);
    return exp;
  };
}
if (plan) {
  Module._load = function (request, parent) {
    var exp = load.apply(this, arguments);
    var Runtime = request === 'jest-runtime' && exp && (exp.default || exp);
    if (Runtime && Runtime.prototype && typeof Runtime.prototype.getSourceMaps === 'function' && !Runtime.prototype.getSourceMaps.swtRounds) runtimeForRounds(Runtime);
    if (request === './runTest' && parent && /jest-runner[\\/]build[\\/][^\\/]+\.js$/.test(parent.filename || '') && exp && typeof exp.default === 'function' && !exp.default.swtRounds) {
      var each = withFileRounds(exp.default);
      each.swtRounds = true;
      try { exp.default = each; } catch (e) { }
    }
    if (wrapped || request !== '@jest/core' || !exp || typeof exp.runCLI !== 'function') return exp;
    wrapped = true;
    var runCLI = exp.runCLI;
    var own = Object.create(exp);
    Object.defineProperty(own, 'runCLI', { value: function (argv, projects) { return withRounds(runCLI, argv, projects); } });
    return own;
  };
}
`.split('\n');

export const jestRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare(_out: string, plan: RoundPlan): string {
    // A command that sets its own NODE_OPTIONS gets no rounds.
    return ` ${writeRoundsHook(HOOK_FILE, JEST_ROUNDS_SOURCE, plan)} && export NODE_OPTIONS="\${NODE_OPTIONS:+\$NODE_OPTIONS }--require ${HOOK_FILE}" SWT_ROUNDS=${ROUNDS_PLAN_FILE};`;
  },
  report: roundReport,
  hookFailed: /jest-rounds\.cjs/,
  // Process-level state (listeners, timers, patched built-ins) carries over between rounds.
  freshProcess: false,
};
