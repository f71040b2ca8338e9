/**
 * TEST HELPER. A small real PHPUnit project (composer.json asking PHPUnit 9.6, a PSR-4 autoload,
 * phpunit.xml.dist): its files at base, the fix, and a test patch adding a test file whose one
 * test goes F→P. One definition for the PHP integration test and bench:harness.
 */

import { newFilePatch } from './patches.js';

const slugger = (body: string) => `<?php\nnamespace Slug;\n\nfinal class Slugger\n{\n    public static function slug(string $s): string\n    {\n        return ${body};\n    }\n}\n`;

export const BASE_FILES: Record<string, string> = {
  'composer.json': JSON.stringify({ name: 'swt/slug', require: { php: '>=8.1' }, 'require-dev': { 'phpunit/phpunit': '^9.6' }, autoload: { 'psr-4': { 'Slug\\': 'src/' } } }, null, 2) + '\n',
  'phpunit.xml.dist': '<?xml version="1.0"?>\n<phpunit bootstrap="vendor/autoload.php">\n  <testsuites><testsuite name="all"><directory>tests</directory></testsuite></testsuites>\n</phpunit>\n',
  'src/Slugger.php': slugger("strtolower(str_replace(' ', '-', $s))"),
  'tests/SluggerTest.php':
    "<?php\nnamespace Slug\\Tests;\n\nuse PHPUnit\\Framework\\TestCase;\nuse Slug\\Slugger;\n\nfinal class SluggerTest extends TestCase\n{\n    public function testLowercases(): void\n    {\n        $this->assertSame('a-b', Slugger::slug('A B'));\n    }\n}\n",
};

export const FIX: Record<string, string> = { 'src/Slugger.php': slugger("strtolower(preg_replace('/\\s+/', '-', trim($s)))") };

const NEW_TEST = [
  '<?php',
  'namespace Slug\\Tests;',
  '',
  'use PHPUnit\\Framework\\TestCase;',
  'use Slug\\Slugger;',
  '',
  'final class SluggerSpacesTest extends TestCase',
  '{',
  '    public function testCollapsesRunsOfSpaces(): void',
  '    {',
  "        $this->assertSame('a-b', Slugger::slug('  A   B '));",
  '    }',
  '}',
];

export const TEST_PATCH = newFilePatch('tests/SluggerSpacesTest.php', NEW_TEST);
