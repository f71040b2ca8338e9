import { swt } from '../helpers/cli.js';
import { connectDocker, inspectImage } from '../../src/sandbox/docker.js';

// `swt images`: what a machine is prepared with before its first job. The images asked for here
// are there already on a machine that ran the other suites (building one is the business of
// sandbox.images); what this shows is the command's answer and its error.

describe('swt images (real engine)', () => {
  it('names the local image standing for each base image asked for, and the egress proxy\'s; each is really there', async () => {
    const r = await swt('images', 'node:22', 'python:3.11', '--json');
    expect(r.stderr).not.toMatch(/error/);
    expect(r.code).toBe(0);
    const prepared = JSON.parse(r.stdout.trim().split('\n').pop()!) as { ref: string; image: string; built: boolean; ms: number }[];
    expect(prepared.map((p) => p.ref)).toEqual(['node:22', 'python:3.11', 'egress-proxy']);
    expect(prepared[0]!.image).toMatch(/^swt-base\/node:22-[0-9a-f]{8}$/);
    expect(prepared[1]!.image).toMatch(/^swt-base\/python:3\.11-[0-9a-f]{8}$/);
    const docker = connectDocker();
    for (const p of prepared) expect(await inspectImage(docker, p.image)).toBeTruthy();
    // Asked again, all are there: nothing is built twice.
    const again = await swt('images', 'node:22', 'python:3.11', '--json');
    expect((JSON.parse(again.stdout.trim().split('\n').pop()!) as { built: boolean }[]).map((p) => p.built)).toEqual([false, false, false]);
  }, 1_800_000);

  it('a base image it can neither pull nor build offline is a clear error, exit 2', async () => {
    // No pull is tried (test/setup.ts: SWT_PULL=never): no connection leaves the machine.
    expect(process.env.SWT_PULL).toBe('never');
    const r = await swt('images', 'example/no-such-image:1');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot get the base image example\/no-such-image:1: it could not be pulled and there is no offline recipe for it/);
  }, 120_000);
});
