/** Building a runner's shell command from a template with `{files}`: shared by every ecosystem. Pure. */
import { SwtError } from '../util/errors.js';
import { shellQuote } from '../util/shell.js';
import type { PathInfo, RoundPlan } from './types.js';
import { posix } from 'node:path';

/** A test file path as a safe shell word: rejects control characters, keeps a leading `-` from reading as an option. */
export function quoteTestFile(file: string): string {
  if (file === '' || /[\u0000-\u001f\u007f]/.test(file)) {
    throw new SwtError('UNSAFE_PATH', `Refusing test file name ${JSON.stringify(file)}: empty or has control characters`);
  }
  return shellQuote(file.startsWith('-') ? `./${file}` : file);
}

/**
 * `template` with `words` (reporter options, then targets) in place of `{files}`; a template
 * without `{files}` gets them appended.
 */
export function fillTemplate(template: string, words: string[]): string {
  const insert = words.filter(Boolean).join(' ');
  const tpl = template.trim();
  return tpl.includes('{files}') ? tpl.split('{files}').join(insert) : `${tpl} ${insert}`.trim();
}

/** `s` matched literally inside a regular expression (Go's RE2, PCRE, Ruby and JS alike). */
export function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** The report file's path under the out dir, quoted. */
export function reportPath(out: string, name: string): string {
  return shellQuote(`${out}/${name}`);
}

/** A path split into directory segments and file name, normalised. */
export function pathInfo(path: string): PathInfo {
  const p = posix.normalize(path.replace(/\\/g, '/')).replace(/^(\.\/)+/, '');
  const segs = p.split('/').filter((s) => s && s !== '.');
  const base = segs.pop() ?? '';
  return { path: [...segs, base].join('/'), dirs: segs, base };
}

/** A shell word boundary before and after a command name, for `recognise` patterns. */
export function commandWord(name: string): RegExp {
  return new RegExp(`(^|[\\s/;&|(])${name}(\\s|$|;|&|\\|)`);
}

/**
 * Where an install's fallback says what it did (air-gapped: installed from what the image holds):
 * a file in the environment image's home, which the pipeline reads back and reports.
 */
export const INSTALL_NOTES_NAME = '.swt-install-notes';
export const INSTALL_NOTES = `"$HOME/${INSTALL_NOTES_NAME}"`;

/** Shell that prints `note` and records it in INSTALL_NOTES. */
export function installNote(note: string): string {
  return `echo ${shellQuote(`swt: ${note}`)} | tee -a ${INSTALL_NOTES}`;
}

/** Where confirmation rounds' hooks and their plan go: the container's /tmp, not the out dir (whose files are read back as reports). */
export const ROUNDS_HOOK_DIR = '/tmp/swt-rounds';
export const ROUNDS_PLAN_FILE = `${ROUNDS_HOOK_DIR}/plan.json`;

/**
 * Shell that writes a rounds hook (`source`, one line per item: commands are single lines) to
 * `file` and the plan to ROUNDS_PLAN_FILE, `&&`-chained so that a /tmp that refuses leaves the run as it was.
 */
export function writeRoundsHook(file: string, source: readonly string[], plan: RoundPlan): string {
  const dir = file.slice(0, file.lastIndexOf('/'));
  return `mkdir -p ${ROUNDS_HOOK_DIR}${dir && dir !== ROUNDS_HOOK_DIR ? ` ${dir}` : ''} && ${writeLines(file, source)} && printf '%s' ${shellQuote(JSON.stringify(plan))} > ${ROUNDS_PLAN_FILE}`;
}

/** Shell that writes `source` (one line per item) to `file`, whose directory exists. */
export function writeLines(file: string, source: readonly string[]): string {
  return `printf '%s\\n' ${source.map(shellQuote).join(' ')} > ${file}`;
}

/** What a round's report adds to the run's report path, before the round's number (roundReport). */
export const ROUND_REPORT_SUFFIX = '.round';

/** Round `round`'s report, beside the run's own (every runner's rounds name theirs so). */
export function roundReport(report: string, round: number): string {
  return `${report}${ROUND_REPORT_SUFFIX}${round}`;
}

/** `prepare` of rounds whose hook the command itself names (its arguments): the hook written, the plan's path by environment. */
export function hookNamedByCommand(file: string, source: readonly string[]): (out: string, plan: RoundPlan) => string {
  return (_out, plan) => ` ${writeRoundsHook(file, source, plan)} && export SWT_ROUNDS=${ROUNDS_PLAN_FILE};`;
}
