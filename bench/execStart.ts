/**
 * bench:exec — what a run's first command pays before it begins, in a container already running
 * (a warm pool's): through `docker exec` (as every kept run's first command goes today, and as
 * bench:harness's floor goes), or as a line on the stdin of the container's own waiting process,
 * attached when the run takes it. Each sample is a new container of a real environment image,
 * the two ways taking turns in it; the time is from the API call to the command's own clock
 * inside the container. The last line of stdout is one JSON object.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDocker } from '../src/sandbox/docker.js';
import { containerLabels } from '../src/sandbox/containers/limits.js';
import { createDockerSandbox } from '../src/sandbox/index.js';
import { median } from './stats.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const SAMPLES = Math.max(3, Number(process.env.SWT_BENCH_SAMPLES) || 15);

/** Milliseconds from `t0` (epoch ms) to the first `T<ns>` the stream prints (the command's `date +%s%N`). */
function clockFrom(stream: NodeJS.ReadableStream, t0: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = '';
    stream.on('data', (b: Buffer) => {
      seen += b.toString('latin1');
      const m = /T(\d{19})/.exec(seen);
      if (m) resolve(Number(BigInt(m[1]!) / 1000n) / 1000 - t0);
    });
    stream.on('error', reject);
    stream.on('end', () => reject(new Error(`no clock in the output: ${seen.slice(-200)}`)));
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'swt-bench-exec-'));
  const sandbox = createDockerSandbox();
  const docker = connectDocker();
  try {
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    const git = (...a: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...a], { encoding: 'utf8' });
    git('init', '-q');
    git('add', 'a.txt');
    git('commit', '-qm', 'a');
    const env = await sandbox.ensureEnvironment({ repo: dir, rev: git('rev-parse', 'HEAD').trim(), baseImage: 'python:3.11', install: '' });
    const viaExec: number[] = [];
    const viaStdin: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      log(`sample ${i + 1}/${SAMPLES}`);
      // The pool's container: started ahead, its process waiting for one line on its own stdin.
      const c = await docker.createContainer({
        Image: env.image,
        Entrypoint: [],
        Cmd: ['sh', '-c', 'IFS= read -r cmd && eval "$cmd"; exec sleep infinity'],
        User: '1000:1000',
        Labels: containerLabels('probe'),
        OpenStdin: true,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        HostConfig: { NetworkMode: 'none' },
      });
      try {
        await c.start();
        await new Promise((r) => setTimeout(r, 300));
        const command = 'echo T$(date +%s%N)';
        // Which goes first alternates: neither always meets a container that just did something.
        const stdinFirst = i % 2 === 0;
        const byStdin = async () => {
          const t0 = Date.now();
          const s = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as NodeJS.ReadWriteStream & { destroy(): void };
          const clock = clockFrom(s, t0);
          s.write(`${command}\n`);
          viaStdin.push(await clock);
          s.destroy();
        };
        const byExec = async () => {
          const t0 = Date.now();
          const e = await c.exec({ Cmd: ['sh', '-c', command], AttachStdout: true, AttachStderr: true });
          viaExec.push(await clockFrom(await e.start({ hijack: true, stdin: false }), t0));
        };
        if (stdinFirst) await byStdin();
        await byExec();
        if (!stdinFirst) await byStdin();
      } finally {
        await c.remove({ force: true });
      }
    }
    const row = { samples: SAMPLES, execMs: Number(median(viaExec).toFixed(1)), stdinMs: Number(median(viaStdin).toFixed(1)) };
    process.stdout.write(`A run's first command in a running container, median of ${SAMPLES}: through docker exec ${row.execMs} ms, through the container's own stdin ${row.stdinMs} ms\n`);
    process.stdout.write(`${JSON.stringify({ ...row, execOverStdin: Number((row.execMs / row.stdinMs).toFixed(1)), savedMs: Number((row.execMs - row.stdinMs).toFixed(1)) })}\n`);
  } finally {
    await sandbox.close?.();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
