/**
 * Test files the root CMakeLists.txt names: the sources of each program an `add_test` runs
 * (tinyxml2's `add_executable(xmltest xmltest.cpp)` + `add_test(NAME xmltest COMMAND xmltest)`),
 * which no naming convention finds. Literal names only: no variable is expanded. Pure.
 */
import type { TestFileRules } from '../types.js';

const SOURCE = /\.(c|cc|cpp|cxx|c\+\+)$/i;
const KEYWORDS = new Set(['WIN32', 'MACOSX_BUNDLE', 'EXCLUDE_FROM_ALL', 'IMPORTED', 'ALIAS', 'GLOBAL']);

/** The arguments of each call of `command` in CMake text (comments out, quotes dropped). */
function calls(text: string, command: string): string[][] {
  const code = text.replace(/#\[(=*)\[[\s\S]*?\]\1\]|#[^\n]*/g, '');
  const re = new RegExp(`\\b${command}\\s*\\(([^)]*)\\)`, 'gi');
  return [...code.matchAll(re)].map((m) => (m[1]!.match(/"[^"]*"|[^\s"]+/g) ?? []).map((w) => w.replace(/^"|"$/g, '')));
}

/** The program an `add_test` runs: `add_test(NAME n COMMAND exe …)` or the old `add_test(n exe …)`. */
function testProgram(args: readonly string[]): string | undefined {
  if (args[0] === 'NAME') {
    const i = args.indexOf('COMMAND');
    return i >= 0 ? args[i + 1] : undefined;
  }
  return args[1];
}

/** The sources (repository-relative, literal) of the programs the root CMakeLists.txt's tests run. */
export function cmakeTestSources(text: string): string[] {
  const programs = new Map<string, string[]>();
  for (const [name, ...rest] of calls(text, 'add_executable')) {
    if (name && !rest.some((w) => w === 'IMPORTED' || w === 'ALIAS')) programs.set(name, rest.filter((w) => !KEYWORDS.has(w)));
  }
  const out = new Set<string>();
  for (const args of calls(text, 'add_test')) {
    const exe = testProgram(args);
    const target = exe?.replace(/^\$<TARGET_FILE:(.+)>$/, '$1');
    for (const src of (target && programs.get(target)) ?? []) {
      if (SOURCE.test(src) && !src.includes('${') && !src.includes('$<')) out.add(src.replace(/^\.\//, ''));
    }
  }
  return [...out];
}

export const cTestFileRules = {
  reads: (files: readonly string[]) => (files.includes('CMakeLists.txt') ? ['CMakeLists.txt'] : []),
  rules(texts: Readonly<Record<string, string>>): TestFileRules | undefined {
    const sources = cmakeTestSources(texts['CMakeLists.txt'] ?? '');
    return sources.length ? { globs: sources, excludes: [], regexes: [], sources: ['CMakeLists.txt'] } : undefined;
  },
};

/** Whether the build files name the path as a test program's source (the globs are literal paths). */
export function namedByBuild(path: string, rules: TestFileRules | undefined): boolean {
  return !!rules && rules.sources.includes('CMakeLists.txt') && rules.globs.includes(path);
}
