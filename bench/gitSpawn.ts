/**
 * What starting git costs this process (`npm run bench:spawn`): each git started here (node's
 * fork, whose cost grows with this process's memory) against each started by the helper process
 * (src/repo/gitSpawner.ts), side by side in one run, at three sizes of this process.
 *
 * Per size: `blocked`, the time the event loop is held by one start (median); `one`, a git call's
 * wall time start to end (median); `eight`, eight calls at once, as a validation starts its
 * states' git (median wall). The two ways alternate call by call. Last line: JSON.
 *
 * Options: --calls N (per way and size, default 40).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { gitBaseEnv } from '../src/repo/gitExec.js';
import { spawnGit, spawnerReady } from '../src/repo/gitSpawner.js';
import { median } from './stats.js';

const calls = Number(process.argv.find((a) => a.startsWith('--calls='))?.split('=')[1] ?? 40);

function once(cwd: string, direct: boolean): Promise<{ blocked: number; wall: number }> {
  const t = performance.now();
  const child = spawnGit(['rev-parse', 'HEAD'], { cwd, env: gitBaseEnv() }, direct);
  const blocked = performance.now() - t;
  child.stdout.resume();
  child.stderr.resume();
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code: number | null) => (code === 0 ? resolve({ blocked, wall: performance.now() - t }) : reject(new Error(`git exited ${code}`))));
  });
}

async function eight(cwd: string, direct: boolean): Promise<number> {
  const t = performance.now();
  await Promise.all(Array.from({ length: 8 }, () => once(cwd, direct)));
  return performance.now() - t;
}

async function measure(cwd: string) {
  const out = { direct: { blocked: [] as number[], one: [] as number[], eight: [] as number[] }, helper: { blocked: [] as number[], one: [] as number[], eight: [] as number[] } };
  for (let i = 0; i < calls; i++) {
    for (const way of i % 2 ? (['helper', 'direct'] as const) : (['direct', 'helper'] as const)) {
      const r = await once(cwd, way === 'direct');
      out[way].blocked.push(r.blocked);
      out[way].one.push(r.wall);
      if (i % 4 === 0) out[way].eight.push(await eight(cwd, way === 'direct'));
    }
  }
  const fig = (w: (typeof out)['direct']) => ({ blockedMs: +median(w.blocked).toFixed(2), oneMs: +median(w.one).toFixed(2), eightMs: +median(w.eight).toFixed(1) });
  return { direct: fig(out.direct), helper: fig(out.helper) };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'swt-bench-spawn-'));
  const held: Buffer[] = [];
  try {
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    execFileSync('git', ['-C', dir, 'add', 'a.txt']);
    execFileSync('git', ['-C', dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-qm', 'a']);
    if (!(await spawnerReady())) throw new Error('the git helper process did not start');
    const rows = [];
    // This process at three sizes: as it starts, and holding 150 and 400 MB more (a worker's caches).
    for (const extraMb of [0, 150, 400]) {
      while (held.length < extraMb) held.push(Buffer.alloc(1024 * 1024, 1));
      const rssMb = Math.round(process.memoryUsage().rss / 1024 ** 2);
      const r = await measure(dir);
      rows.push({ rssMb, ...r, blockedRatio: +(r.direct.blockedMs / r.helper.blockedMs).toFixed(1), eightRatio: +(r.direct.eightMs / r.helper.eightMs).toFixed(2) });
    }
    console.log(`git started here (direct) or by the helper; medians of ${calls} calls each, alternating`);
    console.log('| this process | blocked per start, direct / helper | one call | eight at once | eight: direct ÷ helper |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.rssMb} MB | ${r.direct.blockedMs} / ${r.helper.blockedMs} ms | ${r.direct.oneMs} / ${r.helper.oneMs} ms | ${r.direct.eightMs} / ${r.helper.eightMs} ms | ${r.eightRatio} |`);
    console.log(JSON.stringify({ calls, rows }));
  } finally {
    held.length = 0;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
