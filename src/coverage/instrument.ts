/**
 * Wrapping a test command so it also counts lines: Python through `trace` (pytest), Go through
 * its own -coverprofile, C and C++ through gcc's gcov (the ecosystem's setup instruments the
 * build), everything else Node runs through NODE_V8_COVERAGE. Scripts travel inside the command as quoted
 * here-documents, so nothing else enters the sandbox. Pure.
 */
import type { RunnerKind } from '../results/types.js';
import { ecosystemOfRunner } from '../ecosystems/index.js';
import { SwtError } from '../util/errors.js';
import { DEFAULT_OUT_DIR } from '../harness/runners.js';
import { shellQuote } from '../util/shell.js';
import { SANDBOX_REPO_ROOT } from '../util/repoPath.js';
import { parsePythonCounts, SITECUSTOMIZE } from './pythonTrace.js';
import { COLLECT_JS, PRELOAD_JS } from './v8Scripts.js';
import { coverPackages } from './goCover.js';
import { gcovCollect, GCOV_FILE } from './gcov.js';

export type Counter = 'python-trace' | 'v8' | 'go-cover' | 'gcov';

/** Under the out dir, so the harness brings it back with the reports. */
export const COVERAGE_OUT = 'swt-coverage';
const WORK = '/tmp/swt-coverage';
const EOF_MARK = 'SWT_COVERAGE_EOF';
/** Every coverage command sets this variable: how timing tells coverage runs from test runs. */
export const COVERAGE_MARKER = 'SWT_COV_TARGETS=';

/** The line counter of the runner's ecosystem; throws COVERAGE_UNSUPPORTED, with the reason, where none is. */
export function counterFor(kind: RunnerKind): Counter {
  return coverageOf(kind).counter;
}

/** The counter and the ecosystem's set-up for it (shell that instruments its build, if it needs one). */
export function coverageOf(kind: RunnerKind): { counter: Counter; setup?: string } {
  const ecosystem = ecosystemOfRunner({ kind });
  if (!ecosystem) throw new SwtError('COVERAGE_UNSUPPORTED', 'change coverage is not measured for file-level runs (a test command no runner of swt reads)');
  const support = ecosystem.coverage;
  if (support.counter === null) throw new SwtError('COVERAGE_UNSUPPORTED', `change coverage is not measured for ${ecosystem.language}: ${support.reason}`);
  return { counter: support.counter, setup: support.setup };
}

const GCOV_SOURCE = /\.(c|h|cc|cpp|cxx|c\+\+|hh|hpp|hxx|h\+\+|ipp|tpp|inl)$/i;

/** Source files a counter can count (others are never executed as code: docs, changelogs, data). */
export function countable(counter: Counter, path: string): boolean {
  if (counter === 'go-cover') return /\.go$/.test(path);
  if (counter === 'gcov') return GCOV_SOURCE.test(path);
  return counter === 'python-trace' ? /\.py$/.test(path) : /\.([cm]?[jt]sx?)$/.test(path);
}

function hereDoc(path: string, body: string): string {
  if (body.split('\n').includes(EOF_MARK)) throw new Error('script contains the here-document marker');
  return `cat > ${shellQuote(path)} <<'${EOF_MARK}'\n${body}\n${EOF_MARK}`;
}

/**
 * `command` (one built by buildTestCommand) with line counting of `targets` around it; `setup`, the
 * ecosystem's, runs first in the same shell.
 */
export function withCoverage(counter: Counter, command: string, targets: readonly string[], setup?: string): string {
  const out = `${DEFAULT_OUT_DIR}/${COVERAGE_OUT}`;
  const common = `${COVERAGE_MARKER}${shellQuote(JSON.stringify(targets))} SWT_COV_ROOT=${SANDBOX_REPO_ROOT}`;
  if (counter === 'gcov') {
    // The tests' exit status is the run's; gcov reads what they wrote beside the objects after.
    return [`mkdir -p ${out}`, `export ${common}`, ...(setup ? [setup] : []), `( ${command} ); swt_rc=$?`, gcovCollect(SANDBOX_REPO_ROOT, `${out}/${GCOV_FILE}`), 'exit $swt_rc'].join('\n');
  }
  if (counter === 'go-cover') {
    // go test takes its coverage flags from GOFLAGS too: the harness's command stays as it is.
    const flags = `-covermode=count -coverpkg=${coverPackages(targets).join(',')} -coverprofile=${out}/go.cov`;
    return [`mkdir -p ${out}`, `export ${common} GOFLAGS=${shellQuote(flags)}"\${GOFLAGS:+ $GOFLAGS}"`, `( ${command} )`].join('\n');
  }
  if (counter === 'python-trace') {
    return [
      `mkdir -p ${WORK}/py ${out}`,
      hereDoc(`${WORK}/py/sitecustomize.py`, SITECUSTOMIZE),
      `export ${common} SWT_COV_OUT=${out} PYTHONPATH="${WORK}/py\${PYTHONPATH:+:$PYTHONPATH}"`,
      `( ${command} )`,
    ].join('\n');
  }
  return [
    `mkdir -p ${WORK}/v8 ${out}`,
    hereDoc(`${WORK}/preload.cjs`, PRELOAD_JS),
    hereDoc(`${WORK}/collect.cjs`, COLLECT_JS),
    `export ${common} SWT_COV_V8_DIR=${WORK}/v8 NODE_V8_COVERAGE=${WORK}/v8 NODE_OPTIONS="--require=${WORK}/preload.cjs\${NODE_OPTIONS:+ $NODE_OPTIONS}"`,
    `( ${command} ); swt_rc=$?`,
    'unset NODE_V8_COVERAGE NODE_OPTIONS SWT_COV_V8_DIR',
    `node ${WORK}/collect.cjs ${WORK}/v8 ${out}/v8.json`,
    'exit $swt_rc',
  ].join('\n');
}

export { parsePythonCounts };
