/** Ruby's runners: RSpec (its JSON formatter) and minitest (swt's reporter). One file per invocation. Pure. */
import { shellQuote } from '../../util/shell.js';
import { commandWord, fillTemplate, quoteTestFile, reportPath } from '../command.js';
import type { RunnerDef } from '../types.js';
import { MINITEST_REPORT_ENV, MINITEST_REPORTER_FILE, minitestReporterOneLine, parseMinitestJsonl } from './minitest.js';
import { parseRspecJson } from './rspec.js';

const NOT_FOUND = [/^.*\bruby: (No such file or directory|cannot load such file)/m, /bundler: command not found: (rspec|ruby|rake)/, /Could not find gem '[^']+' in locally installed gems/];

export const rspec: RunnerDef = {
  kind: 'rspec',
  recognise: commandWord('rspec'),
  reportFile: 'rspec.json',
  // A spec file that fails to load stops RSpec before any example runs: alone, it stops only itself.
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command(spec, files, out, report) {
    // Our formatter joins the project's own (.rspec's --format); no colour codes in messages.
    return fillTemplate(spec.template, ['--no-color', '--format', 'progress', '--format', 'json', '--out', reportPath(out, report), ...files.map(quoteTestFile)]);
  },
  parse: parseRspecJson,
};

/** minitest has no runner of its own: the template names how to load one test file (`ruby -Ilib -Itest {files}`). */
export const minitest: RunnerDef = {
  kind: 'minitest',
  recognise: /(^|[\s/;&|(])(ruby|rake|m)\s.*(-Itest|test\/|_test\.rb|test_[^\s/]*\.rb|TEST=)|minitest/,
  accepts: (template) => !commandWord('rspec').test(template),
  reportFile: 'minitest.jsonl',
  runsPerFile: () => true,
  notFound: NOT_FOUND,
  command(spec, files, out, report) {
    const env = `${MINITEST_REPORT_ENV}=${reportPath(out, report)} RUBYOPT="-r${out}/${MINITEST_REPORTER_FILE} $RUBYOPT"`;
    return `${env} ${fillTemplate(spec.template, files.map(quoteTestFile))}`;
  },
  prepare: (_spec, out) => ` printf '%s\\n' ${shellQuote(minitestReporterOneLine())} > ${shellQuote(`${out}/${MINITEST_REPORTER_FILE}`)};`,
  parse: parseMinitestJsonl,
};
