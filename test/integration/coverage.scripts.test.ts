/**
 * The in-sandbox V8 scripts on real Node processes (here on the host, as the sandbox runs them):
 * a forked pool worker ended with SIGTERM still writes its coverage; one killed outright is
 * reported lost rather than counted as "not executed".
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { COLLECT_JS, PRELOAD_JS } from '../../src/coverage/v8Scripts.js';
import { collectedSchema, v8LineCounts } from '../../src/coverage/v8Counts.js';

const run = promisify(execFile);

describe('V8 preload and collector on real Node processes', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'swt-v8scripts-'));
    await writeFile(join(root, 'preload.cjs'), PRELOAD_JS);
    await writeFile(join(root, 'collect.cjs'), COLLECT_JS);
    await writeFile(join(root, 'target.js'), ['exports.f = function (x) {', '  if (x) {', '    return 1', '  }', '  return 2', '}', ''].join('\n'));
    // A pool worker: loads the target through vm (as jest and vitest do), calls it, then waits for its parent to end it.
    await writeFile(
      join(root, 'worker.js'),
      [
        "const vm = require('vm'); const fs = require('fs');",
        "const file = __dirname + '/target.js';",
        "const m = { exports: {} };",
        "new vm.Script('(function (exports) {' + fs.readFileSync(file, 'utf8') + '\\n})', { filename: file }).runInThisContext()(m.exports);",
        'm.exports.f(true); m.exports.f(true); m.exports.f(false);',
        "process.send('ready'); setInterval(() => {}, 1000);",
      ].join('\n'),
    );
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  async function poolRun(name: string, signal: NodeJS.Signals) {
    const dir = join(root, name);
    const env = { ...process.env, SWT_COV_V8_DIR: dir, NODE_V8_COVERAGE: dir, SWT_COV_ROOT: root, SWT_COV_TARGETS: '["target.js"]', NODE_OPTIONS: `--require=${join(root, 'preload.cjs')}` };
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [join(root, 'worker.js')], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child.on('message', () => child.kill(signal));
      child.on('exit', () => resolve());
      child.on('error', reject);
    });
    await run(process.execPath, [join(root, 'collect.cjs'), dir, join(dir, 'out.json')], { env: { ...process.env, SWT_COV_ROOT: root, SWT_COV_TARGETS: '["target.js"]' } });
    return collectedSchema.parse(JSON.parse(await readFile(join(dir, 'out.json'), 'utf8')));
  }

  it('a worker ended with SIGTERM writes its coverage; the code V8 compiled comes with it', async () => {
    const collected = await poolRun('term', 'SIGTERM');
    expect(collected.lost).toEqual([]);
    expect(collected.scripts.some((s) => s.source?.startsWith('(function (exports) {exports.f'))).toBe(true);
    const { counts } = await v8LineCounts(collected, ['target.js']);
    // f ran three times (line 2), its `if` block twice (3–4), the code after it once (5); line 1
    // starts before f's block, so it has the count of the script around it.
    expect(counts['target.js']).toMatchObject({ 1: 1, 2: 3, 3: 2, 4: 2, 5: 1 });
  });

  it('a worker killed outright is reported lost, and none of its half-counts are kept', async () => {
    const collected = await poolRun('kill', 'SIGKILL');
    expect(collected.lost).toHaveLength(1);
    expect(collected.scripts).toEqual([]);
  });
});
