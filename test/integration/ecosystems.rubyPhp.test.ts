/**
 * With no configuration at all (no image, install or test command), `validate` on small real
 * RSpec, minitest and PHPUnit repositories reports exactly the new test as F→P and S = success,
 * in real containers (Ruby and PHP images built offline from Debian). RubyGems and Packagist are
 * refused by the egress proxy here (they are left out of its allowlist, so nothing leaves this
 * machine): the installs take the air-gapped way and say so.
 */
import { REGISTRIES } from '../../src/ecosystems/registries.js';
import { validate } from '../../src/pipeline/validate.js';
import { DEFAULT_EGRESS_HOSTS } from '../../src/sandbox/egress/egressConfig.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';
import * as phpSlugger from '../helpers/phpSlugger.js';
import * as rubyRoman from '../helpers/rubyRoman.js';
import * as rubyStack from '../helpers/rubyStack.js';

const refused = new Set<string>([...REGISTRIES.ruby, ...REGISTRIES.php]);
let sandbox: Sandbox;

beforeAll(() => {
  sandbox = createDockerSandbox({
    egress: { hosts: DEFAULT_EGRESS_HOSTS.filter((h) => !refused.has(h)) },
  });
});

afterAll(cleanUpEcosystemRuns);

async function validateFix(files: Record<string, string>, fix: Record<string, string>, testPatch: string) {
  const repo = createGitRepo(files);
  const base = repo.sha;
  const head = repo.commit(fix, 'fix');
  return validate(sandbox, { repo: repo.path, base, head, testPatch });
}

const f2p = (v: Awaited<ReturnType<typeof validate>>) => v.tests.filter((t) => t.transition === 'F2P').map((t) => t.id);

describe('Ruby and PHP with no configuration (real containers, air-gapped installs)', () => {
  it('RSpec: the new example is F→P (only the spec file the patch adds runs); bundle install resolves the Gemfile from Debian’s gems, and says so', async () => {
    const v = await validateFix(rubyStack.BASE_FILES, rubyStack.FIX, rubyStack.TEST_PATCH);
    expect(f2p(v)).toEqual([rubyStack.ADDED_ID]);
    expect(v.tests.map((t) => t.transition)).toEqual(['F2P']);
    expect(v.success).toBe(true);
    expect(v.environment.baseImage).toMatch(/^swt-base\/ruby:3\.3-/);
    expect(v.runner).toBe('rspec');
    expect(v.warnings).toContain('swt: bundle install failed (rubygems.org unreachable: air-gapped?); the Gemfile resolved from the gems the image holds');
    // The new example's two rounds ran in RSpec's own process (under bundler), after the run: no rerun.
    expect(v.confirmation).toMatchObject({ rounds: 2, tests: [rubyStack.ADDED_ID], inProcess: [rubyStack.ADDED_ID] });
    expect(v.confirmation?.noRounds).toBeUndefined();
  });

  it('minitest: the new test is F→P (ids Class#test_name), with a test helper and no spec directory', async () => {
    const v = await validateFix(rubyRoman.BASE_FILES, rubyRoman.FIX, rubyRoman.TEST_PATCH);
    expect(f2p(v)).toEqual(['test/roman_test.rb > RomanTest#test_four_is_subtractive']);
    expect(v.tests.filter((t) => t.transition !== 'F2P').map((t) => [t.id, t.transition])).toEqual([['test/roman_test.rb > RomanTest#test_one', 'P2P']]);
    expect(v.success).toBe(true);
    expect(v.runner).toBe('minitest');
    // The new test's two rounds ran in minitest's own process, after the run: no rerun.
    const moved = 'test/roman_test.rb > RomanTest#test_four_is_subtractive';
    expect(v.confirmation).toMatchObject({ rounds: 2, tests: [moved], inProcess: [moved] });
    expect(v.confirmation?.noRounds).toBeUndefined();
  });

  it('PHPUnit: the new test is F→P (ids Class::method); composer dump-autoload and Debian’s PHPUnit stand in for composer install', async () => {
    const v = await validateFix(phpSlugger.BASE_FILES, phpSlugger.FIX, phpSlugger.TEST_PATCH);
    expect(f2p(v)).toEqual(['tests/SluggerSpacesTest.php > Slug\\Tests\\SluggerSpacesTest::testCollapsesRunsOfSpaces']);
    expect(v.tests.map((t) => t.transition)).toEqual(['F2P']);
    // The new test's two rounds ran in PHPUnit's own process, after the run: no rerun.
    const moved = 'tests/SluggerSpacesTest.php > Slug\\Tests\\SluggerSpacesTest::testCollapsesRunsOfSpaces';
    expect(v.confirmation).toMatchObject({ rounds: 2, tests: [moved], inProcess: [moved] });
    expect(v.confirmation?.noRounds).toBeUndefined();
    expect(v.success).toBe(true);
    expect(v.environment.baseImage).toMatch(/^swt-base\/php:8\.4-cli-/);
    expect(v.runner).toBe('phpunit');
    expect(v.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^swt: composer install failed \(Packagist unreachable: air-gapped\?\); composer dump-autoload/),
        "swt: vendor/bin/phpunit is the image's PHPUnit",
        expect.stringMatching(/^swt: PHPUnit 9\.6\.\d+ /),
      ]),
    );
  });
});
