/** One lockdown for every container the product starts: lockedHostConfig(role), under hostConfigFor's limits or a role's own. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../src/sandbox/types.js';
import { hostConfigFor, lockedHostConfig } from '../../src/sandbox/containers/limits.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('lockedHostConfig', () => {
  it('drops every capability, forbids privilege gain, runs docker-init and caps the log, with no network unless named', () => {
    expect(lockedHostConfig('probe')).toEqual({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Init: true,
      AutoRemove: false,
      LogConfig: { Type: 'json-file', Config: { 'max-size': '8m', 'max-file': '1' } },
    });
    expect(lockedHostConfig('egress-proxy', 'net1').NetworkMode).toBe('net1');
  });

  it('gives back only what a cache container needs', () => {
    expect(lockedHostConfig('cache-init').CapAdd).toEqual(['CHOWN']);
    expect(lockedHostConfig('cache-copy').CapAdd).toEqual(['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER']);
    for (const role of ['run', 'session', 'install', 'egress-proxy', 'probe'] as const) expect(lockedHostConfig(role).CapAdd).toBeUndefined();
  });

  it('is what hostConfigFor starts from', () => {
    const hc = hostConfigFor({ role: 'install', limits: DEFAULT_LIMITS, network: 'swt-install-1' });
    expect(hc).toMatchObject(lockedHostConfig('install', 'swt-install-1'));
  });

  it('every container the product creates takes it', () => {
    const calls = sources('src').flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return [...text.matchAll(/\.createContainer\(/g)].map((m) => ({ f, call: text.slice(m.index, m.index + 1500) }));
    });
    expect(calls.length).toBeGreaterThanOrEqual(6);
    const loose = calls.filter(({ call }) => !/HostConfig: (\{ \.\.\.lockedHostConfig\(|\{\s*\.\.\.lockedHostConfig\(|hostConfig\b|hostConfigFor\()/.test(call)).map(({ f }) => f);
    expect(loose).toEqual([]);
  });
});
