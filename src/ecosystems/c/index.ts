/**
 * C and C++: CMake (CTest), Meson and autotools `make check`, with per-test results from
 * GoogleTest, Catch2 and doctest. The image holds the toolchain and the frameworks (Debian's), so
 * the install downloads nothing; the warm-up builds everything into the image. Pure.
 */
import { commandWord, installNote } from '../command.js';
import { REGISTRIES } from '../registries.js';
import type { RunnerSpec } from '../../results/types.js';
import type { Ecosystem, PathInfo, RepoFacts, RunnerDef } from '../types.js';
import { cTestFileRules, namedByBuild } from './buildFiles.js';
import { changedDeclarations } from './changedTests.js';
import { isDeclared } from './declarations.js';
import { parseBundle } from './report.js';
import { cDependencyManifest, cMachinery } from './machinery.js';
import { cRounds } from './rounds.js';
import {
  AUTOTOOLS_CONFIGURE,
  CMAKE_BUILD_ALL,
  CMAKE_CONFIGURE,
  MESON_COMPILE,
  GCOV_SETUP,
  MESON_SETUP,
  RECORD_BUILD_INPUTS,
  ctestCommand,
  ctestRerun,
  makeCommand,
  mesonCommand,
} from './runners.js';

/** The image: ours, built from Debian bookworm's packages (imageRecipes.ts `swt-cc`). */
export const C_IMAGE = 'swt-cc:12';
export const REPORT = 'c-tests.txt';

const C_SOURCE = /\.(c|h)$/i;
const CXX_SOURCE = /\.(cc|cpp|cxx|c\+\+|hh|hpp|hxx|h\+\+|ipp|tpp|inl)$/i;
const HEADER = /\.(h|hh|hpp|hxx|h\+\+|ipp|tpp|inl)$/i;

/** CMake tests: CTest's own, or a framework's discovery. */
const CMAKE_TESTS = /\b(enable_testing|add_test|gtest_discover_tests|gtest_add_tests|catch_discover_tests|doctest_discover_tests)\s*\(|include\s*\(\s*CTest\s*\)/i;
const MESON_TESTS = /(^|[^\w.])test\s*\(/m;
const AUTOMAKE_TESTS = /^\s*TESTS\s*\+?=/m;
const MAKE_TARGET = /^(check|test)\s*:/m;

function text(facts: RepoFacts, file: string): string {
  return facts.manifests?.[file] ?? '';
}

function has(facts: RepoFacts, file: string): boolean {
  return facts.files.includes(file);
}

/** Which build system runs the tests: CMake, Meson, automake, a Makefile's own target. */
export function buildSystem(facts: RepoFacts): 'cmake' | 'meson' | 'automake' | 'make' | undefined {
  const cmake = has(facts, 'CMakeLists.txt');
  const meson = has(facts, 'meson.build');
  if (cmake && CMAKE_TESTS.test(text(facts, 'CMakeLists.txt'))) return 'cmake';
  if (meson && MESON_TESTS.test(text(facts, 'meson.build'))) return 'meson';
  if (has(facts, 'Makefile.am') && AUTOMAKE_TESTS.test(text(facts, 'Makefile.am'))) return 'automake';
  if (cmake) return 'cmake';
  if (meson) return 'meson';
  if (has(facts, 'configure.ac') || has(facts, 'Makefile.am')) return 'automake';
  const makefile = ['Makefile', 'GNUmakefile', 'makefile'].find((f) => has(facts, f) && MAKE_TARGET.test(text(facts, f)));
  return makefile && facts.files.some((f) => C_SOURCE.test(f) || CXX_SOURCE.test(f)) ? 'make' : undefined;
}

/** Test-file conventions: `test_x.c`, `x_test.cc`, `x_tests.cpp`, `x_unittest.cpp`, `XTest.cpp`, `x.test.cpp`. */
const TEST_NAME = /^(test_|tests?[-_]?)|([_-](test|tests|unittest|unittests|spec)|Tests?|\.test|\.spec)\.[^.]+$/;
const TEST_DIRS = new Set(['test', 'tests', 'testing', 'unittest', 'unittests', 'unit_tests', 'gtest', 'gtests']);

function isSource(p: PathInfo): boolean {
  return C_SOURCE.test(p.base) || CXX_SOURCE.test(p.base);
}

/** Whether the repository's tests are C++ (any C++ test file; else any C++ source at all). */
function languageOf(testFiles: readonly string[], files: readonly string[]): string {
  const own = testFiles.filter((f) => C_SOURCE.test(f) || CXX_SOURCE.test(f));
  const pool = own.length ? own : files;
  return pool.some((f) => CXX_SOURCE.test(f) && !HEADER.test(f)) ? 'cpp' : 'c';
}

/**
 * Warm-up: configure and build everything (tests too) with ccache, then record the build's inputs
 * by checksum (runners.ts RECORD_BUILD_INPUTS): a run rebuilds only what its state changes.
 */
const WARM =
  `if [ -f CMakeLists.txt ]; then ${CMAKE_CONFIGURE} && ${CMAKE_BUILD_ALL}; fi; ` +
  `if [ -f meson.build ]; then ${MESON_SETUP} && ${MESON_COMPILE}; fi; ` +
  `if [ -f configure.ac ] || [ -f configure.in ]; then ${AUTOTOOLS_CONFIGURE} && make -k check TESTS=; fi; ${RECORD_BUILD_INPUTS}`;

export const ctest: RunnerDef = {
  kind: 'ctest',
  recognise: commandWord('ctest'),
  reportFile: REPORT,
  exits: true,
  command: (spec, files, out, report, opts) => ctestCommand(spec, files, out, report, opts?.rounds ? { rounds: opts.rounds } : {}),
  // The tests by their framework names (ids are `<file> > <name>`), through CTest's -R and GTEST_FILTER.
  commandForTests: (spec, file, ids, out, report) => ctestRerun(spec, [file], ids.map(nameOf), out, report),
  parse: (content, ctx) => parseBundle(content, ctx),
  roundsInProcess: cRounds,
};

export const mesonTest: RunnerDef = {
  kind: 'meson-test',
  recognise: /(^|[\s/;&|(])meson\s+test(\s|$|;|&|\|)/,
  reportFile: REPORT,
  exits: true,
  command: (spec, files, out, report, opts) => mesonCommand(spec, files, out, report, opts?.rounds ? { rounds: opts.rounds } : {}),
  parse: (content, ctx) => parseBundle(content, ctx),
  roundsInProcess: cRounds,
};

export const makeCheck: RunnerDef = {
  kind: 'make-check',
  recognise: /(^|[\s/;&|(])make\s+(?:-\S+\s+)*check(\s|$|;|&|\|)/,
  reportFile: REPORT,
  exits: true,
  command: (spec, files, out, report) => makeCommand(spec, files, out, report),
  parse: (content, ctx) => parseBundle(content, ctx),
};

/** The framework's name of a test id (`tests/a_test.cc > Suite.Name` → `Suite.Name`). */
export function nameOf(id: string): string {
  const i = id.indexOf(' > ');
  return i < 0 ? id : id.slice(i + 3);
}

function defaultRunner(facts: RepoFacts): RunnerSpec {
  switch (buildSystem(facts)) {
    case 'meson':
      return { kind: 'meson-test', template: 'meson test' };
    case 'automake':
      return { kind: 'make-check', template: 'make check' };
    case 'make': {
      const target = ['Makefile', 'GNUmakefile', 'makefile'].some((f) => /^check\s*:/m.test(text(facts, f))) ? 'check' : 'test';
      return { kind: 'make-check', template: `make ${target}` };
    }
    default:
      return { kind: 'ctest', template: 'ctest' };
  }
}

export const c: Ecosystem = {
  id: 'c',
  language: 'C/C++',
  manifests: ['CMakeLists.txt', 'meson.build', 'Makefile.am', 'configure.ac', 'Makefile', 'GNUmakefile', 'makefile'],
  dependencyManifest: cDependencyManifest,
  testMachinery: cMachinery,
  runnerNames: ['ctest', 'meson test', 'make check'],
  ownsPath: isSource,
  detect(facts) {
    switch (buildSystem(facts)) {
      case 'cmake':
        return CMAKE_TESTS.test(text(facts, 'CMakeLists.txt')) ? 20 : 8;
      case 'meson':
        return MESON_TESTS.test(text(facts, 'meson.build')) ? 20 : 8;
      case 'automake':
        return AUTOMAKE_TESTS.test(text(facts, 'Makefile.am')) ? 18 : 6;
      case 'make':
        // A Makefile is many projects' task runner: only a weak say, below another ecosystem's marker.
        return 4;
      default:
        return 0;
    }
  },
  isTestFile: (p, rules) =>
    isSource(p) && !HEADER.test(p.base) && (TEST_NAME.test(p.base) || p.dirs.some((d) => TEST_DIRS.has(d.toLowerCase())) || namedByBuild(p.path, rules)),
  testFileRules: cTestFileRules,
  isTestSupport: (p) => isSource(p) && HEADER.test(p.base) && p.dirs.some((d) => TEST_DIRS.has(d.toLowerCase())),
  languageOf,
  environment: () => ({
    image: C_IMAGE,
    // Nothing to download: the toolchain and the test frameworks come with the image (a FetchContent
    // of GoogleTest or Catch2 is served by them); the warm-up builds.
    install: `cmake --version >/dev/null 2>&1 || ${installNote(`the image has no cmake: the build uses what it holds`)}`,
  }),
  warm: WARM,
  // The build directories and ccache's (in home) are what the warm-up makes: saved, they spare a rebuild.
  savesInstall: true,
  defaultRunner,
  runners: [ctest, mesonTest, makeCheck],
  changedTests(testPatch) {
    const changed = changedDeclarations(testPatch);
    // A test placed in a file counts only for that file's declarations.
    return (t) => isDeclared(nameOf(t.id), t.file ? changed.filter((d) => d.file === t.file) : changed);
  },
  // gcc and clang: a name, member or function that does not exist; the linker: a symbol no object defines
  ownErrorText:
    /\b(was not declared in this scope|use of undeclared identifier|has no member named|no member named .+ in|no matching function for call to|undefined reference to|implicit declaration of function|call to undeclared function|unknown type name)\b/,
  registries: REGISTRIES.c,
  // gcc's own counters: the coverage runs rebuild with --coverage (GCOV_SETUP), gcov reads them.
  coverage: { counter: 'gcov', setup: GCOV_SETUP },
};

