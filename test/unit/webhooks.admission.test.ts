import { BodyAdmission, clientOf, MIN_BYTES_PER_S, STALL_GRACE_MS, type Body, type BodyLimits } from '../../src/webhooks/admission.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const LIMITS: BodyLimits = { bufferBytes: 40 * MiB, reserveBytes: 8 * MiB, smallBytes: 256 * KiB, clientBodies: 16, clientBytes: 26 * MiB };

/** An admission on a clock the test moves; `evicted` lists what it evicted, by label. */
function setup(limits: Partial<BodyLimits> = {}) {
  let now = 0;
  const evicted: string[] = [];
  const admission = new BodyAdmission({ ...LIMITS, ...limits }, () => now);
  const admit = (client: string, length: number, label = `${client}/${length}`) => admission.admit(client, length, () => evicted.push(label));
  return { admission, admit, evicted, tick: (ms: number) => (now += ms) };
}

describe('clientOf: the client an address counts as', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.2', '127.0.0.2'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s → %s', (address, client) => {
    expect(clientOf(address)).toBe(client);
  });
});

describe('BodyAdmission', () => {
  it('large bodies fill the pool only up to the reserve; small ones still get in, up to the whole buffer', () => {
    const { admission, admit } = setup();
    const large = Array.from({ length: 40 }, (_, i) => admit(`10.0.0.${i}`, MiB));
    expect(large.filter((b) => b === 'pool')).toHaveLength(8);
    expect(admission.reserved).toBe(32 * MiB);
    const small = Array.from({ length: 40 }, (_, i) => admit(`10.0.1.${i}`, 200 * KiB));
    expect(small.every((b) => typeof b === 'object')).toBe(true);
    expect(admission.reserved).toBe(32 * MiB + 40 * 200 * KiB);
    // The reserve is for small bodies only: a large body declaring just over the line waits.
    expect(admit('10.0.2.1', 256 * KiB + 1)).toBe('pool');
  });

  it('one client has at most its count of bodies and its bytes in flight; others are not held up by it', () => {
    const { admit } = setup({ clientBodies: 3, clientBytes: 2 * MiB });
    expect([admit('a', 10), admit('a', 10), admit('a', 10), admit('a', 10)].map((b) => typeof b)).toEqual(['object', 'object', 'object', 'string']);
    expect(admit('b', 2 * MiB)).toMatchObject({ client: 'b' });
    expect(admit('b', 1)).toBe('client');
    expect(admit('c', 2 * MiB + 1)).toBe('client'); // could never fit
    expect(admit('c', 100)).toMatchObject({ client: 'c' });
  });

  it('a newcomer evicts the oldest body that is behind (past its grace, slower than the floor); never one that keeps up or is young', () => {
    const { admission, admit, evicted, tick } = setup({ bufferBytes: 3 * MiB, reserveBytes: 0, smallBytes: 1 });
    const slow = admit('x', MiB, 'slow') as Body;
    tick(100);
    const slower = admit('x', MiB, 'slower') as Body;
    tick(100);
    const fast = admit('y', MiB, 'fast') as Body;
    expect(admit('z', MiB)).toBe('pool'); // all young
    tick(STALL_GRACE_MS);
    fast.received = MIN_BYTES_PER_S * 2; // on pace
    slow.received = 1;
    slower.received = 1;
    expect(admit('z', MiB, 'new1')).toMatchObject({ client: 'z' });
    expect(evicted).toEqual(['slow']);
    expect(admit('z', MiB, 'new2')).toMatchObject({ client: 'z' });
    expect(evicted).toEqual(['slow', 'slower']);
    expect(admit('z', MiB)).toBe('pool'); // only the one that keeps up is left, with the newcomers
    expect(admission.reserved).toBe(3 * MiB);
    expect(admission.isBehind(fast)).toBe(false);
  });

  it('a body that has all it declared is not behind; when its own caps are full, a client evicts only its own bodies', () => {
    const { admit, evicted, tick } = setup({ clientBodies: 1 });
    const done = admit('a', 100, 'done') as Body;
    const other = admit('b', 100, 'other') as Body;
    tick(5 * STALL_GRACE_MS);
    done.received = 100;
    expect(admit('a', 100)).toBe('client');
    expect(evicted).toEqual([]);
    done.received = 99;
    expect(admit('a', 100, 'new')).toMatchObject({ client: 'a' });
    expect(evicted).toEqual(['done']);
    expect(other.received).toBe(0); // behind, but another client's: untouched
  });

  it('release frees a body once; a second release changes nothing', () => {
    const { admission, admit } = setup();
    const b = admit('a', MiB) as Body;
    admission.release(b);
    admission.release(b);
    expect(admission.reserved).toBe(0);
  });
});
