/**
 * `npx <bin>` without npm's own start: a shell function named npx, defined before a Node runner's
 * command (its first run and its reruns alike), runs the project's installed `node_modules/.bin/<bin>`
 * directly, with that directory first on PATH, as npx would. npx costs ~0.4 s a call in a
 * container here: as much as a rerun of a mocha test without it. Anything else (flags, a version
 * or a path, a bin not installed) goes to the real npx. What differs: npm's own npm_* variables
 * are not set. Pure.
 */
import type { RunnerDef } from '../types.js';

/** One line, with a leading space; `set --` prefixes the first word with the bin directory. */
export const LOCAL_NPX =
  ` npx() { case "$1" in ''|-*|*@*|*/*) command npx "$@";; *) if [ -x "node_modules/.bin/$1" ]; then set -- "$PWD/node_modules/.bin/$@"; PATH="$PWD/node_modules/.bin:$PATH" "$@"; else command npx "$@"; fi;; esac; };`;

const CALLS_NPX = /(^|[\s;&|(])npx\s/;

/** `def`, with LOCAL_NPX before its own preparation when a command calls npx. */
export function withLocalNpx(def: RunnerDef): RunnerDef {
  const own = def.prepare;
  return { ...def, prepare: (spec, out) => `${CALLS_NPX.test(spec.template) ? LOCAL_NPX : ''}${own?.(spec, out) ?? ''}` };
}
