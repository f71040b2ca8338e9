/** PHPUnit, one file per invocation (PHPUnit 9 takes one path; a file that does not parse stops the whole run). Pure. */
import { commandWord, fillTemplate, quoteTestFile, reportPath } from '../command.js';
import type { RunnerDef } from '../types.js';
import { parsePhpunitJUnit } from './phpunit.js';

export const phpunit: RunnerDef = {
  kind: 'phpunit',
  recognise: /(^|[\s/;&|(])(phpunit|simple-phpunit|pest|paratest)(\s|$|;|&|\|)|artisan\s+test/,
  reportFile: 'junit.xml',
  runsPerFile: () => true,
  notFound: [/Could not open input file: \S*phpunit/, /^.*\bphp: (No such file or directory)/m],
  command(spec, files, out, report) {
    return fillTemplate(spec.template, ['--colors=never', '--do-not-cache-result', '--log-junit', reportPath(out, report), ...files.map(quoteTestFile)]);
  },
  parse: parsePhpunitJUnit,
};
