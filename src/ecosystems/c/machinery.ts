/** C and C++'s dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import type { PathInfo, TestMachinery } from '../types.js';

/** Where a build declares what it finds or fetches (find_package, dependency(), PKG_CHECK_MODULES) or a package manager's list. */
const MANIFESTS = new Set(['CMakeLists.txt', 'meson.build', 'meson_options.txt', 'meson.options', 'configure.ac', 'configure.in', 'conanfile.txt', 'conanfile.py', 'vcpkg.json', 'vcpkg-configuration.json']);

export const cDependencyManifest = (p: PathInfo): boolean => MANIFESTS.has(p.base) || (p.dirs.at(-1) === 'subprojects' && p.base.endsWith('.wrap'));

/**
 * Build files decide which test programs are built, with which flags, and what counts as their
 * verdict (`add_test(NAME t COMMAND true)`, a `check:` target, `-DEXPECT_EQ(a,b)=`); so do the
 * automake test driver and a vendored test framework. Plain sources never count: base's version
 * would replace the fix.
 */
const BUILD_FILES = new Set([...MANIFESTS, 'Makefile.am', 'Makefile', 'GNUmakefile', 'makefile', 'CMakePresets.json', 'test-driver']);
const FRAMEWORK_FILES = new Set(['catch.hpp', 'catch_amalgamated.hpp', 'catch_amalgamated.cpp', 'doctest.h', 'unity.c', 'unity.h', 'unity_internals.h', 'gtest-all.cc', 'gtest_main.cc']);
const FRAMEWORK_DIRS = new Set(['googletest', 'googlemock', 'unity', 'catch2', 'doctest']);

export const cMachinery: TestMachinery = {
  reads: () => [],
  changes: (p) => BUILD_FILES.has(p.base) || p.base.endsWith('.cmake') || FRAMEWORK_FILES.has(p.base) || p.dirs.some((d) => FRAMEWORK_DIRS.has(d.toLowerCase())),
};
