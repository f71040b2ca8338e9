/**
 * What a test file is: the one definition the harness (which files to run), the generation layer
 * (where a model may write, what its run_tests tool runs) and the pipeline share. Pure. Each
 * ecosystem module holds its own conventions (src/ecosystems/<id>: isTestFile, isTestSupport);
 * this asks the one whose language the path is in.
 *
 * - A test file is one a runner would be given directly, e.g. pytest's default names (`test_*.py`,
 *   `*_test.py`); `*.test.*` / `*.spec.*` scripts; any script under a `test/`, `tests/`, `spec/` or
 *   `__tests__/` directory that is not support code.
 * - Support code never runs by itself: fixtures, snapshots, mocks, helpers, setup and config files,
 *   type declarations, `conftest.py`, `__init__.py`.
 * - The project's runner config (ava's `files`, jest's `testMatch`, vitest's `include`, mocha's
 *   `spec`) adds the files it names, when the caller read it (`configRules`; the pipeline's test
 *   targets do).
 * - A test path is anything that belongs to the tests (test files and their support), e.g. where a
 *   model may write.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { ECOSYSTEMS, ecosystemOfPath, pathInfo } from '../ecosystems/index.js';
import type { TestFileRules } from '../ecosystems/types.js';

/** Each ecosystem's test-file rules from the project's runner config, by ecosystem id. */
export type ConfigRules = Readonly<Record<string, TestFileRules>>;

const TEST_DIR = /^(tests?|specs?|__tests__|testing)$/i;

/** Directories no runner descends into (pytest's norecursedirs, build output, dependencies). */
const NEVER_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.venv', 'venv', '.tox', '__pycache__']);

/** Whether a runner would be given this file directly: the convention of the ecosystem whose language it is in. */
export function isTestFile(path: string, config?: ConfigRules): boolean {
  const p = pathInfo(path);
  if (!p.base || p.dirs.some((d) => NEVER_DIRS.has(d))) return false;
  const eco = ecosystemOfPath(p);
  return eco?.isTestFile(p, config?.[eco.id]) ?? false;
}

/** The config files whose text names test files (ava's, jest's, vitest's, mocha's at the root): what `configRules` reads. */
export function testConfigFiles(files: readonly string[]): string[] {
  return [...new Set(ECOSYSTEMS.flatMap((e) => e.testFileRules?.reads(files) ?? []))];
}

/** Every ecosystem's rules from the config texts (`parse` gives a JS/TS file's tree, or undefined). */
export function configRules(texts: Readonly<Record<string, string>>, parse: (path: string, text: string) => SyntaxNode | undefined): ConfigRules {
  const out: Record<string, TestFileRules> = {};
  for (const e of ECOSYSTEMS) {
    const own = Object.fromEntries(Object.entries(texts).filter(([f]) => e.testFileRules?.reads([f]).length));
    const r = e.testFileRules?.rules(own, parse);
    if (r) out[e.id] = r;
  }
  return out;
}

/** Whether a path belongs to the tests: a test file, or support code and data under a test directory. */
export function isTestPath(path: string, config?: ConfigRules): boolean {
  const p = pathInfo(path);
  if (p.dirs.some((d) => d === 'node_modules' || d === '.git')) return false;
  if (isTestFile(path, config)) return true;
  if (ECOSYSTEMS.some((e) => e.isTestSupport?.(p))) return true;
  return p.dirs.some((d) => TEST_DIR.test(d));
}
