/**
 * The npx shim (localNpx.ts) in a real sh: an installed bin runs directly, with its directory first
 * on PATH and the caller's environment; anything else reaches the real npx (a stand-in on PATH
 * here, which says how it was called).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_NPX } from '../../src/ecosystems/node/localNpx.js';
import { buildRerunCommand, buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';

describe('LOCAL_NPX', () => {
  let dir: string;
  const sh = (script: string) => execFileSync('sh', ['-c', `${LOCAL_NPX} ${script}`], { cwd: path.join(dir, 'project'), env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin` }, encoding: 'utf8' });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swt-npx-'));
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.mkdirSync(path.join(dir, 'project', 'node_modules', '.bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bin', 'npx'), '#!/bin/sh\necho "real npx: $*"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'project', 'node_modules', '.bin', 'mocha'), '#!/bin/sh\necho "local mocha: $* | first on PATH: ${PATH%%:*} | X=$X"\n', { mode: 0o755 });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('runs an installed bin directly, its arguments intact, with node_modules/.bin first on PATH and the caller\'s variables', () => {
    const bin = path.join(fs.realpathSync(dir), 'project', 'node_modules', '.bin');
    expect(sh(`X=1 npx mocha --exit 'a b.js' "it's"`)).toBe(`local mocha: --exit a b.js it's | first on PATH: ${bin} | X=1\n`);
    // In a subshell too (runners whose command exits run in one).
    expect(sh('( npx mocha t.js )')).toContain('local mocha: t.js');
  });

  it('leaves to npx what it does not know: flags, versions, paths, a bin not installed', () => {
    for (const call of ['--no-install mocha', 'mocha@10 t.js', 'jest t.js', './mocha t.js', '@scope/pkg x']) {
      expect(sh(`npx ${call}`)).toBe(`real npx: ${call}\n`);
    }
  });

  it('comes before Node runners\' commands that call npx, first runs and reruns alike; not before others', () => {
    expect(buildTestCommand(runnerFromCommand('npx mocha --exit {files}'), ['t.js'])).toContain(LOCAL_NPX);
    expect(buildRerunCommand(runnerFromCommand('npx jest {files}'), [{ file: 't.test.js', ids: ['t.test.js > x'] }], 1)).toContain(LOCAL_NPX);
    expect(buildTestCommand(runnerFromCommand('node_modules/.bin/mocha {files}'), ['t.js'])).not.toContain('npx()');
    expect(buildTestCommand(runnerFromCommand('python3 -m pytest {files}'), ['t.py'])).not.toContain('npx()');
  });
});
