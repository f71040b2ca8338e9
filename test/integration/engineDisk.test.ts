/**
 * A worker's report of its Docker engine: the free disk of the data root, looked at directly for
 * the local engine and measured by a short container on the engine otherwise (as for a DOCKER_HOST
 * on another machine). On this machine both can be compared with statfs of the data root.
 */
import { statfs } from 'node:fs/promises';
import { dockerHostReport } from '../../src/app/dockerHost.js';
import { connectDocker } from '../../src/sandbox/docker.js';
import { parseStatfs } from '../../src/sandbox/engineDisk.js';
import { engineFreeDiskBytes, ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';
import { containersOfOurs } from '../helpers/docker.js';

const docker = connectDocker();
const GiB = 1024 ** 3;

async function dataRootFree(): Promise<number> {
  const info = (await docker.info()) as { DockerRootDir: string };
  const s = await statfs(info.DockerRootDir);
  return s.bavail * s.bsize;
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
    const measured = await engineFreeDiskBytes(docker);
    const direct = await dataRootFree();
    expect(measured).not.toBeNull();
    // Other tests write meanwhile: the same filesystem within half a GiB.
    expect(Math.abs(measured! - direct)).toBeLessThan(GiB / 2);
    expect(containersOfOurs()).toBe('');
  });

  it('a worker on a remote engine (DOCKER_HOST) reports it without credentials, with the measured free disk', async () => {
    const report = await dockerHostReport(docker, { DOCKER_HOST: 'tcp://ci:s3cret@127.0.0.1:2376' });
    expect(report.location).toBe('tcp://127.0.0.1:2376');
    expect(JSON.stringify(report)).not.toContain('s3cret');
    expect(report.freeDiskBytes).not.toBeNull();
    expect(Math.abs(report.freeDiskBytes! - (await dataRootFree()))).toBeLessThan(GiB / 2);
    const local = await dockerHostReport(docker, {});
    expect(local.location).toBe('unix:///var/run/docker.sock');
    expect(Math.abs(local.freeDiskBytes! - (await dataRootFree()))).toBeLessThan(GiB / 2);
    expect(containersOfOurs()).toBe('');
  });
});
