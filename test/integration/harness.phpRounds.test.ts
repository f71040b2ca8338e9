import { runTestsKept } from '../../src/harness/runTests.js';
import { roundPlan } from '../../src/harness/rounds.js';
import { PHP_INSTALL } from '../../src/ecosystems/php/index.js';
import { REGISTRIES } from '../../src/ecosystems/registries.js';
import { DEFAULT_EGRESS_HOSTS } from '../../src/sandbox/egress/egressConfig.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import type { RunResult, RunnerSpec } from '../../src/results/types.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';
import * as phpSlugger from '../helpers/phpSlugger.js';
import { newFilePatch } from '../helpers/patches.js';

// PHPUnit's rounds come from a file PHP prepends (src/ecosystems/php/rounds.ts), through an ini
// read after the project's own: a project that prepends a file of its own (here through its CI
// workflow's PHP_INI_SCAN_DIR, which every run exports before the hook's) still has it, in the
// run and in every round, in the global scope, once per process. Packagist is refused by the
// egress proxy (left out of its allowlist): the install takes the air-gapped way.

let sandbox: Sandbox;
let repo: TempRepo;
let env: Environment;

const PREPEND = [
  '<?php',
  "define('SLUG_PREPENDED', true);",
  "$slugPrepended = 'global scope';",
  "file_put_contents('/tmp/slug-prepends', 'x', FILE_APPEND);",
  '',
].join('\n');

const NEW_TEST = [
  '<?php',
  'namespace Slug\\Tests;',
  '',
  'use PHPUnit\\Framework\\TestCase;',
  '',
  'final class PrependTest extends TestCase',
  '{',
  '    public function testTheProjectsPrependRan(): void',
  '    {',
  "        $this->assertTrue(defined('SLUG_PREPENDED'));",
  "        $this->assertSame('global scope', $GLOBALS['slugPrepended'] ?? null);",
  '    }',
  '}',
];
const TEST_PATCH = newFilePatch('tests/PrependTest.php', NEW_TEST);
const FILES = ['tests/PrependTest.php'];

beforeAll(async () => {
  const refused = new Set<string>(REGISTRIES.php);
  sandbox = createDockerSandbox({ egress: { hosts: DEFAULT_EGRESS_HOSTS.filter((h) => !refused.has(h)) } });
  repo = createGitRepo({ ...phpSlugger.BASE_FILES, 'ci/php/project.ini': 'auto_prepend_file=ci/prepend.php\n', 'ci/prepend.php': PREPEND });
  env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'php:8.4-cli', install: PHP_INSTALL });
}, 900_000);

afterAll(async () => {
  await sandbox.close?.();
  await cleanUpEcosystemRuns();
});

const outcomes = (r: RunResult) => r.tests.map((t) => [t.id, t.outcome]);

describe('PHPUnit rounds beside a project that prepends a file of its own (real containers)', () => {
  it("the project's auto_prepend_file runs in the run and in both rounds, once per process, in the global scope", async () => {
    const runner: RunnerSpec = { kind: 'phpunit', template: 'vendor/bin/phpunit {files}', env: { PHP_INI_SCAN_DIR: ':ci/php' } };
    const r = await runTestsKept(sandbox, { env, repo: repo.path, state: { rev: repo.sha, patches: [TEST_PATCH] }, runner, files: FILES, roundPlan: roundPlan(TEST_PATCH, FILES, 2)! });
    try {
      const passed = [['tests/PrependTest.php > Slug\\Tests\\PrependTest::testTheProjectsPrependRan', 'passed']];
      expect(outcomes(r.result)).toEqual(passed);
      expect(r.rounds).toHaveLength(2);
      for (const round of r.rounds!) expect(outcomes(round)).toEqual(passed);
      const seen = await r.kept!.rerun('cat /tmp/slug-prepends');
      expect(seen.output.trim()).toBe('x');
    } finally {
      await r.kept?.release();
    }
  }, 300_000);
});
