/**
 * jasmine: swt-bot's own reporter (named with `--reporter=<path>`, which jasmine-npm 3 to 5
 * accept and construct with `new`), one file per invocation. Jasmine's reporter events are the
 * same across those versions; its specs name no file before jasmine 5, hence a run per file.
 *
 * The reporter is CommonJS in ES5 and appends JSON lines synchronously to the file named by
 * SWT_JASMINE_OUT (a run that dies midway keeps what it reported):
 * - `{"event":"start"}`, `{"event":"end","status","reason","errors":[…]}` (errors outside any
 *   spec: a file that failed to load, an afterAll at the top level);
 * - `{"event":"spec","title":[suites…, spec],"status":"passed"|"failed"|"pending"|"excluded","message"?}`;
 * - `{"event":"suite-error","title":[suites…],"message"}` for an afterAll that failed in a suite.
 */
import { shellQuote } from '../../util/shell.js';
import { excerptForFile, failureKindOf, firstLines, mergeDuplicates, normalizeRel } from '../../results/formats/common.js';
import { joinJs } from '../../results/formats/junit.js';
import type { FileError, TestResult } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

export const JASMINE_REPORTER_FILE = 'swt-jasmine-reporter.cjs';
export const JASMINE_OUT_ENV = 'SWT_JASMINE_OUT';

const REPORTER_SOURCE = String.raw`'use strict';
var fs = require('fs');
var OUT = process.env.${JASMINE_OUT_ENV};
function write(rec) {
  if (!OUT) return;
  try { fs.appendFileSync(OUT, JSON.stringify(rec) + '\n'); } catch (e) { /* best effort */ }
}
function messageOf(list) {
  if (!list || !list.length) return undefined;
  return list.map(function (f) { return String(f.message) + (f.stack ? '\n' + String(f.stack).split('\n').slice(0, 6).join('\n') : ''); }).join('\n');
}
function SwtJasmineReporter() {
  var suites = [];
  this.jasmineStarted = function () { write({ event: 'start' }); };
  this.suiteStarted = function (r) { suites.push(r.description); };
  this.suiteDone = function (r) {
    if (r.failedExpectations && r.failedExpectations.length) write({ event: 'suite-error', title: suites.slice(), message: messageOf(r.failedExpectations) });
    suites.pop();
  };
  this.specDone = function (r) {
    var rec = { event: 'spec', title: suites.concat([r.description]), status: r.status };
    if (r.status === 'failed') rec.message = messageOf(r.failedExpectations);
    if (r.status === 'pending' && r.pendingReason) rec.message = String(r.pendingReason);
    write(rec);
    if (r.status === 'failed') process.stdout.write('FAILED: ' + rec.title.join(' > ') + '\n' + (rec.message || '') + '\n');
  };
  this.jasmineDone = function (r) {
    write({ event: 'end', status: r && r.overallStatus, reason: r && r.incompleteReason, errors: ((r && r.failedExpectations) || []).map(function (f) { return String(f.message) + (f.stack ? '\n' + String(f.stack).split('\n').slice(0, 6).join('\n') : ''); }) });
  };
}
module.exports = SwtJasmineReporter;
`;

/** The reporter as one shell-quoted line (written by `prepare`): commands are single lines; the source has no line comments. */
export function jasmineReporterWrite(out: string): string {
  return ` printf '%s\\n' ${shellQuote(REPORTER_SOURCE.trim().split('\n').map((l) => l.trim()).join(' '))} > ${shellQuote(`${out}/${JASMINE_REPORTER_FILE}`)};`;
}

interface Rec {
  event: string;
  title?: string[];
  status?: string;
  message?: string;
  reason?: string;
  errors?: string[];
}

export function parseJasmineJsonl(text: string, ctx: ReportContext): OneReport {
  const file = normalizeRel(ctx.file ?? ctx.files[0] ?? '');
  const tests: TestResult[] = [];
  const problems: string[] = [];
  let ended = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let r: Rec;
    try {
      r = JSON.parse(line);
    } catch {
      continue; // a line cut short by a killed run
    }
    if (r.event === 'spec' && r.title && r.status !== 'excluded') {
      const t: TestResult = { id: joinJs(file, r.title), file, outcome: r.status === 'passed' ? 'passed' : r.status === 'failed' ? 'failed' : 'skipped' };
      if (t.outcome === 'failed') {
        t.failureKind = /^Expected\b/.test(r.message ?? '') ? 'assertion' : failureKindOf(r.message ?? '');
        t.message = firstLines(r.message) ?? 'failed';
      } else if (t.outcome === 'skipped') t.message = r.message || 'pending';
      tests.push(t);
    } else if (r.event === 'suite-error') {
      problems.push(`afterAll in ${(r.title ?? []).join(' > ')}: ${r.message ?? ''}`);
    } else if (r.event === 'end') {
      ended = true;
      problems.push(...(r.errors ?? []));
    }
  }
  const fileErrors: FileError[] = problems.length
    ? [{ file, kind: 'collection', message: firstLines(problems.join('\n')) ?? (ctx.output ? excerptForFile(ctx.output, file) : 'test file failed') }]
    : [];
  return { tests: mergeDuplicates(tests), fileErrors, complete: ended, errors: [] };
}
