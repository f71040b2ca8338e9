import { isTestFile } from '../../src/harness/testFiles.js';
import { filesToSearch, MAX_OWNERS, snapshotOwners, testTargets } from '../../src/harness/testOwners.js';

/** One case: what a patch touches, the repository's files (with the texts that matter), what runs. */
interface Case {
  name: string;
  touched: string[];
  repo: Record<string, string>;
  run: string[];
  unowned?: string[];
}

const CASES: Case[] = [
  {
    name: "tap's snapshot (tap 15+, .test.cjs) runs its test file",
    touched: ['tap-snapshots/test/format.js.test.cjs'],
    repo: { 'test/format.js': '', 'test/other.js': '', 'tap-snapshots/test/format.js.test.cjs': '' },
    run: ['test/format.js'],
  },
  {
    name: "tap's older snapshot name (.test.js)",
    touched: ['tap-snapshots/test/format.js.test.js'],
    repo: { 'test/format.js': '', 'tap-snapshots/test/format.js.test.js': '' },
    run: ['test/format.js'],
  },
  {
    name: 'tap ≤ 14 flattened snapshot name (-TAP.test.js), nested test directory',
    touched: ['tap-snapshots/test-sub-format.js-TAP.test.js'],
    repo: { 'test/sub/format.js': '', 'test/format.js': '' },
    run: ['test/sub/format.js'],
  },
  {
    name: 'tap snapshot of a package in a monorepo, TypeScript test',
    touched: ['packages/core/tap-snapshots/test/index.ts.test.cjs'],
    repo: { 'packages/core/test/index.ts': '', 'test/index.ts': '' },
    run: ['packages/core/test/index.ts'],
  },
  {
    name: "jest's / vitest's __snapshots__/<test file>.snap runs the sibling test file",
    touched: ['src/__snapshots__/render.test.ts.snap'],
    repo: { 'src/render.test.ts': '', 'src/render.ts': '' },
    run: ['src/render.test.ts'],
  },
  {
    name: '__tests__ directory with its own __snapshots__',
    touched: ['lib/__tests__/__snapshots__/parse.js.snap'],
    repo: { 'lib/__tests__/parse.js': '', 'lib/parse.js': '' },
    run: ['lib/__tests__/parse.js'],
  },
  {
    name: "syrupy's .ambr and per-test directory, snapshottest's snap_ module",
    touched: ['tests/__snapshots__/test_api.ambr', 'tests/__snapshots__/test_img/test_logo.png', 'tests/snapshots/snap_test_cli.py'],
    repo: { 'tests/test_api.py': '', 'tests/test_img.py': '', 'tests/test_cli.py': '' },
    run: ['tests/test_api.py', 'tests/test_img.py', 'tests/test_cli.py'],
  },
  {
    name: 'a snapshot and its test in the same patch: the test runs once',
    touched: ['test/a.js', 'tap-snapshots/test/a.js.test.cjs'],
    repo: { 'test/a.js': '' },
    run: ['test/a.js'],
  },
  {
    name: 'a fixture runs the tests that read it by name (path.join)',
    touched: ['test/fixtures/page.html'],
    repo: {
      'test/render.js': "const html = fs.readFileSync(path.join(__dirname, 'fixtures', 'page.html'), 'utf8')",
      'test/unrelated.js': "it('x', () => {})",
      'test/other.js': "read('fixtures/page.html.bak')",
    },
    run: ['test/render.js'],
  },
  {
    name: "a fixture with a common name, read through path.join(__dirname, 'fixtures', 'expected.txt')",
    touched: ['test/fixtures/expected.txt'],
    repo: {
      'test/render.js': "fs.readFileSync(path.join(__dirname, 'fixtures', 'expected.txt'), 'utf8')",
      'test/other.js': "fs.readFileSync(path.join(__dirname, 'other', 'expected.txt'), 'utf8')",
    },
    run: ['test/render.js'],
  },
  {
    name: 'a fixture a touched test refers to runs only that test, though others refer to it too',
    touched: ['test/new.js', 'test/fixtures/data.csv'],
    repo: {
      'test/new.js': "load(__dirname + '/fixtures/data.csv')",
      'test/old.js': "load(__dirname + '/fixtures/data.csv')",
    },
    run: ['test/new.js'],
  },
  {
    name: 'support code runs the tests that require it by relative path',
    touched: ['test/support/server.js'],
    repo: {
      'test/support/server.js': '',
      'test/http.js': "const server = require('./support/server')",
      'test/deep/ws.js': "const { start } = require('../support/server.js')",
      'test/plain.js': "require('assert')",
    },
    run: ['test/deep/ws.js', 'test/http.js'],
  },
  {
    name: 'a fixture with a generic name is found by its directory',
    touched: ['test/fixtures/proj-alpha/package.json'],
    repo: { 'test/install.js': "fixture('proj-alpha')", 'test/pkg.js': "require('../package.json')" },
    run: ['test/install.js'],
  },
  {
    name: 'nothing owns it: nothing runs for it, and it never runs itself',
    touched: ['tap-snapshots/test/gone.js.test.cjs', 'test/fixtures/orphan.txt'],
    repo: { 'test/a.js': "it('a', () => {})" },
    run: [],
    unowned: ['tap-snapshots/test/gone.js.test.cjs', 'test/fixtures/orphan.txt'],
  },
  {
    name: 'source files in a test patch own nothing and are not run',
    touched: ['lib/x.js', 'test/x.js'],
    repo: { 'lib/x.js': '', 'test/x.js': "require('../lib/x')", 'test/y.js': "require('../lib/x')" },
    run: ['test/x.js'],
  },
];

describe('testTargets: which test files run for what a patch touches', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const files = [...new Set([...Object.keys(c.repo), ...c.touched])];
    const toRead = filesToSearch(c.touched, files);
    const read = (p: string) => {
      if (!toRead.includes(p)) throw new Error(`read ${p}, which filesToSearch did not ask for`);
      return c.repo[p];
    };
    const t = testTargets({ touched: c.touched, files, read });
    expect(t.files).toEqual(c.run);
    expect(t.unowned).toEqual(c.unowned ?? []);
    // a snapshot, fixture or helper is never given to a runner
    expect(t.files.filter((f) => !isTestFile(f))).toEqual([]);
  });

  it('needs no text when every touched file is a test or a snapshot owned by name', () => {
    expect(filesToSearch(['test/a.js', 'tap-snapshots/test/a.js.test.cjs'], ['test/a.js', 'test/b.js'])).toEqual([]);
    expect(filesToSearch(['test/fixtures/x.json'], ['test/a.js', 'test/b.js', 'lib/c.js'])).toEqual(['test/a.js', 'test/b.js']);
  });

  it('keeps at most MAX_OWNERS owners, nearest first, in a fixed order', () => {
    const repo: Record<string, string> = {};
    for (let i = 0; i < MAX_OWNERS + 5; i++) repo[`test/t${String(i).padStart(2, '0')}.js`] = "read('shared.json')";
    repo['test/fixtures/deep/near.js'] = "read('shared.json')";
    const files = [...Object.keys(repo), 'test/fixtures/deep/shared.json'];
    const t = testTargets({ touched: ['test/fixtures/deep/shared.json'], files, read: (p) => repo[p] });
    expect(t.files).toHaveLength(MAX_OWNERS);
    expect(t.files[0]).toBe('test/t00.js');
    expect(testTargets({ touched: ['test/fixtures/deep/shared.json'], files: [...files].reverse(), read: (p) => repo[p] }).files).toEqual(t.files);
  });

  it('snapshotOwners says which paths are snapshots at all', () => {
    expect(snapshotOwners('test/fixtures/a.json', ['test/a.js'])).toBeUndefined();
    expect(snapshotOwners('src/__snapshots__/a.test.ts.snap', ['src/a.test.ts'])).toEqual(['src/a.test.ts']);
    expect(snapshotOwners('src/__snapshots__/a.test.ts.snap', [])).toEqual([]);
  });
});
