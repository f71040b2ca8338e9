/** Ruby's runners: RSpec (its JSON formatter) and minitest (swt's reporter). One file per invocation. Pure. */
import { shellQuote } from '../../util/shell.js';
import { commandWord, fillTemplate, quoteTestFile, regexEscape, reportPath } from '../command.js';
import type { RunnerSpec } from '../../results/types.js';
import type { RunnerDef } from '../types.js';
import { MINITEST_REPORT_ENV, MINITEST_REPORTER_FILE, minitestReporterOneLine, parseMinitestJsonl } from './minitest.js';
import { parseRspecJson } from './rspec.js';
import { minitestRounds } from './minitestRounds.js';
import { rspecRounds } from './rspecRounds.js';

const NOT_FOUND = [/^.*\bruby: (No such file or directory|cannot load such file)/m, /bundler: command not found: (rspec|ruby|rake)/, /Could not find gem '[^']+' in locally installed gems/];

/** What follows the file in a `file > rest` id (rspec's full description, minitest's `Class#name`). */
function ownName(id: string): string {
  const i = id.indexOf(' > ');
  return i < 0 ? id : id.slice(i + 3);
}

function rspecCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, examples: readonly string[] = []): string {
  // Our formatter joins the project's own (.rspec's --format); no colour codes in messages.
  const select = examples.flatMap((e) => ['-e', shellQuote(e)]);
  return fillTemplate(spec.template, ['--no-color', '--format', 'progress', '--format', 'json', '--out', reportPath(out, report), ...select, ...files.map(quoteTestFile)]);
}

export const rspec: RunnerDef = {
  kind: 'rspec',
  recognise: commandWord('rspec'),
  reportFile: 'rspec.json',
  // A spec file that fails to load stops RSpec before any example runs: alone, it stops only itself.
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => rspecCommand(spec, files, out, report),
  // `-e <full description>` per test (a substring match: a longer sibling may come along, harmlessly).
  commandForTests: (spec, file, ids, out, report) => rspecCommand(spec, [file], out, report, [...new Set(ids.map(ownName))]),
  parse: parseRspecJson,
  // Only when the run has one file: runsPerFile starts a process per file (harness roundsInProcess).
  roundsInProcess: rspecRounds,
};

function minitestCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, options: string[] = []): string {
  const env = `${MINITEST_REPORT_ENV}=${reportPath(out, report)} RUBYOPT="-r${out}/${MINITEST_REPORTER_FILE} $RUBYOPT"`;
  return `${env} ${fillTemplate(spec.template, [...files.map(quoteTestFile), ...options])}`;
}

/** minitest has no runner of its own: the template names how to load one test file (`ruby -Ilib -Itest {files}`). */
export const minitest: RunnerDef = {
  kind: 'minitest',
  recognise: /(^|[\s/;&|(])(ruby|rake|m)\s.*(-Itest|test\/|_test\.rb|test_[^\s/]*\.rb|TEST=)|minitest/,
  accepts: (template) => !commandWord('rspec').test(template),
  reportFile: 'minitest.jsonl',
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command: (spec, files, out, report) => minitestCommand(spec, files, out, report),
  // `-n '/^(Class#name|…)$/'` after the file goes to minitest's own options; a rake task takes the file's tests whole.
  commandForTests(spec, file, ids, out, report) {
    if (/(^|[\s/;&|(])rake\s/.test(spec.template)) return minitestCommand(spec, [file], out, report);
    const names = [...new Set(ids.map(ownName))];
    return minitestCommand(spec, [file], out, report, ['-n', shellQuote(`/^(${names.map(regexEscape).join('|')})$/`)]);
  },
  prepare: (_spec, out) => ` printf '%s\\n' ${shellQuote(minitestReporterOneLine())} > ${shellQuote(`${out}/${MINITEST_REPORTER_FILE}`)};`,
  parse: parseMinitestJsonl,
  // Only when the run has one file: runsPerFile starts a process per file (harness roundsInProcess).
  roundsInProcess: minitestRounds,
};
