/** The test files to run for a test patch at a repository state: harness/testOwners.ts with the repository read. */
import { filesTouchedByPatch } from '../harness/runTests.js';
import { configRules, isTestFile, testConfigFiles, type ConfigRules } from '../harness/testFiles.js';
import { languageForPath, loadLanguage, parseIfLoaded, type Lang } from '../patch/structure.js';
import { filesToSearch, testTargets, type TestTargets } from '../harness/testOwners.js';
import { withState } from '../repo/git.js';
import { listTreeFiles, readTreeFiles } from '../repo/objects.js';
import type { RepoState } from '../sandbox/types.js';

/** Only the start of a test file is searched for references. */
const MAX_TEXT_BYTES = 256 * 1024;

/**
 * The test files to run for `touched` (repository paths a patch adds or modifies) in `state`, the
 * state the tests run in. Reads the repository only when something touched is not a test file.
 */
export async function testTargetsAt(repo: string, state: RepoState, touched: readonly string[]): Promise<TestTargets> {
  if (touched.every((t) => isTestFile(t))) return testTargets({ touched, files: touched });
  return withState(repo, state, async (st) => {
    const files = await listTreeFiles(st.repo, st.tree, st.env);
    const config = await readConfigRules(files, (paths) => readTreeFiles(st.repo, st.tree, paths, st.env));
    const wanted = filesToSearch(touched, files, config);
    const texts = wanted.length ? await readTreeFiles(st.repo, st.tree, wanted, st.env) : new Map<string, Buffer>();
    const read = (p: string) => texts.get(p)?.subarray(0, MAX_TEXT_BYTES).toString('utf8');
    return testTargets({ touched, files, read, config });
  });
}

/**
 * The runner configs that name test files (ava's `files`, jest's `testMatch`, vitest's `include`,
 * mocha's `spec`), read and parsed: JS/TS configs through their syntax tree (grammars loaded
 * here), so none of their code runs on the host.
 */
async function readConfigRules(files: readonly string[], readFiles: (paths: string[]) => Promise<Map<string, Buffer>>): Promise<ConfigRules> {
  const paths = testConfigFiles(files);
  if (!paths.length) return {};
  const texts = await readFiles(paths);
  const langs = new Set(paths.map(languageForPath).filter((l): l is Lang => l !== null && l !== 'python'));
  await Promise.all([...langs].map((l) => loadLanguage(l)));
  return configRules(Object.fromEntries([...texts].map(([p, b]) => [p, b.toString('utf8')])), parseIfLoaded);
}

/** The test files to run for a test patch applied on `rev`. */
export async function testTargetsOfPatch(repo: string, rev: string, testPatch: string): Promise<TestTargets> {
  return testTargetsAt(repo, { rev, patches: [testPatch] }, filesTouchedByPatch(testPatch, () => true));
}
