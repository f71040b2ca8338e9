/**
 * A worker's report of its Docker engine: the free disk of the data root, looked at directly for
 * the local engine and measured by a short container on the engine otherwise (as for a DOCKER_HOST
 * on another machine). On this machine both can be compared with statfs of the data root.
 */
import { statfs } from 'node:fs/promises';
import { dockerHostReport } from '../../src/web/dockerHost.js';
import { connectDocker, diskUsage } from '../../src/sandbox/docker.js';
import { parseStatfs } from '../../src/sandbox/containers/engineDisk.js';
import { engineFreeDiskBytes, ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

const docker = connectDocker();
const GiB = 1024 ** 3;

async function dataRootFree(): Promise<number> {
  const info = (await docker.info()) as { DockerRootDir: string };
  const s = await statfs(info.DockerRootDir);
  return s.bavail * s.bsize;
}

/**
 * A measure of the data root's free space, taken between two direct looks. Tests in other processes
 * write and free gigabytes meanwhile (image builds, disk-limit runs): the measure must lie within what
 * the two looks saw, give or take a quarter GiB.
 */
async function expectMeasuredFree(measure: () => Promise<number | null>): Promise<void> {
  const before = await dataRootFree();
  const measured = await measure();
  const after = await dataRootFree();
  expect(measured).not.toBeNull();
  expect(measured!).toBeGreaterThan(Math.min(before, after) - GiB / 4);
  expect(measured!).toBeLessThan(Math.max(before, after) + GiB / 4);
}

beforeAll(async () => {
  // The probe runs on one of our base images; a worker has built one before it reports.
  await ensureBaseImage('python:3.11', { docker, caBundle: await loadCaBundle() });
}, 600_000);

describe('the engine\'s free disk', () => {
  it('reads `stat -f` output: available blocks times the block size', () => {
    expect(parseStatfs('1000 4096\r\n')).toBe(4_096_000);
    expect(parseStatfs('stat: cannot read file system information')).toBeNull();
  });

  it('measured from inside the engine, it is the data root\'s free space; the probe container is gone', async () => {
    await expectMeasuredFree(() => engineFreeDiskBytes(docker));
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('a worker on a remote engine (DOCKER_HOST) reports it without credentials, with the measured free disk', async () => {
    let report: Awaited<ReturnType<typeof dockerHostReport>> | undefined;
    await expectMeasuredFree(async () => (report = await dockerHostReport(docker, { DOCKER_HOST: 'tcp://ci:s3cret@127.0.0.1:2376' })).freeDiskBytes);
    expect(report!.location).toBe('tcp://127.0.0.1:2376');
    expect(JSON.stringify(report)).not.toContain('s3cret');
    let local: typeof report;
    await expectMeasuredFree(async () => (local = await dockerHostReport(docker, {})).freeDiskBytes);
    expect(local!.location).toBe('unix:///var/run/docker.sock');
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('a disk usage asked while another is measured is asked again, not failed: the engine measures one at a time', async () => {
    // Three at once, straight to the engine: it refuses those that come while one runs.
    const raw = await Promise.allSettled([docker.df(), docker.df(), docker.df()]);
    const refused = raw.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect(refused.length).toBeGreaterThan(0);
    for (const why of refused) expect(why).toMatch(/disk usage operation is already running/);
    // Three at once through diskUsage: each waits its turn and gets the figures.
    const measured = await Promise.all([diskUsage(docker), diskUsage(docker), diskUsage(docker)]);
    for (const m of measured) expect(Array.isArray(m.Images)).toBe(true);
  }, 120_000);
});
