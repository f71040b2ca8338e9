import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { swt } from '../helpers/cli.js';
import { validateJson } from '../helpers/ecosystemRun.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

// A repository whose .github/swt.yml asks for 10 hours and 64 GiB per run. The operator's
// ceilings (SWT_MAX_*) win: the runs get them, and the output says so. One test reads the memory
// limit its own container got.

const TEST = [
  'import os',
  'from calc import add',
  '',
  'def test_add():',
  '    assert add(2, 3) == 5',
  '',
  'def test_memory_limit_is_the_ceiling():',
  "    for f in ('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'):",
  '        if os.path.exists(f):',
  '            assert int(open(f).read()) == 1024 * 1024 * 1024',
  '            return',
  "    raise AssertionError('no cgroup memory file')",
];
const TEST_PATCH = ['diff --git a/test_calc.py b/test_calc.py', 'new file mode 100644', '--- /dev/null', '+++ b/test_calc.py', `@@ -0,0 +1,${TEST.length} @@`, ...TEST.map((l) => `+${l}`), ''].join('\n');

let repo: TempRepo;
let base: string;
let head: string;
const saved = { timeout: process.env.SWT_MAX_TIMEOUT_SECONDS, memory: process.env.SWT_MAX_MEMORY_MIB };

beforeAll(() => {
  process.env.SWT_MAX_TIMEOUT_SECONDS = '600';
  process.env.SWT_MAX_MEMORY_MIB = '1024';
  repo = createGitRepo({
    '.github/swt.yml': 'image: python:3.11\ninstall: ""\ntest_command: python3 -m pytest -p no:cacheprovider {files}\nlimits:\n  timeout_seconds: 36000\n  memory_mib: 65536\n  pids: 256\n',
    'calc.py': 'def add(a, b):\n    return a - b\n',
  });
  base = repo.sha;
  head = repo.commit({ 'calc.py': 'def add(a, b):\n    return a + b\n' });
  writeFileSync(join(repo.path, '.git', 'swt-tests.diff'), TEST_PATCH);
});

afterAll(async () => {
  for (const [k, v] of [['SWT_MAX_TIMEOUT_SECONDS', saved.timeout], ['SWT_MAX_MEMORY_MIB', saved.memory]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

describe('operator ceilings over a repository config (real containers, the CLI)', () => {
  it('a config asking for 10 hours and 64 GiB gets the ceilings, and the text and JSON say so', async () => {
    const patchFile = join(repo.path, '.git', 'swt-tests.diff');
    const result = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(result.success).toBe(true);
    expect(result.limitsCapped).toEqual([
      { limit: 'timeoutMs', requested: 36000, ceiling: 600, unit: 's', variable: 'SWT_MAX_TIMEOUT_SECONDS', source: '.github/swt.yml' },
      { limit: 'memoryBytes', requested: 65536, ceiling: 1024, unit: 'MiB', variable: 'SWT_MAX_MEMORY_MIB', source: '.github/swt.yml' },
    ]);
    // The run really got the ceiling (its own cgroup says 1 GiB), and the fix is judged as usual.
    const byName = Object.fromEntries(result.tests.map((t: { id: string; transition: string }) => [t.id.split('::').pop(), t.transition]));
    expect(byName).toEqual({ test_add: 'F2P', test_memory_limit_is_the_ceiling: 'P2P' });

    const text = await swt('validate', '--repo', repo.path, '--base', base, '--head', head, '--tests', patchFile);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('limit capped: .github/swt.yml asked for timeout 36000 s capped at 600 s (SWT_MAX_TIMEOUT_SECONDS)');
    expect(text.stdout).toContain('limit capped: .github/swt.yml asked for memory 65536 MiB capped at 1024 MiB (SWT_MAX_MEMORY_MIB)');
    expect(text.stdout).toMatch(/^environment: swt-env:\S+ for base and head/m);

    // Flags are capped the same way; a lower request passes untouched.
    const r2 = await validateJson(repo.path, base, head, TEST_PATCH, '--memory', '512', '--timeout', '99999');
    expect(r2.limitsCapped).toEqual([expect.objectContaining({ limit: 'timeoutMs', requested: 99999, source: 'the caller' })]);
  });
});
