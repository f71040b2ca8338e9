/**
 * TEST HELPER. Runs the TypeScript sources in a child process with Node's type stripping: a
 * loader maps `./x.js` imports to `./x.ts`. For tests that must kill a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const LOADER = `export async function resolve(spec, ctx, next) {
  try { return await next(spec, ctx); } catch (e) {
    if (spec.startsWith('.') && spec.endsWith('.js')) return next(spec.slice(0, -3) + '.ts', ctx);
    throw e;
  }
}
`;

export interface TsChild {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output contains `text`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface TsChildRunner {
  dir: string;
  /** Runs `script` (an ES module's text; import sources by absolute file URL) with `args`. */
  start(name: string, script: string, args?: string[], env?: NodeJS.ProcessEnv): TsChild;
  cleanup(): void;
}

export function tsChildRunner(prefix = `swt-tschild-${process.pid}-`): TsChildRunner {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'loader.mjs'), LOADER);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'loader.mjs')).href)});\n`);
  return {
    dir,
    start(name, script, args = [], env = {}) {
      const file = join(dir, `${name}.mjs`);
      writeFileSync(file, script);
      const child = spawn(process.execPath, ['--no-warnings', '--import', pathToFileURL(join(dir, 'register.mjs')).href, file, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      });
      let out = '';
      const waiters: Array<() => void> = [];
      const onData = (c: Buffer) => {
        out += c.toString();
        for (const w of waiters.splice(0)) w();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
      return {
        child,
        output: () => out,
        exited,
        async waitFor(text, timeoutMs = 60_000) {
          const deadline = Date.now() + timeoutMs;
          const hit = () => (typeof text === 'string' ? out.includes(text) : text.test(out));
          while (!hit()) {
            if (Date.now() > deadline || child.exitCode !== null) throw new Error(`child never printed ${text}; output:\n${out}`);
            await new Promise<void>((r) => {
              waiters.push(r);
              setTimeout(r, 200);
            });
          }
        },
      };
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
