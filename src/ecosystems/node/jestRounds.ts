/**
 * jest's confirmation rounds inside the first run (RunnerDef.roundsInProcess): a module preloaded
 * through NODE_OPTIONS wraps @jest/core's runCLI, and once the run is done (its report written)
 * calls it again for each round, with only the tests of the patched files whose name holds one
 * of the plan's names (the titles an added line declares, else its literals: a data-driven test's
 * new row; jest's own test locations would cost the run more than the rounds save). jest gives every test file a new
 * module registry and global, so a round sees what a new jest process would, without paying
 * node's, jest's and the transformer's start again. Pure.
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
function quietly(fn) {
  var out = process.stdout.write; var err = process.stderr.write;
  process.stdout.write = function () { return true; }; process.stderr.write = function () { return true; };
  function back(v) { process.stdout.write = out; process.stderr.write = err; return v; }
  return fn().then(back, function (e) { back(); throw e; });
}
function chosenIn(results) {
  var tests = []; var files = [];
  ((results && results.testResults) || []).forEach(function (file) {
    var wanted = plan.lines[path.relative(process.cwd(), file.testFilePath).split(path.sep).join('/')];
    if (!wanted) return;
    (file.testResults || file.assertionResults || []).forEach(function (t) {
      if (!named(t.fullName) || tests.indexOf(t.fullName) >= 0) return;
      tests.push(t.fullName);
      if (files.indexOf(file.testFilePath) < 0) files.push(file.testFilePath);
    });
  });
  return { tests: tests, files: files };
}
function withRounds(runCLI, argv, projects) {
  if (argv.watch || argv.watchAll || !argv.outputFile) return runCLI(argv, projects);
  return runCLI(argv, projects).then(function (first) {
    var chosen = chosenIn(first.results);
    if (!chosen.tests.length) return first;
    var pattern = '^(?:' + chosen.tests.map(escapeRe).join('|') + ')$';
    var round = 0;
    function next() {
      if (++round > plan.rounds) return first;
      var again = {};
      Object.keys(argv).forEach(function (k) { again[k] = argv[k]; });
      again._ = chosen.files; again.runTestsByPath = true; again.testNamePattern = pattern;
      again.outputFile = argv.outputFile + '.round' + round;
      return quietly(function () { return runCLI(again, projects); }).then(next, function () { return first; });
    }
    return next();
  });
}
if (plan) {
  Module._load = function (request) {
    var exp = load.apply(this, arguments);
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
