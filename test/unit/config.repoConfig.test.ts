import { parseRepoConfig } from '../../src/config/repoConfig.js';

describe('.github/swt.yml', () => {
  it('reads image, install, test command, limits, reruns and generation settings', () => {
    const cfg = parseRepoConfig(
      ['image: node:18', 'install: npm ci', 'test_command: npx mocha --exit {files}', 'limits:', '  timeout_seconds: 120', '  memory_mib: 1024', 'reruns: 1', 'generation:', '  strategy: agent'].join('\n'),
    );
    expect(cfg).toEqual({
      image: 'node:18',
      install: 'npm ci',
      test_command: 'npx mocha --exit {files}',
      limits: { timeout_seconds: 120, memory_mib: 1024 },
      reruns: 1,
      generation: { strategy: 'agent' },
    });
  });
  it('an empty file is an empty config', () => {
    expect(parseRepoConfig('')).toEqual({});
  });
  it('broken YAML names the line', () => {
    expect(() => parseRepoConfig('image: node:18\nlimits: [1, 2\n')).toThrow(/\.github\/swt\.yml:\d+: not valid YAML/);
  });
  it('a wrong field names the field', () => {
    expect(() => parseRepoConfig('test_command: npm test')).toThrow(/test_command: must contain \{files\}/);
    expect(() => parseRepoConfig('limits:\n  pids: -1')).toThrow(/limits\.pids/);
    expect(() => parseRepoConfig('imgae: node:18')).toThrow(/imgae|Unrecognized/);
    expect(() => parseRepoConfig('generation:\n  strategy: magic')).toThrow(/generation\.strategy/);
  });
});
