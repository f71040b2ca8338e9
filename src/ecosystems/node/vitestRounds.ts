/**
 * vitest's confirmation rounds inside the first run (RunnerDef.roundsInProcess). Where the project
 * can load it (vitest 3 and 4, with vitest's default test runner), a test runner of the harness's
 * own (VITEST_RUNNER_SOURCE) holds them in the worker that ran the test file: right after the
 * file's run, once per round, it resets the module registry (as vitest does between files) and
 * runs the chosen tests of that file again through vitest's own `startTests`, under ids the main
 * process never hears of; each round's results go to a round file (ROUNDS_HOOK_COMMON), which the
 * reporter (VITEST_ROUNDS_SOURCE) writes as JUnit reports beside the run's own. A round then
 * costs its tests, not a new worker, vite's transforms and the setup files' imports again.
 * Whether the runner can load is looked up as Node's ES module loader will, from the runner's own
 * folder up (pnpm's bin scripts set NODE_PATH, which require honours and import does not: ufo's
 * vitest found @vitest/runner through require and its runner failed to import it). Elsewhere (a
 * runner of the project's own, vitest 5 without `vitest/runners`, a dependency the runner cannot
 * import, a worker that did not write its rounds) the reporter wraps the Vitest instance's `close`, which `vitest run` calls
 * once the run is done and its reports written, and first runs the chosen tests again, once per
 * round, through vitest's API (`runTestSpecifications` with a global name pattern, each test file
 * in a new worker), with only a JUnit reporter like the run's own, writing beside it, printing
 * nothing; the run's exit status is kept. Tests are chosen as jest's are (jestRounds.ts): those
 * of the patched files whose name holds a declared title or a literal of an added line. A vitest
 * without that API (before 3) runs no rounds: its tests rerun as before. Pure.
 */
import { ROUNDS_HOOK_COMMON } from './roundsHookCommon.js';
import { ROUNDS_PLAN_FILE, roundReport, writeLines, writeRoundsHook } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

/**
 * In the project's node_modules, relative to the run's directory: vite loads a reporter or a
 * runner only from where its `server.fs.allow` lets it (the project), not from /tmp, and nothing
 * globs node_modules.
 */
export const VITEST_ROUNDS_FILE = './node_modules/.swt-rounds/vitest-rounds.mjs';
/** Beside the reporter, which names it to vitest. */
const VITEST_RUNNER_FILE = './node_modules/.swt-rounds/vitest-runner.mjs';

/** vitest matches a name pattern against a test's suites and title joined by spaces (after the file's path). */
const VITEST_NAME_PATTERN = String.raw`function namePattern(names) { return new RegExp('(?:^| )(?:' + names.map(function (n) { return escapeRe(n.split(' > ').join(' ')); }).join('|') + ')$'); }`;

/**
 * The workers' side: vitest's own test runner, which after a file's run holds that file's rounds.
 * While a round runs, the runner's methods that the worker wrapped to tell the main process about
 * tasks are the runner's own again (no RPC), and task updates pass only for the run's own tasks
 * (a round's file has another project name, hence other ids); what a round prints goes nowhere.
 * Only in a worker of its own per file (forks or threads, isolated): elsewhere the next file would
 * find the registry the rounds reset, not the one the run left it. Its results (tests that ran:
 * full name as vitest's JUnit writes it, state, first error) go to its round files
 * (ROUNDS_HOOK_COMMON). An ES module; one statement per line, no line comments: printf writes it
 * line by line.
 */
export const VITEST_RUNNER_SOURCE = String.raw`import fs from 'fs';
import path from 'path';
import { VitestTestRunner } from 'vitest/runners';
import { startTests } from '@vitest/runner';
import { Console } from 'console';
import { Writable } from 'stream';
import { vi } from 'vitest';
${ROUNDS_HOOK_COMMON}
${VITEST_NAME_PATTERN}
function tasksOf(task) { return [task].concat((task.tasks || []).reduce(function (all, t) { return all.concat(tasksOf(t)); }, [])); }
function nameOf(test) { var names = []; for (var t = test; t && t !== test.file; t = t.suite) names.unshift(t.name); return names.join(' > '); }
function isolated(runner) { var c = runner.config; var own = c.poolOptions && c.poolOptions[runner.pool]; return /^(forks|threads)$/.test(String(runner.pool)) && c.isolate !== false && !(own && own.isolate === false); }
function ran(t) { return t.type === 'test' && t.mode === 'run' && t.result && (t.result.state === 'pass' || t.result.state === 'fail'); }
function results(file) { return tasksOf(file).filter(ran).map(function (t) { var e = (t.result.errors || [])[0]; return { name: nameOf(t), state: t.result.state, message: e ? String(e.message || e) : '' }; }); }
export default class SwtRoundsRunner extends VitestTestRunner {
  async onAfterRunFiles(files) {
    if (super.onAfterRunFiles) await super.onAfterRunFiles(files);
    if (!plan || this.swtRound || !isolated(this)) return;
    for (var i = 0; i < files.length; i++) { try { await this.swtRounds(files[i]); } catch (e) { } }
  }
  async swtRounds(file) {
    if (!plan.lines[relative(file.filepath)]) return;
    var chosen = [];
    tasksOf(file).filter(ran).forEach(function (t) { var n = nameOf(t); if (named(n) && chosen.indexOf(n) < 0) chosen.push(n); });
    if (!chosen.length) return;
    var runner = this; var base = Object.getPrototypeOf(this); var own = {};
    var known = new Set(tasksOf(file).map(function (t) { return t.id; }));
    Object.keys(this).forEach(function (k) { if (/^on[A-Z]/.test(k) && typeof runner[k] === 'function') own[k] = runner[k]; });
    Object.keys(own).forEach(function (k) { runner[k] = typeof base[k] === 'function' ? base[k] : undefined; });
    if (own.onTaskUpdate) this.onTaskUpdate = function (packs, events) { var p = (packs || []).filter(function (x) { return known.has(x[0]); }); var ev = (events || []).filter(function (x) { return known.has(x[0]); }); return p.length || ev.length ? own.onTaskUpdate.call(runner, p, ev) : undefined; };
    var name = this.config.name; var pattern = this.config.testNamePattern; var chosenPattern = namePattern(chosen);
    var log = globalThis.console; var write = [process.stdout.write, process.stderr.write];
    var sink = new Writable({ write: function (chunk, encoding, done) { done(); } });
    globalThis.console = new Console({ stdout: sink, stderr: sink });
    process.stdout.write = function () { return true; }; process.stderr.write = function () { return true; };
    this.swtRound = true;
    try {
      for (var round = 1; round <= plan.rounds; round++) {
        this.config.name = (name || '') + ' (swt round ' + round + ')';
        this.config.testNamePattern = chosenPattern;
        vi.restoreAllMocks();
        vi.resetModules();
        var again = (await startTests([file.filepath], this))[0];
        writePart('vitest', round, file.filepath, { file: relative(file.filepath), tests: again ? results(again) : [] });
      }
    } finally {
      Object.keys(own).forEach(function (k) { runner[k] = own[k]; });
      this.config.name = name; this.config.testNamePattern = pattern; this.swtRound = false;
      globalThis.console = log; process.stdout.write = write[0]; process.stderr.write = write[1];
    }
  }
}
`.split('\n');

/** The main process's side: a reporter. An ES module; one statement per line, no line comments: printf writes it line by line. */
export const VITEST_ROUNDS_SOURCE = String.raw`import fs from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';
${ROUNDS_HOOK_COMMON}
${VITEST_NAME_PATTERN}
var RUNNER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vitest-runner.mjs');
function usable(ctx) { return ctx && ctx.state && typeof ctx.state.getTestModules === 'function' && typeof ctx.runTestSpecifications === 'function' && typeof ctx.setGlobalTestNamePattern === 'function'; }
function manifest(name) {
  for (var dir = path.dirname(RUNNER); ; dir = path.dirname(dir)) {
    try { return JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')); } catch (e) { if (path.dirname(dir) === dir) return null; }
  }
}
function inWorkers(ctx) {
  var vitest = manifest('vitest');
  if (!vitest || !vitest.exports || !vitest.exports['./runners'] || !manifest('@vitest/runner')) return false;
  var projects = ctx.projects || [];
  return fs.existsSync(RUNNER) && projects.length > 0 && projects.every(function (p) { return p.config && !p.config.runner && !(p.config.browser && p.config.browser.enabled); });
}
function chosenIn(ctx) {
  var tests = []; var modules = [];
  ctx.state.getTestModules().forEach(function (m) {
    if (!plan.lines[relative(m.moduleId)]) return;
    for (var t of m.children.allTests()) {
      if (!named(t.fullName) || tests.indexOf(t.fullName) >= 0) continue;
      tests.push(t.fullName);
      if (modules.indexOf(m) < 0) modules.push(m);
    }
  });
  return { tests: tests, modules: modules };
}
function xml(s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, ''); }
function junitOf(parts) {
  var out = ['<?xml version="1.0" encoding="UTF-8" ?>', '<testsuites name="vitest tests">'];
  parts.forEach(function (p) {
    out.push('<testsuite name="' + xml(p.file) + '" tests="' + p.tests.length + '">');
    p.tests.forEach(function (t) { out.push('<testcase classname="' + xml(p.file) + '" name="' + xml(t.name) + '">' + (t.state === 'fail' ? '<failure message="' + xml(t.message) + '">' + xml(t.message) + '</failure>' : '') + '</testcase>'); });
    out.push('</testsuite>');
  });
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}
function fromWorkers(chosen, junit) {
  var rounds = partsOf('vitest', chosen.modules.map(function (m) { return m.moduleId; }));
  if (rounds) rounds.forEach(function (parts, i) { fs.writeFileSync(junit.reportFile + '.round' + (i + 1), junitOf(parts)); });
  return !!rounds;
}
async function rounds(ctx, junit) {
  var chosen = chosenIn(ctx);
  if (!chosen.tests.length) return;
  if (ctx.swtWorkerRounds && fromWorkers(chosen, junit)) return;
  var specs = chosen.modules.map(function (m) { return m.project.createSpecification(m.moduleId); });
  var own = ctx.reporters; var code = process.exitCode;
  var out = process.stdout.write; var err = process.stderr.write;
  process.stdout.write = function () { return true; }; process.stderr.write = function () { return true; };
  ctx.setGlobalTestNamePattern(namePattern(chosen.tests));
  try {
    for (var round = 1; round <= plan.rounds; round++) {
      var report = new junit.constructor(Object.assign({}, junit.options, { outputFile: junit.reportFile + '.round' + round }));
      await report.onInit(ctx);
      ctx.reporters = [report];
      await ctx.runTestSpecifications(specs, false);
    }
  } finally { process.stdout.write = out; process.stderr.write = err; ctx.reporters = own; process.exitCode = code; ctx.resetGlobalTestNamePattern(); }
}
export default class SwtRounds {
  onInit(ctx) {
    if (!plan || !usable(ctx) || ctx.config.watch || ctx.swtRounds) return;
    ctx.swtRounds = true;
    if (inWorkers(ctx)) { ctx.swtWorkerRounds = true; ctx.projects.forEach(function (p) { p.config.runner = RUNNER; }); }
    var close = ctx.close;
    var done = false;
    ctx.close = function () {
      if (done) return close.apply(ctx, arguments);
      done = true;
      var junit = ctx.reporters.filter(function (r) { return r && r.constructor && r.constructor.name === 'JUnitReporter' && typeof r.reportFile === 'string'; })[0];
      var args = arguments;
      return (junit ? rounds(ctx, junit) : Promise.resolve()).catch(function () { return undefined; }).then(function () { return close.apply(ctx, args); });
    };
  }
}
`.split('\n');

export const vitestRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  // The command adds the reporter (vitest's `command` with `rounds`); the reporter names the runner.
  prepare: (_out: string, plan: RoundPlan) => ` ${writeRoundsHook(VITEST_ROUNDS_FILE, VITEST_ROUNDS_SOURCE, plan)} && ${writeLines(VITEST_RUNNER_FILE, VITEST_RUNNER_SOURCE)} && export SWT_ROUNDS=${ROUNDS_PLAN_FILE};`,
  report: roundReport,
  hookFailed: /vitest-(?:rounds|runner)\.mjs/,
  // Process-level state (listeners, timers, patched built-ins) carries over between rounds.
  freshProcess: false,
};
