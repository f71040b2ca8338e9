import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

// A small real npm-workspaces monorepo with no configuration at all: two packages, each testing
// itself with `node --test` from its own directory (its package.json's `test` script), installed
// once at the root; the CI workflow sets TZ for the test step, and the bug shows only in that zone.
// Real containers, the Node image, `npm install` at the root (workspace links, no registry needed).

const ROOT = JSON.stringify({ name: 'mono', private: true, workspaces: ['packages/*'] }, null, 2);
const pkg = (name: string) => JSON.stringify({ name, version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }, null, 2);
const WORKFLOW = [
  'name: CI',
  'on: [push]',
  'env:',
  '  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}',
  'jobs:',
  '  test:',
  '    runs-on: ubuntu-latest',
  '    env:',
  '      TZ: America/New_York',
  '    steps:',
  '      - uses: actions/checkout@v4',
  '      - run: npm install',
  '      - run: npm test --workspaces',
  '        env:',
  '          DATES_STRICT: "1"',
  '',
].join('\n');
// The local calendar day of a timestamp: the bug reads the UTC day, which differs only away from UTC.
const BUGGY = 'export function localDay(ms) {\n  return new Date(ms).getUTCDate();\n}\n';
const FIXED = 'export function localDay(ms) {\n  return new Date(ms).getDate();\n}\n';
const PAD = "export const pad2 = (n) => String(n).padStart(2, '0');\n";
const OLD_DATES_TEST = [
  "import { test } from 'node:test';",
  "import assert from 'node:assert';",
  "import { localDay } from '../index.js';",
  '',
  "test('noon is the same day everywhere', () => {",
  "  assert.strictEqual(localDay(Date.parse('2024-03-10T12:00:00Z')), 10);",
  '});',
  '',
].join('\n');

const TEST_PATCH = [
  'diff --git a/packages/dates/test/day.test.js b/packages/dates/test/day.test.js',
  '--- a/packages/dates/test/day.test.js',
  '+++ b/packages/dates/test/day.test.js',
  '@@ -5,3 +5,8 @@',
  " test('noon is the same day everywhere', () => {",
  "   assert.strictEqual(localDay(Date.parse('2024-03-10T12:00:00Z')), 10);",
  ' });',
  '+',
  "+test('3 a.m. UTC is the evening before in New York', () => {",
  "+  assert.strictEqual(process.env.DATES_STRICT, '1');",
  "+  assert.strictEqual(localDay(Date.parse('2024-01-01T03:00:00Z')), 31);",
  '+});',
  'diff --git a/packages/strings/test/pad.test.js b/packages/strings/test/pad.test.js',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/packages/strings/test/pad.test.js',
  '@@ -0,0 +1,7 @@',
  "+import { test } from 'node:test';",
  "+import assert from 'node:assert';",
  "+import { pad2 } from '../index.js';",
  '+',
  "+test('pads one digit', () => {",
  "+  assert.strictEqual(pad2(7), '07');",
  '+});',
  '',
].join('\n');

let repo: TempRepo;
let base: string;
let head: string;

beforeAll(() => {
  repo = createGitRepo({
    'package.json': ROOT,
    '.github/workflows/ci.yml': WORKFLOW,
    'packages/dates/package.json': pkg('dates'),
    'packages/dates/index.js': BUGGY,
    'packages/dates/test/day.test.js': OLD_DATES_TEST,
    'packages/strings/package.json': pkg('strings'),
    'packages/strings/index.js': PAD,
  });
  base = repo.sha;
  head = repo.commit({ 'packages/dates/index.js': FIXED }, 'localDay: the local day, not the UTC one');
});

afterAll(cleanUpEcosystemRuns);

describe('npm workspaces monorepo with its workflow\'s TZ, no configuration (real containers)', () => {
  it('runs each package\'s tests from the package, under the workflow\'s literal env, ids repository-relative', async () => {
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: TEST_PATCH });
    expect(v.tests.map((t) => [t.id, t.transition, !!t.preexisting]).sort()).toEqual([
      ['packages/dates/test/day.test.js > 3 a.m. UTC is the evening before in New York', 'F2P', false],
      ['packages/dates/test/day.test.js > noon is the same day everywhere', 'P2P', false],
      ['packages/strings/test/pad.test.js > pads one digit', 'P2P', false],
    ]);
    expect(v.success).toBe(true);
    expect(v.runner).toBe('node-test');
    // The secret's expression never became a variable; the literals did, and the result says where from.
    expect(v.testEnvironment).toEqual({ env: { TZ: 'America/New_York', DATES_STRICT: '1' }, source: '.github/workflows/ci.yml, job test, step `npm test --workspaces`' });
    expect(JSON.stringify(v)).not.toContain('NPM_TOKEN=');
    // One command per package, each from its own directory.
    const out = v.runs.head[0]!.tests.map((t) => t.file).sort();
    expect(out).toEqual(['packages/dates/test/day.test.js', 'packages/dates/test/day.test.js', 'packages/strings/test/pad.test.js']);
  }, 1_800_000);

  it('a test command the user names runs under the workflow\'s environment too', async () => {
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: TEST_PATCH, testCmd: 'node --test {files}' });
    expect(v.tests.filter((t) => t.transition === 'F2P').map((t) => t.id)).toEqual(['packages/dates/test/day.test.js > 3 a.m. UTC is the evening before in New York']);
    expect(v.success).toBe(true);
    expect(v.testEnvironment?.env).toEqual({ TZ: 'America/New_York', DATES_STRICT: '1' });
  }, 1_800_000);
});
