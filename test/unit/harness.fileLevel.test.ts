/**
 * The file-level runner: a command no runner recognises runs each test file on its own; the exit
 * status is the file's verdict, carried as file-level through classification and renderings.
 * The shell commands it builds are run here with sh (no container: only `true`/`false`-like scripts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareRuns } from '../../src/harness/classify.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { renderMarkdown, renderText } from '../../src/harness/render.js';
import { buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';
import type { RunResult } from '../../src/results/types.js';

function run(cmd: string, cwd: string): { code: number; output: string } {
  try {
    return { code: 0, output: execFileSync('sh', ['-c', cmd], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (e: any) {
    return { code: e.status, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('file-level runs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'swt-filelevel-'));
    writeFileSync(join(dir, 'ok.js'), "console.log('fine');\n");
    writeFileSync(join(dir, 'bad.js'), "throw new Error('dequal(new Map(), new Map()) is false');\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each file alone with the command, reads its exit status, and marks the verdicts file-level', () => {
    const spec = runnerFromCommand(`${process.execPath} {files}`);
    expect(spec.kind).toBe('file-level');
    const out = join(dir, 'out');
    const cmd = buildTestCommand(spec, ['ok.js', 'bad.js'], out);
    const r = run(cmd, dir);
    expect(r.code).toBe(1);
    const reports = { 'exit-0.txt': readFileSync(join(out, 'exit-0.txt'), 'utf8'), 'exit-1.txt': readFileSync(join(out, 'exit-1.txt'), 'utf8') };
    expect(reports).toEqual({ 'exit-0.txt': '0\n', 'exit-1.txt': '1\n' });
    const parsed = parseRunReports(spec, { files: ['ok.js', 'bad.js'], reports, output: r.output, exitCode: r.code, timedOut: false });
    expect(parsed.tests).toEqual([
      { id: 'ok.js', file: 'ok.js', outcome: 'passed', fileLevel: true },
      { id: 'bad.js', file: 'bad.js', outcome: 'failed', fileLevel: true, failureKind: 'error', message: expect.stringMatching(/^exited with code 1\n[\s\S]*dequal\(new Map\(\), new Map\(\)\) is false/) },
    ]);
    expect(parsed.fileErrors).toEqual([]);
  });

  it('a file the run never reported (killed) is a file error; a command without {files} gets the file appended', () => {
    const spec = runnerFromCommand('npm test');
    expect(buildTestCommand(spec, ['t.js'], '/swt-out')).toBe("mkdir -p /swt-out 2>/dev/null; rc=0; ( npm test t.js; rc=$?; echo $rc > /swt-out/exit-0.txt; exit $rc ) || rc=$?; exit $rc");
    const parsed = parseRunReports(spec, { files: ['t.js'], reports: {}, output: 'Killed', exitCode: 137, timedOut: true });
    expect(parsed.fileErrors).toMatchObject([{ file: 't.js', kind: 'timeout' }]);
  });

  it('F→P of a file-level verdict is shown as file-level in the comment and the text rendering', () => {
    const side = (outcome: 'passed' | 'failed'): RunResult => ({ tests: [{ id: 'test/index.js', file: 'test/index.js', outcome, fileLevel: true }], fileErrors: [], timedOut: false, exitCode: outcome === 'passed' ? 0 : 1, output: '', durationMs: 1 });
    const v = compareRuns([side('failed')], [side('passed')]);
    expect(v.tests).toEqual([expect.objectContaining({ id: 'test/index.js', transition: 'F2P', fileLevel: true })]);
    expect(v.success).toBe(true);
    expect(renderMarkdown(v)).toMatch(/\| `test\/index\.js` \|.*\*\*F→P\*\* \(file-level\)/);
    expect(renderText(v)).toMatch(/test\/index\.js .*F→P \(file-level\)/);
  });
});
