/** `swt demo --app`: the bundled fixture through the App and the fake GitHub, on real containers. */
import { jest } from '@jest/globals';
import { main } from '../../src/cli/main.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

describe('swt demo --app', () => {
  it('with no LLM endpoint: the App posts the reproduction comment and label, and the check run succeeds', async () => {
    const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    let stdout = '';
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((stdout += c.toString()), true));
    try {
      const code = await main(['node', 'swt', '--quiet', 'demo', '--app']);
      out.mockRestore();
      expect([code, process.exitCode ?? 0]).toEqual([0, 0]);
      const lines = stdout.split('\n');
      expect(lines[0]).toBe("## The App's comment on issue #1");
      expect(lines.slice(2, 4)).toEqual(['<!-- swt-bot:reproduction -->', '### 🧪 swt-bot reproduced this issue']);
      expect(stdout).toContain('## Labels on issue #1: reproduced\n');
      expect(stdout).toContain('## Check run "swt: reproduction" on pull request #2: completed, success\n\n**The fix passes the reproducing tests**\n');
      expect(stdout).toContain("## The App's comment on pull request #2\n\n<!-- swt-bot:validation -->\n### ✅ swt-bot: the fix passes the reproducing tests");
      expect(stdout).toMatch(/\(\d+ calls to the fake GitHub: REST, GraphQL and git over HTTP\)\n$/);
    } finally {
      out.mockRestore();
      if (saved.url !== undefined) process.env.OPENAI_BASE_URL = saved.url;
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
    }
    expect(containersOfOursOnceRetired()).toBe('');
  });
});
