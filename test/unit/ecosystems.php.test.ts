/**
 * The PHP module: PHPUnit's JUnit log (9.6 from Debian bookworm, 11.5 from trixie), read from real
 * reports captured in containers (test/unit/fixtures/ecosystems/php); the composer `php`
 * constraint; detection, test files and the command.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathInfo } from '../../src/ecosystems/command.js';
import { declaredPhpVersion, PHP_INSTALL, php } from '../../src/ecosystems/php/index.js';
import { parsePhpunitJUnit } from '../../src/ecosystems/php/phpunit.js';
import { constraintAllows, newestAllowedPhp } from '../../src/ecosystems/php/phpVersion.js';
import { phpunit } from '../../src/ecosystems/php/runners.js';

const FIX = join(process.cwd(), 'test', 'unit', 'fixtures', 'ecosystems', 'php');
const read = (name: string) => readFileSync(join(FIX, name), 'utf8');
const byId = <T extends { id: string }>(tests: T[]): Record<string, T> => Object.fromEntries(tests.map((t) => [t.id, t]));
const ctx = (file: string) => ({ files: [file], file, root: '/proj', output: '' });

describe.each(['9.6.7', '11.5.19'])('PHPUnit %s JUnit log', (v) => {
  it('ids `file > Class::method`, data sets included; failures, errors, skipped and incomplete; risky tests pass', () => {
    const r = parsePhpunitJUnit(read(`phpunit-${v}-CalcTest.xml`), ctx('tests/CalcTest.php'));
    const t = byId(r.tests);
    const id = (m: string) => `tests/CalcTest.php > Sample\\Tests\\CalcTest::${m}`;
    expect(Object.keys(t).sort()).toEqual(
      [
        'testAdds',
        'testFailsAnAssertion',
        'testRaisesAnException',
        'testIsSkipped',
        'testIsIncomplete',
        'testIsRisky',
        'testWarnsWithADeprecatedCall',
        'testSums with data set #0',
        'testSums with data set "named set"',
        'testSums with data set "wrong set"',
        'testSums with data set "with "quotes" and :: in it"',
      ].map(id).sort(),
    );
    expect(t[id('testAdds')]).toMatchObject({ outcome: 'passed', file: 'tests/CalcTest.php' });
    expect(t[id('testFailsAnAssertion')]).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringMatching(/^Failed asserting that 4 is identical to 5\./) });
    expect(t[id('testRaisesAnException')]).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringMatching(/^RuntimeException: boom/) });
    expect(t[id('testIsSkipped')].outcome).toBe('skipped');
    expect(t[id('testIsIncomplete')].outcome).toBe('skipped');
    // PHPUnit 9 logs a test without assertions as an error, 11 as a pass: both read as a pass.
    expect(t[id('testIsRisky')].outcome).toBe('passed');
    expect(t[id('testSums with data set "wrong set"')].outcome).toBe('failed');
    expect(t[id('testSums with data set "named set"')].outcome).toBe('passed');
    expect(r.complete).toBe(true);
  });

  it('the same class and method names in another namespace are other ids', () => {
    const r = parsePhpunitJUnit(read(`phpunit-${v}-OtherNamespaceCalcTest.xml`), ctx('tests/Other/CalcTest.php'));
    expect(r.tests).toEqual([{ id: 'tests/Other/CalcTest.php > Sample\\Tests\\Other\\CalcTest::testAdds', file: 'tests/Other/CalcTest.php', outcome: 'passed' }]);
  });
});

it('PHPUnit 9: a user warning is an error (converted to an exception); PHPUnit 11 does not convert it', () => {
  const id = 'tests/CalcTest.php > Sample\\Tests\\CalcTest::testWarnsWithADeprecatedCall';
  expect(byId(parsePhpunitJUnit(read('phpunit-9.6.7-CalcTest.xml'), ctx('tests/CalcTest.php')).tests)[id]).toMatchObject({ outcome: 'failed', failureKind: 'error' });
  expect(byId(parsePhpunitJUnit(read('phpunit-11.5.19-CalcTest.xml'), ctx('tests/CalcTest.php')).tests)[id]).toMatchObject({ outcome: 'passed' });
});

it('a time limit (--enforce-time-limit with php-invoker) is a timeout in PHPUnit 9; PHPUnit 11 logs it as a pass (its console says risky)', () => {
  const r9 = parsePhpunitJUnit(read('phpunit-9.6.7-TimeLimitTest.xml'), ctx('tests/TimeLimitTest.php'));
  expect(r9.tests).toEqual([
    { id: 'tests/TimeLimitTest.php > Sample\\Tests\\TimeLimitTest::testTooSlowForSmall', file: 'tests/TimeLimitTest.php', outcome: 'failed', failureKind: 'timeout', message: 'Execution aborted after 1 second' },
  ]);
  expect(read('phpunit-11.5.19-TimeLimitTest.out.txt')).toMatch(/This test was aborted after 1 second/);
  expect(parsePhpunitJUnit(read('phpunit-11.5.19-TimeLimitTest.xml'), ctx('tests/TimeLimitTest.php')).tests[0]!.outcome).toBe('passed');
});

it('a file that does not parse, a missing class, a process that exits: no report or an empty one', () => {
  // PHPUnit 9 writes no log at all (the harness makes a file error from the output); 11 leaves an empty one.
  expect(read('phpunit-9.6.7-SyntaxErrorTest.out.txt')).toMatch(/syntax error|Unclosed '\('/);
  expect(read('phpunit-9.6.7-OtherCalcTest.out.txt')).toMatch(/Class OtherCalcTest could not be found/);
  for (const name of ['phpunit-11.5.19-SyntaxErrorTest.xml', 'phpunit-11.5.19-FatalErrorTest.xml', 'phpunit-9.6.7-FatalErrorTest.xml', 'phpunit-11.5.19-OtherCalcTest.xml']) {
    expect(parsePhpunitJUnit(read(name), ctx('tests/X.php'))).toEqual({ tests: [], fileErrors: [], complete: false, errors: [] });
  }
  expect(() => parsePhpunitJUnit('PHPUnit 9.6.7 by Sebastian Bergmann', ctx('tests/X.php'))).toThrow(/not a JUnit report/);
});

it('a real project report (composer/semver at base with the test patch)', () => {
  const r = parsePhpunitJUnit(read('phpunit-9.6.7-composer-semver-eca295a-base.xml'), { files: ['tests/CompilingMatcherTest.php'], file: 'tests/CompilingMatcherTest.php', root: '/repo', output: '' });
  expect(r.tests.map((t) => [t.id, t.outcome])).toEqual([
    ['tests/CompilingMatcherTest.php > Composer\\Semver\\CompilingMatcherTest::testMatch', 'passed'],
    ['tests/CompilingMatcherTest.php > Composer\\Semver\\CompilingMatcherTest::testCacheKey', 'failed'],
  ]);
});

describe('composer php constraints', () => {
  it.each([
    ['^7.2 || ^8.0', '8.4'],
    ['^5.3.2 || ^7.0 || ^8.0', '8.4'],
    ['>=7.4 <8.3', '8.2'],
    ['>=7.1,<8.0', '7.4'],
    ['~8.1.0', '8.1'],
    ['~7.1', '7.4'],
    ['8.2.*', '8.2'],
    ['7.4.*|8.0.*', '8.0'],
    ['^8.1', '8.4'],
    ['>=9', undefined],
  ])('%s → %s', (c, want) => {
    expect(newestAllowedPhp(c)).toBe(want);
  });
  it('allows by the release’s newest patch', () => {
    expect(constraintAllows('^8.2.5', '8.2')).toBe(true);
    expect(constraintAllows('<8.2', '8.2')).toBe(false);
  });
});

describe('PHP detection, conventions and commands', () => {
  const facts = (files: string[], manifests: Record<string, string> = {}) => ({ files, manifests });

  it('detects composer.json and phpunit.xml(.dist) at the root', () => {
    expect(php.detect(facts(['composer.json', 'src/A.php']))).toBe(20);
    expect(php.detect(facts(['phpunit.xml.dist']))).toBe(20);
    expect(php.detect(facts(['index.php']))).toBe(3);
    expect(php.detect(facts(['Gemfile']))).toBe(0);
  });

  it('test files: tests/**/*Test.php; other PHP under tests/ is support', () => {
    const is = (p: string) => php.isTestFile(pathInfo(p));
    expect(['tests/CompilingMatcherTest.php', 'tests/Unit/Foo/BarTest.php', 'test/FooTest.php'].every(is)).toBe(true);
    expect(['src/FooTest.php', 'tests/bootstrap.php', 'tests/Fixtures/Thing.php', 'tests/Test.php'].some(is)).toBe(false);
    expect(php.isTestSupport!(pathInfo('tests/bootstrap.php'))).toBe(true);
  });

  it('the image by composer’s php constraint; the install is composer install with an air-gapped way out', () => {
    expect(declaredPhpVersion(facts([], { 'composer.json': JSON.stringify({ require: { php: '^7.2 || ^8.0' } }) }))).toBe('8.4');
    expect(php.environment(facts(['composer.json'], { 'composer.json': '{"require":{"php":">=7.4 <8.3"}}' }))).toEqual({ image: 'php:8.2-cli', install: PHP_INSTALL });
    expect(php.environment(facts(['composer.json'], { 'composer.json': 'not json' })).image).toBe('php:8.3-cli');
    expect(PHP_INSTALL).toMatch(/composer install .*air-gapped.*composer dump-autoload/);
    expect(php.registries).toEqual(expect.arrayContaining(['repo.packagist.org', 'packagist.org']));
  });

  it('the command: one file per run, JUnit log, no result cache written into the repository', () => {
    expect(phpunit.command({ kind: 'phpunit', template: 'vendor/bin/phpunit {files}' }, ['tests/ATest.php'], '/swt-out', 'junit-0.xml')).toBe(
      "vendor/bin/phpunit --colors=never --do-not-cache-result --log-junit /swt-out/junit-0.xml tests/ATest.php",
    );
    expect(phpunit.runsPerFile?.({ kind: 'phpunit', template: 'phpunit {files}' })).toBe(true);
    expect(php.defaultRunner(facts(['composer.json']))).toEqual({ kind: 'phpunit', template: 'vendor/bin/phpunit {files}' });
    expect(phpunit.recognise.test('vendor/bin/phpunit {files}')).toBe(true);
    expect(phpunit.recognise.test('php artisan test {files}')).toBe(true);
  });

  it('reruns chosen tests with --filter on Class::method, data sets included', () => {
    expect(phpunit.commandForTests!({ kind: 'phpunit', template: 'vendor/bin/phpunit {files}' }, 'tests/ATest.php', ['tests/ATest.php > Acme\\ATest::testAdds', 'tests/ATest.php > Acme\\ATest::testSplits with data set #2'], '/o', 'junit-0.xml')).toBe(
      "vendor/bin/phpunit --colors=never --do-not-cache-result --log-junit /o/junit-0.xml --filter '/^(?:Acme\\\\ATest::testAdds|Acme\\\\ATest::testSplits)(?: with data set .*)?$/' tests/ATest.php",
    );
  });
});
