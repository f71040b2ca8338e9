/** `swt demo`, the README's main job, and `swt reproduce`, on real containers. */
import { jest } from '@jest/globals';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { runDemo } from '../../src/demo/demo.js';
import { createFixtureRepo } from '../../src/demo/fixtureRepos.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';
import { msg, startScriptedLlm } from '../helpers/scriptedLlm.js';

describe('demo (real containers)', () => {
  afterAll(() => {
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('with no LLM endpoint: says so, reproduces with snippet, validates the fix commit, renders both comments', async () => {
    const result = await runDemo(createDockerSandbox(), { env: {} });
    expect(result.strategyNote).toMatch(/no LLM endpoint configured.*snippet/);
    expect(result.reproduction.status).toBe('reproduced');
    expect(result.validation?.success).toBe(true);
    expect(result.validation?.likelyCorrect).toBe(true);
    expect(result.markdown).toContain('swt-bot reproduced this issue');
    // The short test a maintainer would keep: the issue's call, one assertion, one comment quoting the issue.
    expect(result.reproduction.testPatch).toBe(
      [
        'diff --git a/tests/test_parse_duration_crashes_on_combined_units.py b/tests/test_parse_duration_crashes_on_combined_units.py',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/tests/test_parse_duration_crashes_on_combined_units.py',
        '@@ -0,0 +1,6 @@',
        '+from durations import parse_duration',
        '+',
        '+',
        '+def test_parse_duration_crashes_on_combined_units_like():',
        '+    # From the issue: The README says `parse_duration("1h30m") == 5400`, but it raises instead:',
        '+    assert parse_duration("1h30m") == 5400',
        '',
      ].join('\n'),
    );
    expect(result.markdown).toContain(result.reproduction.testPatch.trimEnd());
    expect(result.markdown).toMatch(/ValueError: invalid literal for int\(\) with base 10: '1h30'/);
    expect(result.markdown).toMatch(
      /\| `tests\/test_parse_duration_crashes_on_combined_units\.py::test_parse_duration_crashes_on_combined_units_like` \| ❌ fail( \(error\))? \| ✅ pass \| \*\*F→P\*\*/,
    );
  });

  it('with an endpoint configured: uses the configured strategy and the model', async () => {
    const server = await startScriptedLlm([
      msg('```custom-diff\ndiff\ntests/test_parse.py\ninsert\nEOF\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\nend diff\n```'),
    ]);
    const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = server.baseURL;
    process.env.OPENAI_API_KEY = 'sk-demo-scripted-key';
    try {
      const result = await runDemo(createDockerSandbox(), { strategy: 'zero-shot-plus', env: process.env });
      expect(result.strategyNote).toBe('LLM endpoint configured: strategy zero-shot-plus');
      expect(server.requests).toHaveLength(1);
      expect(result.reproduction.status).toBe('reproduced');
      expect(result.validation?.tests.find((t) => t.id === 'tests/test_parse.py::test_combined_units')?.transition).toBe('F2P');
      expect(result.markdown).not.toContain('sk-demo-scripted-key');
      // The fix commit appended its own test where ours goes: the test patch was rebased tolerantly.
      expect(result.validation?.warnings.join(' ')).toMatch(/did not apply cleanly to the fixed state.*applied it tolerantly/);
    } finally {
      await server.close();
      if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.url;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
    }
  });

  it('swt reproduce --issue <file> --out <patch> --json: writes the verified test patch and says reproduced', async () => {
    const fx = await createFixtureRepo('py-durations');
    let stdout = '';
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((stdout += c.toString()), true));
    try {
      const issue = join(fx.dir, '..', 'issue.md');
      const patch = join(fx.dir, '..', 'repro.patch');
      await writeFile(issue, `# ${fx.issue.title}\n\n${fx.issue.body}\n`);
      const code = await main(['node', 'swt', '--quiet', 'reproduce', '--repo', fx.dir, '--rev', fx.base, '--issue', issue, '--strategy', 'snippet', '--out', patch, '--json']);
      out.mockRestore();
      expect(code).toBe(0);
      const result = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(result).toMatchObject({ status: 'reproduced', strategy: 'snippet' });
      expect(await readFile(patch, 'utf8')).toBe(result.testPatch);
    } finally {
      out.mockRestore();
      await fx.cleanup();
    }
  });
});
