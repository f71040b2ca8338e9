/**
 * uvu end to end with no configuration, in real containers (the npm registry through the egress
 * proxy): a package in lukeed's style (`"test": "uvu -r esm test"`, ES module syntax in `.js`
 * files of a package with no "type", a test importing `../src`), on uvu 0.5.6 and on 0.3.5 (which
 * requires every file). swt's hook names every test; `-r esm` is dropped on Node 22 and says so.
 * The new test in a suite is F→P, the others P→P, `test.skip` is skipped on both sides (F→F).
 */
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

const pkg = (uvu: string) => `${JSON.stringify({ name: `uvu-${uvu}`, version: '1.0.0', main: 'src/index.js', scripts: { test: 'uvu -r esm test' }, devDependencies: { esm: '3.2.25', uvu } }, null, 2)}\n`;

const BUGGY = 'export function add(a, b) {\n  return a - b;\n}\n\nexport const name = "calc";\n';
const FIXED = 'export function add(a, b) {\n  return a + b;\n}\n\nexport const name = "calc";\n';

const OLD_TEST = [
  "import { suite, test } from 'uvu';",
  "import * as assert from 'uvu/assert';",
  "import { add, name } from '../src';",
  '',
  "const math = suite('add');",
  "math('zero', () => assert.is(add(0, 0), 0));",
  "math.skip('later', () => {});",
  'math.run();',
  '',
  "test('name', () => assert.is(name, 'calc'));",
  'test.run();',
  '',
].join('\n');

const TEST_PATCH = [
  'diff --git a/test/index.js b/test/index.js',
  '--- a/test/index.js',
  '+++ b/test/index.js',
  '@@ -5,4 +5,5 @@',
  " const math = suite('add');",
  " math('zero', () => assert.is(add(0, 0), 0));",
  "+math('adds two', () => assert.is(add(1, 2), 3));",
  " math.skip('later', () => {});",
  ' math.run();',
  '',
].join('\n');

const sandbox = createDockerSandbox();
afterAll(cleanUpEcosystemRuns);

describe.each(['0.5.6', '0.3.5'])('uvu %s with -r esm, no configuration (real containers)', (uvu) => {
  it('the new test is F→P, the others P→P, test.skip skipped; -r esm dropped and said', async () => {
    const repo = createGitRepo({ 'package.json': pkg(uvu), 'src/index.js': BUGGY, 'test/index.js': OLD_TEST });
    const base = repo.sha;
    const head = repo.commit({ 'src/index.js': FIXED }, 'fix');
    const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: TEST_PATCH });
    expect(v.runner).toBe('uvu');
    expect(v.tests.map((t) => [t.id, t.transition]).sort()).toEqual([
      ['test/index.js > add > adds two', 'F2P'],
      // a skipped test counts as failing on its side
      ['test/index.js > add > later', 'F2F'],
      ['test/index.js > add > zero', 'P2P'],
      ['test/index.js > name', 'P2P'],
    ]);
    expect(v.success).toBe(true);
    expect(JSON.stringify(v)).toContain('dropped -r esm');
  }, 600_000);
});
