import { spawnSync } from 'node:child_process';
import { OWN_START_TICKS, ownerGone, pidAlive, processStartTicks } from '../../src/util/processes.js';

describe('process identity (pid + start time)', () => {
  it('names this process by its pid and start time', () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(OWN_START_TICKS).toMatch(/^\d+$/);
    expect(processStartTicks(process.pid)).toBe(OWN_START_TICKS);
    expect(ownerGone(process.pid, OWN_START_TICKS)).toBe(false);
    // No start time recorded (an older label): the pid alone decides.
    expect(ownerGone(process.pid, undefined)).toBe(false);
  });

  it('a reused pid (another start time) and a dead pid are both gone', () => {
    expect(ownerGone(process.pid, '1')).toBe(true);
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const dead = Number(child.stdout);
    expect(pidAlive(dead)).toBe(false);
    expect(ownerGone(dead, undefined)).toBe(true);
    expect(processStartTicks(dead)).toBeUndefined();
  });
});
