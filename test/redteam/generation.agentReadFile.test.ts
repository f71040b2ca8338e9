import { executeTool, READ_FILE_MAX_BYTES } from '../../src/generation/agentTools.js';
import { prepareContext } from '../../src/pipeline/context.js';
import { openWorkbench, type OpenWorkbench } from '../../src/pipeline/workbench.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { SandboxSession } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo } from '../helpers/gitRepo.js';

/** What the agent's read_file takes from a sandbox is bounded, whatever the file in it. */

let workbench: OpenWorkbench;
let session: SandboxSession;

beforeAll(async () => {
  const sandbox = createDockerSandbox();
  const repo = createGitRepo({ 'calc.py': 'def add(a, b):\n    return a + b\n', 'tests/test_calc.py': 'def test_x():\n    pass\n' });
  const ctx = await prepareContext(sandbox, { repo: repo.path, base: repo.sha, image: 'python:3.11', install: '', testCmd: 'python -m pytest' });
  workbench = await openWorkbench(sandbox, ctx);
  session = await workbench.openSession();
}, 600_000);

afterAll(async () => {
  await session?.close();
  await workbench?.close();
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

const MiB = 1024 ** 2;

describe('agent read_file', () => {
  it('attack: a 2 GiB sparse file is read by the agent (the App would hold it all)', async () => {
    // One line of text, then 2 GiB of (sparse) zeros.
    const made = await session.exec('printf "first line\\n" > huge.txt && truncate -s 2G huge.txt && stat -c %s huge.txt');
    expect(made.output.trim()).toBe(String(2 * 1024 ** 3));
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      const call = { id: '1', name: 'read_file', arguments: { path: 'huge.txt' }, rawArguments: '{"path":"huge.txt"}' };
      const out = await executeTool(call, { session, workbench, issue: { title: 't', body: 'b' }, secrets: [], maxOutputChars: 20_000 });
      expect(out.output).toContain('1 first line');
      expect(out.output).toContain(`the file is ${2 * 1024 ** 3} bytes, only its first 1 MiB`);
      expect(out.output).toContain('the rest is cut');
      const head = await session.readFileHead('huge.txt', READ_FILE_MAX_BYTES);
      expect(head).toMatchObject({ bytes: 2 * 1024 ** 3, cut: true });
      expect(head.text.length).toBe(READ_FILE_MAX_BYTES);
      // A link to an endless device: stat says 0 bytes, the read stops at the bound all the same.
      await session.exec('ln -s /dev/zero zeros');
      expect(await session.readFileHead('zeros', 4096)).toMatchObject({ cut: true, bytes: 4097 });
      await expect(session.readFile('zeros')).rejects.toThrow(/more than the 8 MiB a whole read takes/);
      // A whole read (edit_file's) is refused, not attempted.
      await expect(session.readFile('huge.txt')).rejects.toThrow(/huge.txt is 2147483648 bytes, more than the 8 MiB a whole read takes/);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    // Unbounded, this took the process from 80 MiB to 4.8 GiB; bounded, it keeps a few MiB.
    console.log(`read_file of a 2 GiB sparse file: RSS grew by ${((peak - before) / MiB).toFixed(1)} MiB`);
    expect(peak - before).toBeLessThan(200 * MiB);
  });
});
