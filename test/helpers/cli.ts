import { jest } from '@jest/globals';
import { main } from '../../src/cli/main.js';

/** Runs the CLI in-process (quiet); returns exit code, stdout and stderr. */
export async function swt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((stdout += c.toString()), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((stderr += c.toString()), true));
  try {
    const code = await main(['node', 'swt', '--quiet', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
