import { diffPath, diffPaths } from '../../src/patch/fileNames.js';

describe('a diff header name as a path', () => {
  it('strips a/ and b/, undoes git quoting, drops timestamps, and reads /dev/null as no file', () => {
    expect(diffPath('b/src/x.py')).toBe('src/x.py');
    expect(diffPath('a/src/x.py\t2024-01-01 10:00:00')).toBe('src/x.py');
    expect(diffPath('"b/sp ace.py"')).toBe('sp ace.py');
    expect(diffPath('"b/tab\\tname.py"')).toBe('tab\tname.py');
    expect(diffPath('/dev/null')).toBeUndefined();
    expect(diffPath(undefined)).toBeUndefined();
    expect(diffPath('  ')).toBeUndefined();
    expect(diffPath('a/x.py', false)).toBe('a/x.py');
  });

  it('keeps a plain diff -u directory called a/ or b/, strips the pair git writes', () => {
    expect(diffPaths('a/t.py', 'b/t.py')).toEqual({ oldPath: 't.py', newPath: 't.py' });
    expect(diffPaths('/dev/null', 'b/new.py')).toEqual({ oldPath: undefined, newPath: 'new.py' });
    expect(diffPaths('a/t.py', 'a/t.py')).toEqual({ oldPath: 'a/t.py', newPath: 'a/t.py' });
    expect(diffPaths('a/t.py', 'a/t.py', true)).toEqual({ oldPath: 't.py', newPath: 't.py' });
  });
});
