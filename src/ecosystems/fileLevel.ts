/**
 * The runner for a command no ecosystem's parser knows (a project's own test script): each test
 * file runs on its own and its exit status is its verdict, one result per file, marked
 * file-level. Knows no language. Pure.
 */
import { fillTemplate, quoteTestFile, reportPath } from './command.js';
import type { OneReport, ReportContext, RunnerDef } from './types.js';
import { excerptForFile, normalizeRel } from '../results/formats/common.js';
import type { TestResult } from '../results/types.js';

export const FILE_LEVEL_KIND = 'file-level';

/** The exit status file's content: `<code>`, written after the command returns. */
export function parseExitStatus(content: string, ctx: ReportContext): OneReport {
  const file = normalizeRel(ctx.file ?? ctx.files[0] ?? '');
  const code = Number(content.trim());
  if (!file || !Number.isInteger(code)) throw new Error(`not an exit status: ${JSON.stringify(content.slice(0, 40))}`);
  const t: TestResult = { id: file, file, outcome: code === 0 ? 'passed' : 'failed', fileLevel: true };
  if (code !== 0) {
    t.failureKind = 'error';
    t.message = `exited with code ${code}${ctx.output ? `\n${excerptForFile(ctx.output, file)}` : ''}`.trim();
  }
  return { tests: [t], fileErrors: [], complete: true, errors: [] };
}

export const fileLevel: RunnerDef = {
  kind: FILE_LEVEL_KIND,
  // Never named: chosen when no other runner recognises the command.
  recognise: /(?!)/,
  reportFile: 'exit.txt',
  runsPerFile: () => true,
  exits: true,
  command(spec, files, out, report) {
    const cmd = fillTemplate(spec.template, files.map(quoteTestFile));
    const status = reportPath(out, report);
    return `${cmd}; rc=$?; echo $rc > ${status}; exit $rc`;
  },
  parse: parseExitStatus,
};
