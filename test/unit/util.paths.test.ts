import { confineRepoPath, tryConfineRepoPath } from '../../src/util/repoPath.js';
import { shellQuote } from '../../src/util/shell.js';
import { isSwtError } from '../../src/util/errors.js';

function rejects(raw: string, opts = {}): string {
  try {
    confineRepoPath(raw, opts);
  } catch (e) {
    expect(isSwtError(e, 'UNSAFE_PATH')).toBe(true);
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('path confinement (one rule for patches, agent tools and sessions)', () => {
  it.each([
    ['src/a.py', 'src/a.py'],
    ['./src//a.py', 'src/a.py'],
    ['tests\\a.py', 'tests/a.py'],
    ['./tests/../pkg/a.py', 'pkg/a.py'],
    ['/testbed/tests/a.py', 'tests/a.py'],
  ])('accepts %s as %s', (raw, want) => {
    expect(confineRepoPath(raw)).toBe(want);
  });

  it.each([
    ['/etc/passwd', /absolute/],
    ['../x', /escapes/],
    ['a/../../x', /escapes/],
    ['.git/config', /\.git/],
    ['src/.GIT/hooks/pre-commit', /\.git/],
    ['', /empty/],
    ['a\0b', /NUL/],
    ['C:\\x', /absolute/],
    ['~/x', /absolute/],
    ['.', /root/],
    ['a/..', /root/],
    ['src/', /directory/],
  ])('rejects %j', (raw, why) => {
    expect(rejects(raw)).toMatch(why);
  });

  it('accepts the root and trailing slashes when a directory is wanted', () => {
    expect(confineRepoPath('.', { directory: true })).toBe('.');
    expect(confineRepoPath('/testbed', { directory: true })).toBe('.');
    expect(confineRepoPath('src/', { directory: true })).toBe('src');
  });

  it('reads sandbox-absolute paths only under the given root', () => {
    expect(rejects('/testbed/a.py', { root: '' })).toMatch(/absolute/);
    expect(tryConfineRepoPath('../x')).toBeUndefined();
  });
});

describe('shell quoting', () => {
  it.each([
    ['plain/path.js', 'plain/path.js'],
    ["it's", "'it'\\''s'"],
    ['a b', "'a b'"],
    ['$(touch /tmp/x)', "'$(touch /tmp/x)'"],
    ['', "''"],
  ])('%j → %s', (word, quoted) => {
    expect(shellQuote(word)).toBe(quoted);
  });
});
