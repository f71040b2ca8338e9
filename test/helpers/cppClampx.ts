/**
 * TEST HELPER. Small real C/C++ projects with a real bug (clampx never limits from above) and its
 * fix: CMake + GoogleTest (fetched with FetchContent, as GoogleTest's quickstart does; served by
 * the image's package), CMake + Catch2 (v2, FetchContent too), Meson + GoogleTest, and an
 * autotools C project run by `make check`. Their files at base, the fixed source, and test patches
 * that add one test. One definition for the C integration test.
 */

import { fileDiff } from '../../src/patch/canonical.js';

const HEADER = '#pragma once\n\nint clampx(int x, int lo, int hi);\n';
export const BUGGY_CPP = '#include "clampx.h"\n\nint clampx(int x, int lo, int hi) {\n  if (x < lo) return lo;\n  return x;\n}\n';
export const FIXED_CPP = '#include "clampx.h"\n\nint clampx(int x, int lo, int hi) {\n  if (x < lo) return lo;\n  if (x > hi) return hi;\n  return x;\n}\n';

const GTEST_CMAKE = [
  'cmake_minimum_required(VERSION 3.14)',
  'project(clampx CXX)',
  'set(CMAKE_CXX_STANDARD 17)',
  'include(FetchContent)',
  'FetchContent_Declare(googletest URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.zip)',
  'FetchContent_MakeAvailable(googletest)',
  'add_library(clampx src/clampx.cpp)',
  'target_include_directories(clampx PUBLIC src)',
  'enable_testing()',
  'add_executable(clampx_test tests/clampx_test.cpp)',
  'target_link_libraries(clampx_test clampx GTest::gtest_main)',
  'include(GoogleTest)',
  'gtest_discover_tests(clampx_test)',
  '',
].join('\n');

const GTEST_TEST = '#include <gtest/gtest.h>\n#include "clampx.h"\n\nTEST(Clamp, Inside) { EXPECT_EQ(5, clampx(5, 0, 10)); }\n';

/** A test patch appending `lines` to `file`, whose text is `before`. */
function append(file: string, before: string, lines: string[]): string {
  return fileDiff({ path: file, before, after: `${before}\n${lines.join('\n')}\n` });
}

export const GTEST_BASE: Record<string, string> = {
  'CMakeLists.txt': GTEST_CMAKE,
  'src/clampx.h': HEADER,
  'src/clampx.cpp': BUGGY_CPP,
  'tests/clampx_test.cpp': GTEST_TEST,
};
export const GTEST_ABOVE = append('tests/clampx_test.cpp', GTEST_TEST, ['TEST(Clamp, Above) { EXPECT_EQ(10, clampx(15, 0, 10)); }']);

const CATCH2_CMAKE = [
  'cmake_minimum_required(VERSION 3.14)',
  'project(clampx CXX)',
  'include(FetchContent)',
  'FetchContent_Declare(Catch2 GIT_REPOSITORY https://github.com/catchorg/Catch2.git GIT_TAG v2.13.10)',
  'FetchContent_MakeAvailable(Catch2)',
  'add_library(clampx src/clampx.cpp)',
  'target_include_directories(clampx PUBLIC src)',
  'enable_testing()',
  'add_executable(clampx_tests tests/main.cpp tests/test_clampx.cpp)',
  'target_link_libraries(clampx_tests clampx Catch2::Catch2)',
  'include(Catch)',
  'catch_discover_tests(clampx_tests)',
  '',
].join('\n');

// Catch2's main in a file of its own, as its docs advise: a test file's change does not recompile it.
const CATCH2_MAIN = '#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n';
const CATCH2_TEST = '#include <catch2/catch.hpp>\n#include "clampx.h"\n\nTEST_CASE("clamp keeps a value inside") { REQUIRE(clampx(5, 0, 10) == 5); }\n';

export const CATCH2_BASE: Record<string, string> = {
  'CMakeLists.txt': CATCH2_CMAKE,
  'src/clampx.h': HEADER,
  'src/clampx.cpp': BUGGY_CPP,
  'tests/main.cpp': CATCH2_MAIN,
  'tests/test_clampx.cpp': CATCH2_TEST,
};
export const CATCH2_ABOVE = append('tests/test_clampx.cpp', CATCH2_TEST, ['TEST_CASE("clamp limits from above") { CHECK(clampx(15, 0, 10) == 10); }']);

const MESON = [
  "project('clampx', 'cpp')",
  "gtest = dependency('gtest', main: true)",
  "lib = static_library('clampx', 'src/clampx.cpp')",
  "t = executable('clampx_test', 'tests/clampx_test.cpp', link_with: lib, include_directories: include_directories('src'), dependencies: gtest)",
  "test('clampx', t, protocol: 'gtest')",
  '',
].join('\n');

export const MESON_BASE: Record<string, string> = { 'meson.build': MESON, 'src/clampx.h': HEADER, 'src/clampx.cpp': BUGGY_CPP, 'tests/clampx_test.cpp': GTEST_TEST };
export const MESON_ABOVE = GTEST_ABOVE;

export const BUGGY_C = 'int clampc(int x, int lo, int hi) {\n  if (x < lo) return lo;\n  return x;\n}\n';
export const FIXED_C = 'int clampc(int x, int lo, int hi) {\n  if (x < lo) return lo;\n  if (x > hi) return hi;\n  return x;\n}\n';

const AUTOMAKE_TEST = '#include <stdio.h>\nint clampc(int x, int lo, int hi);\nint main(void) {\n  if (clampc(5, 0, 10) != 5) { puts("clampc(5, 0, 10)"); return 1; }\n  return 0;\n}\n';
const ABOVE_C = '#include <stdio.h>\nint clampc(int x, int lo, int hi);\nint main(void) {\n  if (clampc(15, 0, 10) != 10) { printf("clampc(15, 0, 10) = %d, want 10\\n", clampc(15, 0, 10)); return 1; }\n  return 0;\n}\n';

export const AUTOMAKE_BASE: Record<string, string> = {
  'configure.ac': 'AC_INIT([clampc], [1.0])\nAM_INIT_AUTOMAKE([foreign subdir-objects])\nAC_PROG_CC\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n',
  'Makefile.am': 'check_PROGRAMS = tests/test_inside\ntests_test_inside_SOURCES = tests/test_inside.c src/clampc.c\nTESTS = $(check_PROGRAMS)\n',
  'src/clampc.c': BUGGY_C,
  'tests/test_inside.c': AUTOMAKE_TEST,
};
/** A new test program, and its place in Makefile.am (a test patch may touch the build's test list). */
export const AUTOMAKE_ABOVE =
  fileDiff({ path: 'Makefile.am', before: AUTOMAKE_BASE['Makefile.am']!, after: AUTOMAKE_BASE['Makefile.am']!.replace('tests/test_inside\n', 'tests/test_inside tests/test_above\ntests_test_above_SOURCES = tests/test_above.c src/clampc.c\n') }) +
  fileDiff({ path: 'tests/test_above.c', before: null, after: ABOVE_C });
