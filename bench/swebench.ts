/**
 * bench:swebench — real SWE-bench Verified instances through `swt eval` with no image, install or
 * test command, as a new user would run them: fixtures/swebench holds each instance's upstream tree
 * as a snapshot (scripts/swebench-snapshots.mjs) with the benchmark's own lists. Three passes: the
 * golden tests (S, and whether the F→P tests are exactly the benchmark's FAIL_TO_PASS), empty
 * predictions (S must be 0) and the incorrect patches (S must be 0). Markdown on stdout, JSON on the
 * last line.
 *
 *   npm run bench:swebench [-- <instance id regex>]     SWT_BENCH_CONCURRENCY (default 1)
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseInstances, type Instance } from '../src/eval/instances.js';
import { newF2P, sameF2P } from '../src/eval/benchmarkLists.js';
import { runEval, type TestSource } from '../src/eval/runEval.js';
import { onInterrupt } from '../src/sandbox/containers/liveContainers.js';
import { createDockerSandbox } from '../src/sandbox/index.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

async function main() {
  const dir = resolve(process.env.SWT_SWEBENCH_DIR ?? join(process.cwd(), 'fixtures', 'swebench'));
  const only = process.argv[2] ? new RegExp(process.argv[2]) : undefined;
  const file = join(dir, 'instances.jsonl');
  const instances = parseInstances(readFileSync(file, 'utf8'), file).filter((i) => !only || only.test(i.instance_id));
  if (instances.length === 0) throw new Error(`no instance of ${file} matches ${only}`);
  const concurrency = Number(process.env.SWT_BENCH_CONCURRENCY ?? 1);
  const sandbox = createDockerSandbox();
  const root = await mkdtemp(join(tmpdir(), 'swt-bench-swebench-'));
  // Stopped by a signal (a long run): the eval's directories go with the containers.
  const forget = onInterrupt(() => rmSync(root, { recursive: true, force: true }));
  try {
    const pass = async (name: string, list: readonly Instance[], source: TestSource) => {
      log(`${name}: ${list.length} instance(s), concurrency ${concurrency}`);
      const started = performance.now();
      const outcome = await runEval(sandbox, { instances: list, source, repos: join(dir, 'repos'), out: join(root, name), concurrency, fresh: true });
      return { ...outcome, wallMs: performance.now() - started };
    };
    const gold = await pass('gold', instances, { kind: 'gold' });
    const empty = await pass('empty', instances, { kind: 'empty' });
    const wrongList = instances.filter((i) => i.incorrect_patch).map((i) => ({ ...i, patch: i.incorrect_patch! }));
    const wrong = wrongList.length ? await pass('incorrect', wrongList, { kind: 'gold' }) : undefined;

    const rows = gold.results.map((r) => {
      const inst = instances.find((i) => i.instance_id === r.instance_id)!;
      const seen = newF2P(r);
      return {
        instance: r.instance_id,
        S: r.success,
        f2pEqual: sameF2P(seen, inst.FAIL_TO_PASS),
        f2p: seen,
        benchmarkF2P: inst.FAIL_TO_PASS,
        incorrectS: wrong?.results.find((w) => w.instance_id === r.instance_id)?.success ?? null,
        error: r.error ?? r.noTests ?? null,
        why: r.why?.success ?? null,
        transitions: Object.fromEntries(['F2P', 'F2F', 'P2P', 'P2F'].map((k) => [k, r.tests.filter((t) => t.transition === k).length])),
        warnings: r.warnings ?? [],
        seconds: Math.round(r.durationMs / 1000),
      };
    });
    console.log('| instance | gold S | F→P = benchmark | incorrect S | s | error |\n|---|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.instance} | ${r.S} | ${r.f2pEqual} | ${r.incorrectS ?? '—'} | ${r.seconds} | ${(r.error ?? r.why ?? '').replace(/\s+/g, ' ').slice(0, 200)} |`);
    const summary = {
      instances: instances.length,
      repos: new Set(instances.map((i) => i.repo)).size,
      goldS: gold.report.S,
      f2pEqual: rows.filter((r) => r.f2pEqual).length,
      emptyS: empty.report.S,
      incorrect: wrongList.length,
      incorrectS: wrong?.report.S ?? null,
      wallSeconds: { gold: Math.round(gold.wallMs / 1000), empty: Math.round(empty.wallMs / 1000), incorrect: wrong ? Math.round(wrong.wallMs / 1000) : null },
      rows,
    };
    console.log(JSON.stringify(summary));
  } finally {
    forget();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
