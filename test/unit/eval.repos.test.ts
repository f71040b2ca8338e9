/** Git bundles as `swt eval --repos`: several instances of one repository share one bundle. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveRepoPath } from '../../src/eval/repos.js';

const BUNDLE_DIR = join(process.cwd(), 'fixtures', 'instances', 'repos');

let cache: string;
const saved = process.env.SWT_CACHE_DIR;
beforeEach(() => {
  cache = mkdtempSync(join(tmpdir(), 'swt-evalrepos-'));
  process.env.SWT_CACHE_DIR = cache;
});
afterEach(() => {
  if (saved === undefined) delete process.env.SWT_CACHE_DIR;
  else process.env.SWT_CACHE_DIR = saved;
  rmSync(cache, { recursive: true, force: true });
});

it('two instances of one repository unpack its bundle once, concurrently, into one mirror', async () => {
  const [a, b] = await Promise.all([resolveRepoPath(BUNDLE_DIR, 'python-humanize/humanize'), resolveRepoPath(BUNDLE_DIR, 'python-humanize/humanize')]);
  expect(a).toBe(b);
  expect(a).toBe(join(cache, 'repos', 'python-humanize__humanize.git'));
  // Both instances' commits are there (a47a89e is an ancestor of 823ad60), and no temporary copy is left.
  for (const sha of ['823ad6096e1e5ba82ea876ce761fc2efebd76157', 'a47a89e']) {
    expect(execFileSync('git', ['--git-dir', a, 'cat-file', '-t', sha], { encoding: 'utf8' }).trim()).toBe('commit');
  }
  expect(readdirSync(join(cache, 'repos'))).toEqual(['python-humanize__humanize.git']);
  // Later calls use the mirror as it is.
  await expect(resolveRepoPath(BUNDLE_DIR, 'python-humanize/humanize')).resolves.toBe(a);
});
