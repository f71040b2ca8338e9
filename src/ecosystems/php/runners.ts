/** PHPUnit, one file per invocation (PHPUnit 9 takes one path; a file that does not parse stops the whole run). Pure. */
import { shellQuote } from '../../util/shell.js';
import { commandWord, fillTemplate, quoteTestFile, regexEscape, reportPath } from '../command.js';
import type { RunnerDef } from '../types.js';
import { parsePhpunitJUnit } from './phpunit.js';
import { phpunitRounds } from './rounds.js';

const options = (out: string, report: string) => ['--colors=never', '--do-not-cache-result', '--log-junit', reportPath(out, report)];

export const phpunit: RunnerDef = {
  kind: 'phpunit',
  recognise: /(^|[\s/;&|(])(phpunit|simple-phpunit|pest|paratest)(\s|$|;|&|\|)|artisan\s+test/,
  reportFile: 'junit.xml',
  runsPerFile: () => true,
  notFound: [/Could not open input file: \S*phpunit/, /^.*\bphp: (No such file or directory)/m],
  command: (spec, files, out, report) => fillTemplate(spec.template, [...options(out, report), ...files.map(quoteTestFile)]),
  // `--filter '/^(?:Ns\\FooTest::testBar)(?: with data set .*)?$/'`: PHPUnit matches `Class::method` (a data set's name after it).
  commandForTests(spec, file, ids, out, report) {
    const names = [...new Set(ids.map((id) => (id.includes(' > ') ? id.slice(id.indexOf(' > ') + 3) : id).replace(/ with data set .*$/, '')))];
    const filter = `/^(?:${names.map(regexEscape).join('|')})(?: with data set .*)?$/`;
    return fillTemplate(spec.template, [...options(out, report), '--filter', shellQuote(filter), quoteTestFile(file)]);
  },
  parse: parsePhpunitJUnit,
  // Only when the run has one file: runsPerFile starts a process per file (harness roundsInProcess).
  roundsInProcess: phpunitRounds,
};
