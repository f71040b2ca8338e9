/**
 * C and C++ runners: CTest, Meson and autotools `make check`. Each builds the project (its own
 * build directory, kept warm in the environment image), runs its tests and writes one report
 * bundle: the build's output, the runner's own report (CTest's or Meson's JUnit, automake's
 * `.trs` files), the XML every GoogleTest binary writes (GTEST_OUTPUT reaches the binaries whatever
 * runs them) and the requested files' test declarations (which file a test is in). Pure.
 */
import { shellQuote } from '../../util/shell.js';
import { quoteTestFile, regexEscape, reportPath, roundReport } from '../command.js';
import { ROUNDS_FILTER, ROUNDS_REGEX } from './rounds.js';
import type { RunnerSpec } from '../../results/types.js';

/** CMake's build directory of ours (Ninja, ccache): the warm-up fills it, runs rebuild what changed. */
export const CMAKE_BUILD = '.swt-build';
export const MESON_BUILD = '.swt-meson';
/** Per-test timeout (seconds) for CTest and Meson: a hanging test is said as timed out, the rest still run. */
export const TEST_TIMEOUT = 300;

/**
 * The build's inputs as the warm-up built from them, by checksum: the build system's own files
 * (CMakeLists.txt, meson.build, configure.ac, Makefile.am, …) and the C/C++ sources and headers.
 * The record is dated 2 s past the warm-up's build; a run gives the files whose content differs
 * that date, so the build remakes exactly them and what depends on them, whatever date the
 * overlay gave them (it may be older than the build), and once only in a container that runs again.
 */
export const BUILD_INPUTS = '"$HOME/.swt-build-inputs"';
const SOURCES = ['c', 'cc', 'cpp', 'cxx', 'c++', 'h', 'hh', 'hpp', 'hxx', 'h++', 'ipp', 'tpp', 'inl'].map((e) => `-o -name '*.${e}'`).join(' ');
export const RECORD_BUILD_INPUTS =
  "find . \\( -name CMakeLists.txt -o -name '*.cmake' -o -name meson.build -o -name meson_options.txt -o -name meson.options " +
  `-o -name configure.ac -o -name configure.in -o -name Makefile.am -o -name '*.m4' ${SOURCES} \\) -type f -not -path './.git/*' -not -path './.swt-*' ` +
  `-exec md5sum {} + > ${BUILD_INPUTS}; touch -d "@$(( $(date +%s) + 2 ))" ${BUILD_INPUTS}`;
const TOUCH_CHANGED_INPUTS = `[ ! -f ${BUILD_INPUTS} ] || md5sum -c ${BUILD_INPUTS} 2>/dev/null | sed -n 's/: FAILED$//p' | while IFS= read -r f; do touch -c -r ${BUILD_INPUTS} "$f"; done`;

/** Bytes of each test's output CTest keeps in its JUnit. */
const OUTPUT_KEPT = 4_000_000;

/** The line that opens a section of the bundle: `@@swt-c <kind> <name>`. */
export const SECTION = '@@swt-c';

/**
 * The project's own switches, from the `option(…)`s of its root CMakeLists.txt: its tests on
 * (`URIPARSER_BUILD_TESTS`, `ENABLE_CJSON_TEST`, `…_TESTING`; never a SKIP_/DISABLE_/NO_ one, which
 * would turn them off) and its documentation off (uriparser's default-on `URIPARSER_BUILD_DOCS`
 * requires Doxygen, which fails the configure in an image without it).
 */
export const CMAKE_PROJECT_OPTIONS =
  "$(sed -nE 's/^[[:space:]]*option[[:space:]]*\\([[:space:]]*([A-Za-z0-9_]+).*/\\1/Ip' CMakeLists.txt 2>/dev/null | grep -viE '(^|_)(SKIP|DISABLE|NO|WITHOUT)_' | " +
  "sed -nE 's/^(.*(TEST|TESTS|TESTING))$/-D\\1=ON/Ip; s/^(.*(DOC|DOCS|DOCUMENTATION))$/-D\\1=OFF/Ip')";

/**
 * CMake's configure: Ninja, ccache, tests on; a FetchContent of a test framework (GitHub is not
 * reachable) is served by the image's package (CMake ≥ 3.24 asks find_package first).
 */
export const CMAKE_CONFIGURE =
  `cmake -S . -B ${CMAKE_BUILD} -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=ON -DFETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS ` +
  `-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache ${CMAKE_PROJECT_OPTIONS}`;
/** Every target, on past a failed one (`-k 0`): the tests that do build still run. */
export const CMAKE_BUILD_ALL = `cmake --build ${CMAKE_BUILD} -- -k 0`;
export const MESON_SETUP = `CC="ccache cc" CXX="ccache c++" meson setup ${MESON_BUILD} --buildtype=debug`;
export const MESON_COMPILE = `meson compile -C ${MESON_BUILD} --ninja-args=-k0`;
/** autotools: generate and run configure when the tree has no Makefile yet (in-tree, as `make check` expects). */
export const AUTOTOOLS_CONFIGURE = '[ -f Makefile ] || { [ -x configure ] || autoreconf -fi; ./configure CC="ccache cc" CXX="ccache c++"; }';

/** Shell appending a section header to the report `r` (a quoted path). */
function section(r: string, kind: string, name = ''): string {
  return `printf '\\n${SECTION} %s %s\\n' ${shellQuote(kind)} ${name || "''"} >> ${r}`;
}

/**
 * The requested files' test declarations (GoogleTest's `TEST(Suite, Name)`, Catch2's and doctest's
 * `TEST_CASE("name")`), with line numbers: the parser tells from them which file a test is in.
 */
function declarations(r: string, files: readonly string[]): string {
  return files
    .map((f) => `${section(r, 'decl', shellQuote(f))}; grep -nE '^[[:space:]]*[A-Z_]*(TEST|SCENARIO)[A-Z_]*[[:space:]]*\\(' ${quoteTestFile(f)} >> ${r} 2>/dev/null`)
    .join('; ');
}

/** The build step into the bundle, its status after (`configure-failed` when configuring did not succeed). */
function buildStep(r: string, configure: string, build: string): string {
  return (
    `${section(r, 'build')}; if { ${configure}; } >> ${r} 2>&1; then ${build} >> ${r} 2>&1; b=$?; else b=configure-failed; fi; ` +
    `${section(r, 'status', '"$b"')}`
  );
}

/** Every XML GoogleTest wrote into `dir`, one section each. */
function gtestReports(r: string, dir: string): string {
  return `for x in ${dir}/*.xml; do [ -f "$x" ] && { ${section(r, 'gtest', '"${x##*/}"')}; cat "$x" >> ${r}; }; done`;
}

/** The run's prelude: an empty report, a fresh folder for GoogleTest's XML. */
function prelude(r: string, gtestDir: string): string {
  return `: > ${r}; rm -rf ${gtestDir}; mkdir -p ${gtestDir}; ${TOUCH_CHANGED_INPUTS}`;
}

/**
 * GTEST_OUTPUT at that folder, for the tests only (not the build: a discovery's
 * `--gtest_list_tests` would write its listing there): every GoogleTest binary writes its XML.
 */
function gtestOutput(gtestDir: string): string {
  return `export GTEST_OUTPUT=${shellQuote(`xml:${gtestDir}/`)}`;
}

/** The user's command (`ctest -L unit`) with ours after its words. */
function withWords(template: string, words: string[]): string {
  return `${template.replace(/\{files\}/g, '').trim()} ${words.join(' ')}`.trim();
}

function gtestDirOf(out: string): string {
  return `${out}/gtest`;
}

/**
 * Python (the image has it; without it this step is skipped) that prints a shell line for each
 * CTest test running a Catch2 or doctest binary whole (no arguments: a discovered test case has its name): the binary
 * again, in the test's directory, with its framework's JUnit reporter into `$SWT_JUNIT_DIR/<binary>.xml`,
 * so its test cases are judged one by one. GoogleTest binaries need none (GTEST_OUTPUT). Each
 * binary is read once (a discovered binary stands behind each of its tests).
 */
const WHOLE_BINARIES = [
  'import json, shlex, sys, os',
  'kinds = {}',
  'for t in json.load(sys.stdin).get("tests", []):',
  '  cmd = t.get("command") or []',
  '  if len(cmd) != 1 or not os.path.isfile(cmd[0]): continue',
  '  if cmd[0] not in kinds:',
  '    data = open(cmd[0], "rb").read()',
  '    kinds[cmd[0]] = "doctest" if b"[doctest]" in data else "catch2" if b"Catch v" in data or b"Catch2 v" in data else ""',
  '  kind = kinds[cmd[0]]',
  '  if not kind: continue',
  '  out = \'"$SWT_JUNIT_DIR"/\' + shlex.quote(os.path.basename(cmd[0]) + ".xml")',
  '  extra = ["--reporters=junit", "--out=" + out] if kind == "doctest" else ["--reporter", "junit", "--out", out]',
  '  props = {p.get("name"): p.get("value") for p in t.get("properties", [])}',
  '  cwd = props.get("WORKING_DIRECTORY") or os.path.dirname(cmd[0])',
  '  print("( cd %s && timeout %d %s %s ) >/dev/null 2>&1" % (shlex.quote(cwd), TIMEOUT, shlex.quote(cmd[0]), " ".join(extra)))',
].join('\n');

/** Shell writing the whole binaries' commands (WHOLE_BINARIES, from CTest's `listing`) into `script`, once per run. */
function wholeBinaryScript(listing: string, script: string): string {
  return `python3 -c ${shellQuote(WHOLE_BINARIES.replace('TIMEOUT', String(TEST_TIMEOUT)))} < ${listing} > ${script} 2>/dev/null`;
}

/** Catch2's and doctest's JUnit of the binaries CTest ran whole (their commands in `script`), into `dir`, one section each. */
function wholeBinaryReports(r: string, dir: string, script: string): string {
  return (
    `[ ! -s ${script} ] || { mkdir -p ${dir}; SWT_JUNIT_DIR=${dir} sh ${script}; }; ` +
    `for x in ${dir}/*.xml; do [ -f "$x" ] && { ${section(r, 'junit', '"${x##*/}"')}; cat "$x" >> ${r}; }; done`
  );
}

/** Where one test pass (CTest's or Meson's) writes what goes into its bundle: the run's own under the out dir, a round's under `round<N>/`. */
interface PassScratch {
  /** The bundle (quoted path). */
  report: string;
  /** A folder of its own (unquoted): the runner's console and JUnit, GoogleTest's XML, the whole binaries' JUnit. */
  dir: string;
}

/** `rounds` confirmation rounds of `pass`, each into its own bundle and folder, both emptied first. */
function roundPasses(out: string, report: string, rounds: number, pass: (s: PassScratch) => string): string[] {
  return Array.from({ length: rounds }, (_, i) => {
    const s: PassScratch = { report: reportPath(out, roundReport(report, i + 1)), dir: `${out}/round${i + 1}` };
    const gtest = shellQuote(`${s.dir}/gtest`);
    return `: > ${s.report}; rm -rf ${gtest}; mkdir -p ${gtest}; ${pass(s)}`;
  });
}

/** CTest's console in a pass's folder. */
function consoleIn(dir: string): string {
  return shellQuote(`${dir}/ctest.out`);
}

/**
 * CTest over our CMake build: `--output-junit`, each GoogleTest binary's XML, a per-test timeout.
 * `select` (`-R …`) applies when, once built, CTest lists a test it matches; else every test runs.
 * With `rounds`, that many confirmation rounds follow the run, without a build (rounds.ts).
 */
export function ctestCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, opts: { select?: string; rounds?: number } = {}): string {
  const { select, rounds = 0 } = opts;
  const r = reportPath(out, report);
  const g = shellQuote(gtestDirOf(out));
  // CTest's listing, asked once (each ctest start costs ~20 ms): the bundles' and WHOLE_BINARIES' alike.
  const listing = shellQuote(`${out}/ctest-tests.json`);
  const whole = shellQuote(`${out}/whole-binaries.sh`);
  const ctest = (junit: string, sel?: string) => withWords(spec.template, [
    `--test-dir ${CMAKE_BUILD}`,
    `--output-junit ${junit}`,
    `--timeout ${TEST_TIMEOUT}`,
    '--output-on-failure',
    // CTest keeps 1 KB of a passing test's output by default: a Unity binary's per-test lines need it all.
    `--test-output-size-passed ${OUTPUT_KEPT} --test-output-size-failed ${OUTPUT_KEPT}`,
    '--no-tests=ignore',
    ...(sel ? [sel] : []),
  ]);
  const run = (junit: string) => (select ? `if ${ctestLists(select)}; then ${ctest(junit, select)}; else ${ctest(junit)}; fi` : ctest(junit));
  const tests = testsInto({ report: r, dir: out }, files, run, { listing, whole }, 'rc', true);
  // The rounds' tests, chosen before the run (rounds.ts): -R when the run ran one of them (its
  // console's `Start n: <name>` lines, ~3 ms where asking CTest costs ~20), else every test under their GTEST_FILTER.
  const roundSelect = `-R "$${ROUNDS_REGEX}"`;
  const ranOne = `sed -n 's/^ *Start *[0-9]*: //p' ${consoleIn(out)} | grep -qE "$${ROUNDS_REGEX}"`;
  const roundRun = (junit: string) => `if [ -n "$swt_listed" ]; then ${ctest(junit, roundSelect)}; else ${ctest(junit)}; fi`;
  const roundSteps = roundPasses(out, report, rounds, (s) => testsInto(s, files, roundRun, { listing, whole }, 'swt_rc', false));
  const roundsStep = rounds
    ? `if [ -n "$${ROUNDS_REGEX}" ] && [ "$b" != configure-failed ]; then [ -z "$${ROUNDS_FILTER}" ] || export GTEST_FILTER="$${ROUNDS_FILTER}"; ` +
      `swt_listed=; ${ranOne} && swt_listed=1; ${roundSteps.join('; ')}; fi`
    : '';
  return [
    prelude(r, g),
    buildStep(r, `[ -f ${CMAKE_BUILD}/CMakeCache.txt ] || ${CMAKE_CONFIGURE}`, CMAKE_BUILD_ALL),
    tests,
    ...(roundsStep ? [roundsStep] : []),
    `rm -f ${listing} ${whole}`,
    `exit $rc`,
  ].join('; ');
}

/**
 * One CTest pass into its bundle (`s`): the files' declarations, CTest (`run`, given its JUnit's
 * path) with GoogleTest's XML into the pass's folder, then CTest's console, JUnit and listing,
 * every GoogleTest XML and the whole binaries' JUnit, and the pass's exit status (`rc`, a shell
 * variable). The run's own pass (`first`) asks CTest's listing and the whole binaries' commands,
 * prints its console and fails on a failed configure; a round reads the run's.
 */
function testsInto(s: PassScratch, files: readonly string[], run: (junit: string) => string, shared: { listing: string; whole: string }, rc: string, first: boolean): string {
  const { listing, whole } = shared;
  const r = s.report;
  const gtest = `${s.dir}/gtest`;
  const console = consoleIn(s.dir);
  const junit = shellQuote(`${s.dir}/ctest.xml`);
  return [
    declarations(r, files),
    `${gtestOutput(gtest)}; ${rc}=0; ${run(junit)} > ${console} 2>&1 || ${rc}=$?${first ? `; cat ${console}; [ "$b" = configure-failed ] && rc=1` : ''}`,
    // CTest's lines say what its JUnit does not: `***Exception: SegFault`, `***Timeout`.
    `${section(r, 'ctest-output')}; cat ${console} >> ${r}`,
    `${section(r, 'ctest-junit')}; cat ${junit} >> ${r} 2>/dev/null`,
    `${section(r, 'ctest-tests')}; ${first ? `ctest --test-dir ${CMAKE_BUILD} --show-only=json-v1 > ${listing} 2>/dev/null; ${wholeBinaryScript(listing, whole)}; ` : ''}cat ${listing} >> ${r}`,
    gtestReports(r, shellQuote(gtest)),
    wholeBinaryReports(r, shellQuote(`${s.dir}/junit`), whole),
    section(r, 'exit', `"$${rc}"`),
  ].join('; ');
}

/**
 * The tests `names` (as CTest or GoogleTest name them) again: CTest's `-R` for tests it knows by
 * those names (discovered ones), GTEST_FILTER for those inside a binary CTest runs whole (when
 * `-R` finds none, every CTest test runs with the filter: GoogleTest binaries run only the chosen).
 */
export function ctestRerun(spec: RunnerSpec, files: readonly string[], names: readonly string[], out: string, report: string): string {
  const filter = `export GTEST_FILTER=${shellQuote(names.filter((n) => !n.includes(':')).join(':'))}; `;
  const select = `-R ${shellQuote(`^(${names.map(regexEscape).join('|')})$`)}`;
  return `${filter}${ctestCommand(spec, files, out, report, { select })}`;
}

/** Whether `ctest -N` lists a test the selection matches (asked after the build: discovered tests are known then). */
function ctestLists(select: string): string {
  return `ctest --test-dir ${CMAKE_BUILD} -N ${select} 2>/dev/null | grep -q '^ *Test *#'`;
}

/**
 * `meson test` over our Meson build: its JUnit log, and each GoogleTest binary's XML. With
 * `rounds`, that many confirmation rounds follow with no build: `meson test` again with
 * GTEST_FILTER on the GoogleTest tests the patch adds (rounds.ts); none when it adds none.
 */
export function mesonCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, opts: { rounds?: number } = {}): string {
  const { rounds = 0 } = opts;
  const r = reportPath(out, report);
  const g = shellQuote(gtestDirOf(out));
  const test = withWords(spec.template, [`-C ${MESON_BUILD}`, '--no-rebuild', '--print-errorlogs', `-t ${Math.max(1, Math.round(TEST_TIMEOUT / 30))}`]);
  // Each test's programs and their sources (a test is placed in the requested source it is built from): asked once, a Meson start.
  const intro = shellQuote(`${out}/meson-intro.json`);
  const pass = (s: PassScratch, rc: string, first: boolean) => {
    const gtest = `${s.dir}/gtest`;
    return [
      declarations(s.report, files),
      `rm -f ${MESON_BUILD}/meson-logs/testlog.junit.xml; ${gtestOutput(gtest)}; ${rc}=0; ${test}${first ? '' : ` > ${shellQuote(`${s.dir}/meson.out`)} 2>&1`} || ${rc}=$?${first ? '; [ "$b" = configure-failed ] && rc=1' : ''}`,
      `${section(s.report, 'meson-junit')}; cat ${MESON_BUILD}/meson-logs/testlog.junit.xml >> ${s.report} 2>/dev/null`,
      `${section(s.report, 'meson-intro')}; ${first ? `meson introspect ${MESON_BUILD} --tests --targets > ${intro} 2>/dev/null; ` : ''}cat ${intro} >> ${s.report}`,
      gtestReports(s.report, shellQuote(gtest)),
      section(s.report, 'exit', `"$${rc}"`),
    ].join('; ');
  };
  const roundSteps = roundPasses(out, report, rounds, (s) => pass(s, 'swt_rc', false));
  return [
    prelude(r, g),
    buildStep(r, `[ -f ${MESON_BUILD}/build.ninja ] || ${MESON_SETUP}`, MESON_COMPILE),
    pass({ report: r, dir: out }, 'rc', true),
    ...(rounds ? [`if [ -n "$${ROUNDS_FILTER}" ] && [ "$b" != configure-failed ]; then export GTEST_FILTER="$${ROUNDS_FILTER}"; ${roundSteps.join('; ')}; fi`] : []),
    `rm -f ${intro}`,
    'exit $rc',
  ].join('; ');
}

/**
 * `make check` (autotools, or a Makefile's own `check`/`test` target): every `.trs` automake's
 * test driver wrote, with the end of its `.log`; a project without them is judged by the exit status.
 */
export function makeCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string): string {
  const r = reportPath(out, report);
  const g = shellQuote(gtestDirOf(out));
  const make = withWords(spec.template, ['-k']);
  const trs =
    `find . -name '*.trs' -not -path './.git/*' | while read -r t; do ${section(r, 'trs', '"${t#./}"')}; cat "$t" >> ${r}; ` +
    `${section(r, 'log', '"${t#./}"')}; tail -c 4000 "\${t%.trs}.log" >> ${r} 2>/dev/null; done`;
  return [
    prelude(r, g),
    `find . -name '*.trs' -not -path './.git/*' -delete 2>/dev/null`,
    buildStep(r, `[ ! -f configure.ac ] && [ ! -f configure.in ] || ${AUTOTOOLS_CONFIGURE}`, ':'),
    declarations(r, files),
    `${section(r, 'build')}; ${gtestOutput(gtestDirOf(out))}; rc=0; ${make} >> ${r} 2>&1 || rc=$?; [ "$b" = configure-failed ] && rc=1`,
    trs,
    gtestReports(r, g),
    `${section(r, 'exit', '"$rc"')}; exit $rc`,
  ].join('; ');
}

const COVERAGE_FLAGS = ['C_FLAGS', 'CXX_FLAGS', 'EXE_LINKER_FLAGS', 'SHARED_LINKER_FLAGS', 'MODULE_LINKER_FLAGS'].map((v) => `-DCMAKE_${v}=--coverage`).join(' ');
/**
 * Compilers on PATH that add `--coverage -O0` (a Makefile's `cc`, autotools' `ccache cc`; -O0 after
 * the project's -O2 keeps lines apart), in home: the sandbox's /tmp may not execute. ccache is off:
 * it would hand back the warm build's objects, which count nothing.
 */
const COVERING_COMPILERS =
  "mkdir -p $HOME/.swt-gcov/bin && for c in cc gcc c++ g++; do [ -x /usr/bin/$c ] && printf '#!/bin/sh\\nexec /usr/bin/%s \"$@\" --coverage -O0\\n' $c > $HOME/.swt-gcov/bin/$c && chmod +x $HOME/.swt-gcov/bin/$c; done; export PATH=$HOME/.swt-gcov/bin:$PATH CCACHE_DISABLE=1";

/**
 * Before a coverage run: every build of ours counts lines with gcc's `--coverage` (CMake's cache
 * flags, Meson's b_coverage, compilers on PATH and dated objects for make), and no earlier counts are left. The
 * flags change every object, so the run rebuilds the whole project: coverage runs are extra runs
 * beside the judged ones, whose warm build stays as it was.
 */
export const GCOV_SETUP = [
  "find . -name '*.gcda' -not -path './.git/*' -delete 2>/dev/null",
  // make's objects (in the tree) dated 1970: make rebuilds every one, instrumented.
  "find . \\( -name '*.o' -o -name '*.lo' -o -name '*.obj' \\) -not -path './.git/*' -exec touch -c -d @0 {} +",
  COVERING_COMPILERS,
  `if [ -f CMakeLists.txt ]; then { [ -f ${CMAKE_BUILD}/CMakeCache.txt ] || ${CMAKE_CONFIGURE}; } >/dev/null 2>&1; cmake ${CMAKE_BUILD} ${COVERAGE_FLAGS} >/dev/null 2>&1; fi`,
  `if [ -f meson.build ]; then { [ -f ${MESON_BUILD}/build.ninja ] || ${MESON_SETUP}; } >/dev/null 2>&1; meson configure ${MESON_BUILD} -Db_coverage=true >/dev/null 2>&1; fi`,
].join('; ');
