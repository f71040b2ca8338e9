/**
 * vitest's confirmation rounds inside the first run (RunnerDef.roundsInProcess): a reporter of
 * the harness's own wraps the Vitest instance's `close`, which `vitest run` calls once the run is
 * done and its reports written, and first runs the chosen tests again, once per round, through
 * vitest's own API (`runTestSpecifications` with a global name pattern). Each round has only a
 * JUnit reporter like the run's own, writing beside it, and prints nothing; the run's exit
 * status is kept. vitest runs every test file in a new worker (isolate), so a round sees the
 * module state a new process would, without paying node's, vite's and the config's start again.
 * Tests are chosen as jest's are (jestRounds.ts): those of the patched files whose name holds a
 * declared title or a literal of an added line. A vitest without that API (before 3) runs no
 * rounds: its tests rerun as before. Pure.
 */
import { ROUNDS_HOOK_COMMON } from './roundsHookCommon.js';
import { hookNamedByCommand, roundReport } from '../command.js';
import type { RunnerDef } from '../types.js';

/**
 * In the project's node_modules, relative to the run's directory: vite loads a reporter only from
 * where its `server.fs.allow` lets it (the project), not from /tmp, and nothing globs node_modules.
 */
export const VITEST_ROUNDS_FILE = './node_modules/.swt-rounds/vitest-rounds.mjs';

/** An ES module; one statement per line, no line comments: printf writes it line by line. */
export const VITEST_ROUNDS_SOURCE = String.raw`import fs from 'fs';
import path from 'path';
${ROUNDS_HOOK_COMMON}
function usable(ctx) { return ctx && ctx.state && typeof ctx.state.getTestModules === 'function' && typeof ctx.runTestSpecifications === 'function' && typeof ctx.setGlobalTestNamePattern === 'function'; }
function chosenIn(ctx) {
  var tests = []; var modules = [];
  ctx.state.getTestModules().forEach(function (m) {
    if (!plan.lines[path.relative(process.cwd(), m.moduleId).split(path.sep).join('/')]) return;
    for (var t of m.children.allTests()) {
      if (!named(t.fullName) || tests.indexOf(t.fullName) >= 0) continue;
      tests.push(t.fullName);
      if (modules.indexOf(m) < 0) modules.push(m);
    }
  });
  return { tests: tests, modules: modules };
}
async function rounds(ctx, junit) {
  var chosen = chosenIn(ctx);
  if (!chosen.tests.length) return;
  var specs = chosen.modules.map(function (m) { return m.project.createSpecification(m.moduleId); });
  var own = ctx.reporters; var code = process.exitCode;
  var out = process.stdout.write; var err = process.stderr.write;
  process.stdout.write = function () { return true; }; process.stderr.write = function () { return true; };
  ctx.setGlobalTestNamePattern(new RegExp('(?:^| )(?:' + chosen.tests.map(function (n) { return escapeRe(n.split(' > ').join(' ')); }).join('|') + ')$'));
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
  // The command adds the reporter (vitest's `command` with `rounds`).
  prepare: hookNamedByCommand(VITEST_ROUNDS_FILE, VITEST_ROUNDS_SOURCE),
  report: roundReport,
  hookFailed: /vitest-rounds\.mjs/,
  // Process-level state (listeners, timers, patched built-ins) carries over between rounds.
  freshProcess: false,
};
