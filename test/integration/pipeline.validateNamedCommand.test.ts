/**
 * Issue 39: a test command the project names (its CI sets a variable: `CALCULATOR=Native phpunit
 * {files}`) runs after the ecosystem's install, as the default command does; and Composer's
 * air-gapped fallback (`composer dump-autoload`, Packagist refused here) maps the tests' own
 * classes too: with no install to infer it from, Composer 2.5 left `autoload-dev` out, so a test
 * base class under tests/ was "not found" on both sides (F→F, named command or not). Ground truth
 * from a plain container of the same image: `composer dump-autoload` wrote only `Calc\\` to
 * autoload_psr4.php, `composer dump-autoload --dev` wrote `Calc\\Tests\\` too.
 */
import { REGISTRIES } from '../../src/ecosystems/registries.js';
import { validate } from '../../src/pipeline/validate.js';
import { DEFAULT_EGRESS_HOSTS } from '../../src/sandbox/egress/egressConfig.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

const FILES: Record<string, string> = {
  "composer.json": "{\n  \"name\": \"swt/calc\",\n  \"require\": { \"php\": \">=8.1\" },\n  \"require-dev\": { \"phpunit/phpunit\": \"^9.6\" },\n  \"autoload\": { \"psr-4\": { \"Calc\\\\\": \"src/\" } },\n  \"autoload-dev\": { \"psr-4\": { \"Calc\\\\Tests\\\\\": \"tests/\" } }\n}\n",
  "phpunit.xml.dist": "<?xml version=\"1.0\"?>\n<phpunit bootstrap=\"vendor/autoload.php\">\n  <testsuites><testsuite name=\"all\"><directory>tests</directory></testsuite></testsuites>\n</phpunit>\n",
  "tests/TestCase.php": "<?php\nnamespace Calc\\Tests;\n\nuse Calc\\Calculator;\n\nabstract class TestCase extends \\PHPUnit\\Framework\\TestCase\n{\n    protected function calculator(): Calculator\n    {\n        return Calculator::make();\n    }\n}\n",
  "tests/Unit/DivideTest.php": "<?php\nnamespace Calc\\Tests\\Unit;\n\nuse Calc\\Tests\\TestCase;\n\nfinal class DivideTest extends TestCase\n{\n    public function testDivides(): void\n    {\n        $this->assertSame(2, $this->calculator()->divide(4, 2));\n    }\n\n    public function testEngine(): void\n    {\n        $this->assertSame('Native', $this->calculator()->engine);\n    }\n}\n"
};
const CALCULATOR = (fixed: boolean) => "<?php\nnamespace Calc;\n\nfinal class Calculator\n{\n    public static function make(): self\n    {\n        return new self(getenv('CALCULATOR') ?: 'Native');\n    }\n\n    public function __construct(public string $engine)\n    {\n    }\n\n    public function divide(int $a, int $b): int\n    {\n        return intdiv($a, $b);\n    }\n}\n".replace('return intdiv($a, $b);', fixed ? 'return $b === 0 ? 0 : intdiv($a, $b);' : 'return intdiv($a, $b);');
const TEST_PATCH = "diff --git a/tests/Unit/ZeroTest.php b/tests/Unit/ZeroTest.php\nnew file mode 100644\n--- /dev/null\n+++ b/tests/Unit/ZeroTest.php\n@@ -0,0 +1,14 @@\n+<?php\n+namespace Calc\\Tests\\Unit;\n+\n+use Calc\\Tests\\TestCase;\n+\n+final class ZeroTest extends TestCase\n+{\n+    public function testDivisionByZeroIsZero(): void\n+    {\n+        $this->assertSame(0, $this->calculator()->divide(1, 0));\n+    }\n+}\n+\n+\n";

afterAll(cleanUpEcosystemRuns);

describe('a named test command keeps the ecosystem\'s install (real containers, Packagist refused)', () => {
  it('PHPUnit: `CALCULATOR=Native phpunit {files}` with a test base class from autoload-dev: the new test is F→P, the install said what it did', async () => {
    const sandbox = createDockerSandbox({ egress: { hosts: DEFAULT_EGRESS_HOSTS.filter((h) => !(REGISTRIES.php as readonly string[]).includes(h)) } });
    const repo = createGitRepo({ ...FILES, 'src/Calculator.php': CALCULATOR(false) });
    const base = repo.sha;
    const head = repo.commit({ 'src/Calculator.php': CALCULATOR(true) }, 'dividing by zero gives zero');
    const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: TEST_PATCH, testCmd: 'CALCULATOR=Native phpunit {files}' });
    expect(v.runner).toBe('phpunit');
    expect(v.tests.map((t) => [t.id, t.transition])).toEqual([['tests/Unit/ZeroTest.php > Calc\\Tests\\Unit\\ZeroTest::testDivisionByZeroIsZero', 'F2P']]);
    expect(v.success).toBe(true);
    expect(v.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^swt: composer install failed \(Packagist unreachable: air-gapped\?\); composer dump-autoload/)]));
  }, 600_000);
});
