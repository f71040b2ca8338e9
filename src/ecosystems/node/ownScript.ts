/**
 * A package whose test script runs a tool no runner of swt reads (`standard && brittle test.js`):
 * the tool runs each test file on its own and the exit status is the file's verdict (file-level),
 * instead of a runner the project does not use. Pure.
 */
import type { RunnerSpec } from '../../results/types.js';
import { FILE_LEVEL_KIND } from '../fileLevel.js';

/** Tools a test script runs that are not the tests: linters, type checks, builds, other scripts. */
const NOT_TESTS = new Set(['standard', 'eslint', 'xo', 'prettier', 'tsc', 'tsd', 'tsup', 'attw', 'publint', 'lint-staged', 'npm', 'yarn', 'pnpm', 'bun', 'rimraf', 'echo', 'exit', 'true', 'cd',
  // task runners: what they run is not a tool that takes test files
  'gulp', 'grunt', 'make', 'jake', 'karma', 'turbo', 'nx', 'lerna', 'run-s', 'run-p', 'npm-run-all', 'concurrently']);
/** Coverage and environment wrappers: the tool is the word after them. */
const WRAPPERS = new Set(['c8', 'nyc', 'cross-env', 'npx', 'env']);
/** node itself: `node --test` already judges plain scripts file by file (see the default runner). */
const NODE = /^node$/;
/** A flag kept in the command (`--no-coverage`, `--timeout=5000`, `-r tsm`); files, globs and test folders are left to `{files}`. */
const FLAG = /^--?[\w-]+(=[\w@./:+-]+)?$/;
/** A flag's separate value (`tsm` in `-r tsm`), not a path: no slash, no extension, not a test folder's name. */
const VALUE = /^(?!(tests?|specs?|__tests__)$)[\w@-]+$/;

function keptFlags(args: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (!FLAG.test(args[i]!)) continue;
    kept.push(args[i]!);
    if (!args[i]!.includes('=') && VALUE.test(args[i + 1] ?? '')) kept.push(args[++i]!);
  }
  return kept;
}

/** The test script's tool as a file-level runner (`npx brittle {files}`), or undefined. */
export function ownScriptRunner(pkg: { scripts?: Record<string, unknown> } | undefined): RunnerSpec | undefined {
  const script = pkg?.scripts?.test;
  if (typeof script !== 'string' || /no test specified/.test(script)) return undefined;
  for (const segment of script.split(/&&|\|\||;/).map((s) => s.trim())) {
    const words = segment.split(/\s+/).filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));
    while (words.length && (WRAPPERS.has(words[0]!) || (words[0]!.startsWith('-') && words.length > 1))) words.shift();
    const tool = words[0];
    if (!tool || NOT_TESTS.has(tool) || NODE.test(tool) || !/^[\w@./-]+$/.test(tool)) continue;
    const flags = keptFlags(words.slice(1));
    return { kind: FILE_LEVEL_KIND, template: ['npx', tool, ...flags, '{files}'].join(' '), ecosystem: 'node' };
  }
  return undefined;
}
