import { errorLine, SwtError } from '../../src/util/errors.js';
import { REDACTED } from '../../src/util/secrets.js';

describe('errorLine', () => {
  it('gives a SwtError with its hint, any other error by its first line, a thrown value as text', () => {
    expect(errorLine(new SwtError('BAD_CONFIG', 'bad\nthing', { hint: 'fix it' }))).toBe('bad thing (fix it)');
    expect(errorLine(new Error('first\nsecond'))).toBe('first');
    expect(errorLine('plain')).toBe('plain');
    expect(errorLine(undefined)).toBe('undefined');
    expect(errorLine(new Error('x'.repeat(50)), 10)).toBe('x'.repeat(10));
  });

  it('always removes secrets, by value and by shape, before the cut', () => {
    const secret = 'sup3r-s3cret-value';
    expect(errorLine(new Error(`login with ${secret} failed`), 500, [secret])).toBe(`login with ${REDACTED} failed`);
    expect(errorLine(new Error('token ghs_abcdefghijklmnopqrstuvwxyz0123'))).toBe(`token ${REDACTED}`);
    // Cut in the middle of a token: the part left must not leak.
    expect(errorLine(new Error('token ghs_abcdefghijklmnopqrstuvwxyz0123'), 20)).not.toMatch(/ghs_/);
  });
});
