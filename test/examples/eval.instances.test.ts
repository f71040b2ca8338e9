/**
 * The project's own real instances (fixtures/instances: public bug fixes stored as git bundles),
 * chosen for what the harness once got wrong: mocha 2.x through `_mocha` with several files and
 * `--check-leaks`, tap runs whose test patch changes only a fixture or only a snapshot, and
 * `node --test` over several files; with no install or test command given, RSpec, minitest
 * (behind minitest-reporters), PHPUnit (a data provider's new rows) with air-gapped installs, and a
 * Python src layout versioned from git; and Go, Rust and Java fixes run with no configuration at all
 * (go test -json, cargo test on an integration binary and on src/lib.rs's test module, Maven with
 * Surefire on JUnit 4 and 5); vitest projects pinned to pnpm 8, 9 and 10 by `packageManager`,
 * a Yarn 4 Plug'n'Play project (yarnPath) whose mocha runs TypeScript through ts-node; ava with its
 * tests in the root test.js (no configuration), jasmine-npm's own suite through swt's jasmine reporter,
 * and brittle, which no runner of swt reads (file-level verdicts); bun test with bun's lockfile, bun fetched from the npm registry (muninn);
 * a jest project run with the TZ, LANG and LIMIT_JEST its CI workflow sets (luxon: from
 * .github/workflows/test.yml; 765f90b's F→P holds only in that zone); workspaces monorepos whose test files run from the package that owns
 * them (eslint/rewrite: npm workspaces, mocha in packages/compat; changesets: yarn 1 workspaces pinned by
 * packageManager, the root's jest; TanStack/store: pnpm 10 workspaces, vitest in packages/store);
 * uvu through swt's hook (devalue: pnpm 8, suites and top-level tests in one file, repeated names);
 * C and C++ with no configuration, built in swt-cc: Unity under CTest (cJSON), meson test (inih,
 * tests placed by Meson's introspection), GoogleTest under CTest (uriparser, docs option off),
 * a plain CTest program whose source only CMakeLists.txt names (tinyxml2), two Catch2 binaries
 * from one file (cxxopts).
 * Each instance's incorrect_patch, taken as the fix, must leave S = 0.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseInstances } from '../../src/eval/instances.js';
import { resolveRepoPath } from '../../src/eval/repos.js';
import { runEval } from '../../src/eval/runEval.js';
import { renderNotesMarkdown } from '../../src/pipeline/notes.js';
import { validate } from '../../src/pipeline/validate.js';
import { fileOfId } from '../../src/harness/classify.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

const DIR = join(process.cwd(), 'fixtures', 'instances');
/** Instances run with no configuration at all: their image, install and test command (what a user would name) are dropped, so the ecosystem modules choose them. */
const NO_CONFIGURATION = /^(Masterminds__semver|rapidfuzz__strsim-rs|rust-lang__glob|stleary__JSON-java|semver4j__semver4j|sindresorhus__camelcase|holepunchto__compact-encoding|DaveGamble__cJSON|jarro2783__cxxopts|benhoyt__inih|uriparser__uriparser|leethomason__tinyxml2)-/;
/**
 * By default one instance of each runner and case above: the second instance of a runner
 * (ee95afb, a47a89e, two of ufo's, luxon's 4cc03e5, cJSON's a328d65), the second Maven and PHPUnit
 * projects, and cxxopts (Catch2 runs in ecosystems.c; its build is this file's longest) wait for
 * SWT_INSTANCES=<regex>, which runs the matching instances (`.`: all 36).
 */
const SECOND_OF_A_KIND = /^(Masterminds__semver-ee95afb|python-humanize__humanize-a47a89e|unjs__ufo-(62199a0|4d024df)|moment__luxon-4cc03e5|DaveGamble__cJSON-a328d65|stleary__JSON-java|webmozarts__assert|jarro2783__cxxopts)-?/;
const ONLY = process.env.SWT_INSTANCES ? new RegExp(process.env.SWT_INSTANCES) : { test: (id: string) => !SECOND_OF_A_KIND.test(id) };
/** The incorrect patches: one instance of each ecosystem by default (the pipeline's verdict, not the runner, is what they check). */
const INCORRECT_ONLY = process.env.SWT_INSTANCES ? ONLY : /^(sindresorhus__camelcase|Masterminds__semver-b1bb761|rapidfuzz__strsim-rs|semver4j__semver4j|janlelis__paint|composer__semver|python-humanize__humanize-823ad60|benhoyt__inih)(-|$)/;
const instances = parseInstances(readFileSync(join(DIR, 'instances.jsonl'), 'utf8'), 'fixtures/instances/instances.jsonl')
  .filter((i) => ONLY.test(i.instance_id))
  .map((i) => (NO_CONFIGURATION.test(i.instance_id) ? { ...i, image: undefined, install: undefined, test_cmd: undefined } : i));

/**
 * The test files each instance must have run (owners of a touched fixture or snapshot included);
 * for ids that do not start with their file (Go, Java), the package or class.
 */
const FILES_RUN: Record<string, string[]> = {
  'expressjs__body-parser-0632e2f': ['test/json.js', 'test/urlencoded.js'],
  'npm__node-semver-cc6fde2': ['test/classes/range.js', 'test/functions/satisfies.js'],
  'npm__ini-858cc82': ['test/duplicate-properties.js'],
  'jsdom__cssstyle-f1bfdf7': ['test/CSSStyleDeclaration.js', 'test/parsers.js'],
  'Masterminds__semver-b1bb761': ['github.com/Masterminds/semver/v3'],
  'Masterminds__semver-ee95afb': ['github.com/Masterminds/semver/v3'],
  'rapidfuzz__strsim-rs-605c81c': ['src/lib.rs'],
  'rust-lang__glob-4054779': ['tests/glob-std.rs'],
  'stleary__JSON-java-b2943b8': ['org.json.junit.CDLTest'],
  'semver4j__semver4j-94528d5': ['org.semver4j.SemverTest'],
  'janlelis__paint-ff020d7': ['spec/paint_methods_spec.rb', 'spec/paint_mode_spec.rb', 'spec/paint_shortcuts_spec.rb', 'spec/paint_spec.rb'],
  'fbernier__tomlrb-888b705': ['test/test_tomlrb.rb'],
  'composer__semver-eca295a': ['tests/CompilingMatcherTest.php'],
  'webmozarts__assert-e68318e': ['tests/AssertTest.php'],
  'python-humanize__humanize-823ad60': ['tests/test_filesize.py'],
  'python-humanize__humanize-a47a89e': ['tests/test_time.py'],
  'unjs__ufo-3910926': ['test/join.test.ts'],
  'unjs__ufo-62199a0': ['test/utilities.test.ts'],
  'unjs__ufo-4d024df': ['test/query.test.ts'],
  'arcanis__typanion-c7a0080': ['tests/index.test.ts'],
  'holepunchto__compact-encoding-9d2fd7e': ['test.js'],
  'sindresorhus__camelcase-79b9a64': ['test.js'],
  'jasmine__jasmine-npm-2088418': ['spec/filters/regex_spec_filter_spec.js', 'spec/jasmine_spec.js'],
  'moment__luxon-4cc03e5': ['test/datetime/format.test.js'],
  'moment__luxon-765f90b': ['test/datetime/dst.test.js'],
  'wopehq__muninn-f13f711': ['tests/url.spec.ts'],
  'eslint__rewrite-811c3d7': ['packages/compat/tests/ignore-file.js'],
  'changesets__changesets-1772598': ['packages/apply-release-plan/src/index.test.ts'],
  'TanStack__store-84dc3eb': ['packages/store/tests/store.test.ts'],
  'sveltejs__devalue-127d655': ['test/test.js'],
  'benhoyt__inih-498f34b': ['test_INIReaderExample', 'test_alloc', 'test_heap_string', 'test_string', 'tests/unittest.c'],
  'leethomason__tinyxml2-494735d': ['xmltest.cpp'],
  'uriparser__uriparser-b1ab8cd': ['test/FourSuite.cpp', 'test/MemoryManagerSuite.cpp', 'test/SetFragment.cpp', 'test/SetHostAuto.cpp', 'test/SetHostIp4.cpp', 'test/SetHostIp6.cpp', 'test/SetHostIpFuture.cpp', 'test/SetHostRegName.cpp', 'test/SetPath.cpp', 'test/SetPort.cpp', 'test/SetQuery.cpp', 'test/SetScheme.cpp', 'test/SetUserInfo.cpp', 'test/VersionSuite.cpp', 'test/copy.cpp', 'test/test.cpp'],
  'jarro2783__cxxopts-a0f13a1': ['add-subdirectory-test', 'find-package-test', 'test/options.cpp'],
  'DaveGamble__cJSON-a78d975': ['cJSON_test', 'tests/cjson_add.c', 'tests/compare_tests.c', 'tests/minify_tests.c', 'tests/misc_tests.c', 'tests/parse_array.c', 'tests/parse_examples.c', 'tests/parse_hex4.c', 'tests/parse_number.c', 'tests/parse_object.c', 'tests/parse_string.c', 'tests/parse_value.c', 'tests/parse_with_opts.c', 'tests/print_array.c', 'tests/print_number.c', 'tests/print_object.c', 'tests/print_string.c', 'tests/print_value.c', 'tests/readme_examples.c'],
  'DaveGamble__cJSON-a328d65': ['cJSON_test', 'tests/cjson_add.c', 'tests/compare_tests.c', 'tests/minify_tests.c', 'tests/misc_tests.c', 'tests/parse_array.c', 'tests/parse_examples.c', 'tests/parse_hex4.c', 'tests/parse_number.c', 'tests/parse_object.c', 'tests/parse_string.c', 'tests/parse_value.c', 'tests/parse_with_opts.c', 'tests/print_array.c', 'tests/print_number.c', 'tests/print_object.c', 'tests/print_string.c', 'tests/print_value.c', 'tests/readme_examples.c'],
};

/**
 * Instances whose F→P holds only with the environment their CI workflow gives the tests (without
 * it the ground truth differs): swt must take it from the workflow and say where it came from.
 */
const WORKFLOW_ENV: Record<string, { env: Record<string, string>; source: RegExp }> = {
  'moment__luxon-765f90b': { env: { LANG: 'en_US.utf8', LIMIT_JEST: 'yes', TZ: 'America/New_York' }, source: /^\.github\/workflows\/test\.yml, job build-and-test, step `npm run test`$/ },
};

/** Instances whose test command no runner of swt reads: their verdicts are per file, from exit statuses. */
const FILE_LEVEL = new Set(['holepunchto__compact-encoding-9d2fd7e']);

/** A test's file (`file::…`, `file > …`), else its Go package (`<import path>.TestX/sub`) or Java class (`<class>.<method>(…)[n]`). */
function unitOfId(id: string): string {
  if (id.includes('::') || id.includes(' > ')) return fileOfId(id);
  const go = /^(.+?)\.(?:Test|Benchmark|Example|Fuzz)\w*(?:\/.*)?$/.exec(id);
  if (go && go[1].includes('/')) return go[1];
  return id.replace(/[([{].*$/, '').replace(/\.[^.]*$/, '');
}

describe('swt eval on the bundled real instances (mocha, tap, node --test, RSpec, minitest, PHPUnit, pytest, go test, cargo test, Maven; real containers)', () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'swt-instances-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('gold tests: S = 100, every stored F→P seen, the owning test files run', async () => {
    expect(instances.map((i) => i.instance_id).sort()).toEqual(Object.keys(FILES_RUN).filter((id) => ONLY.test(id)).sort());
    const sandbox = await createDockerSandbox();
    const { results, report } = await runEval(sandbox, { instances, source: { kind: 'gold' }, repos: join(DIR, 'repos'), out: join(out, 'gold'), concurrency: 2 });
    for (const r of results) {
      const inst = instances.find((i) => i.instance_id === r.instance_id)!;
      expect({ id: r.instance_id, error: r.error, success: r.success }).toEqual({ id: r.instance_id, error: undefined, success: true });
      const f2p = r.tests.filter((t) => t.transition === 'F2P' && !t.preexisting).map((t) => t.id);
      expect(f2p.sort()).toEqual([...inst.FAIL_TO_PASS].sort());
      // Per-test results with their files; nothing touched by the patch that is not a test ran as one.
      expect([...new Set(r.tests.map((t) => (t.fileLevel ? t.id : unitOfId(t.id))))].sort()).toEqual(FILES_RUN[r.instance_id]);
      // A command no runner reads (brittle) gives file-level verdicts, and only then.
      expect(r.tests.every((t) => !!t.fileLevel === FILE_LEVEL.has(r.instance_id))).toBe(true);
    }
    expect(report).toMatchObject({ instances: instances.length, errors: 0, W: 100, S: 100, F2X: 100, F2P: 100 });
  }, 3_600_000);

  it("the workflow's test environment: taken from the workflow, said in the result and the comment, and the F→P needs it", async () => {
    for (const inst of instances.filter((i) => WORKFLOW_ENV[i.instance_id])) {
      const want = WORKFLOW_ENV[inst.instance_id]!;
      const sandbox = await createDockerSandbox();
      const repo = await resolveRepoPath(join(DIR, 'repos'), inst.repo);
      const v = await validate(sandbox, { repo, base: inst.base_commit, testPatch: inst.test_patch, fixPatch: inst.patch, image: inst.image, install: inst.install, testCmd: inst.test_cmd });
      expect(v.testEnvironment?.env).toEqual(want.env);
      expect(v.testEnvironment?.source).toMatch(want.source);
      expect(renderNotesMarkdown(v)).toContain(`- Tests ran with ${Object.entries(want.env).map(([k, val]) => `\`${k}=${val}\``).join(' ')}, from .github/workflows/test.yml`);
      expect(v.tests.filter((t) => t.transition === 'F2P' && !t.preexisting).map((t) => t.id).sort()).toEqual([...inst.FAIL_TO_PASS].sort());
    }
  }, 1_800_000);

  it("incorrect patches: with each instance's incorrect_patch as the fix, its gold tests are not all F→P (S = 0)", async () => {
    const wrong = instances.filter((i) => i.incorrect_patch && INCORRECT_ONLY.test(i.instance_id)).map((i) => ({ ...i, patch: i.incorrect_patch! }));
    if (!process.env.SWT_INSTANCES) expect(wrong).toHaveLength(8);
    const sandbox = await createDockerSandbox();
    const { results, report } = await runEval(sandbox, { instances: wrong, source: { kind: 'gold' }, repos: join(DIR, 'repos'), out: join(out, 'incorrect'), concurrency: 2 });
    for (const r of results) {
      expect({ id: r.instance_id, error: r.error, success: r.success }).toEqual({ id: r.instance_id, error: undefined, success: false });
      // Some gold F→P test is left failing (or, file-level, its file).
      const f2p = new Set(r.tests.filter((t) => t.transition === 'F2P').map((t) => t.id));
      expect(wrong.find((i) => i.instance_id === r.instance_id)!.FAIL_TO_PASS.every((id) => f2p.has(id))).toBe(false);
    }
    expect(report).toMatchObject({ instances: wrong.length, errors: 0, S: 0 });
  }, 3_600_000);

  it('empty predictions: S = 0', async () => {
    const sandbox = await createDockerSandbox();
    const { report } = await runEval(sandbox, { instances, source: { kind: 'empty' }, repos: join(DIR, 'repos'), out: join(out, 'empty') });
    expect(report).toMatchObject({ instances: instances.length, errors: 0, W: 0, S: 0, F2X: 0, F2P: 0, P2P: 0, dC: null });
  }, 1_800_000);
});
