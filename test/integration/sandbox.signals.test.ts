import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connectDocker } from '../../src/sandbox/docker.js';
import { tempPrefix } from '../../src/util/tempDirs.js';
import { reapOrphans } from '../../src/sandbox/containers/liveContainers.js';
import { containerLabels } from '../../src/sandbox/containers/limits.js';
import { containersOfOurs, expectNothingLeftBehind, networksOfOurs, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { tsChildRunner, type TsChildRunner } from '../helpers/tsChild.js';

// A process interrupted (SIGINT/SIGTERM) while a run or a session is live removes its containers
// and exits with 130/143. The child runs the TypeScript sources with Node's type stripping.

const docker = connectDocker();
let runner: TsChildRunner;
let repo: TempRepo;

type Mode = 'run' | 'session' | 'install';

function childScript(mode: Mode): string {
  const index = pathToFileURL(resolve('src/sandbox/index.ts')).href;
  return `
import { createDockerSandbox } from '${index}';
const [repo, rev] = process.argv.slice(2);
const sandbox = createDockerSandbox();
const env = await sandbox.ensureEnvironment({ repo, rev, baseImage: 'python:3.11', install: ${JSON.stringify(mode === 'install' ? 'echo INSTALLING; sleep 100000' : '')} });
if (${JSON.stringify(mode)} === 'run') {
  await sandbox.run({ env, repo, state: { rev, patches: [] }, command: 'sleep 100000', limits: { timeoutMs: 600000 } });
  console.log('RUN ENDED WITHOUT A SIGNAL');
} else {
  const s = await sandbox.openSession({ env, repo, state: { rev, patches: [] } });
  console.log('SESSION OPEN');
  setInterval(() => {}, 1000);
}
`;
}

function start(mode: Mode): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: string | null; out: string }>;
} {
  const c = runner.start(mode, childScript(mode), [repo.path, repo.sha]);
  return { child: c.child, output: c.output, exited: c.exited.then((e) => ({ ...e, out: c.output() })) };
}

/** Running containers of a process in one role (the install, not the egress proxy). */
async function waitForRole(pid: number, role: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const list = await docker.listContainers({ filters: { label: [`swt-bot.pid=${pid}`, `swt-bot.role=${role}`], status: ['running'] } });
    if (list.length > 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the child never started a ${role} container`);
}

beforeAll(() => {
  runner = tsChildRunner(`swt-sigtest-${process.pid}-`);
  repo = createGitRepo({ 'a.txt': 'a\n' });
});

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  runner.cleanup();
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind([`swt-sigtest-${process.pid}-`]);
});

describe('interrupted processes', () => {
  it('SIGTERM during a run removes the container and exits with 143', async () => {
    const { child, exited } = start('run');
    // The run's container, not the environment build's install container before it.
    await waitForRole(child.pid!, 'run');
    expect(containersOfOurs(child.pid!).split('\n')).toHaveLength(1);
    child.kill('SIGTERM');
    const r = await exited;
    expect(r.out).not.toContain('RUN ENDED WITHOUT A SIGNAL');
    expect(r.code).toBe(143);
    expect(containersOfOurs(child.pid!)).toBe('');
    // Its temporary directories went with it.
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith(tempPrefix(child.pid!)))).toEqual([]);
  });

  it('SIGINT with an open session removes the session container and exits with 130', async () => {
    const { child, exited, output } = start('session');
    await waitForRole(child.pid!, 'session');
    for (let i = 0; i < 300 && !output().includes('SESSION OPEN'); i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    const r = await exited;
    expect(r.code).toBe(130);
    expect(r.out).toContain('SESSION OPEN');
    expect(containersOfOurs(child.pid!)).toBe('');
  });

  it('SIGTERM during an install removes the install container, the egress proxy and their networks', async () => {
    const { child, exited } = start('install');
    await waitForRole(child.pid!, 'install');
    expect(networksOfOurs(child.pid!).split('\n').filter(Boolean)).toHaveLength(2);
    child.kill('SIGTERM');
    const r = await exited;
    expect(r.code).toBe(143);
    expect(containersOfOurs(child.pid!)).toBe('');
    expect(networksOfOurs(child.pid!)).toBe('');
  });

  it('a container whose owner pid now belongs to another process (a restarted worker) is reaped; its own are kept', async () => {
    const image = (await docker.listImages({ filters: { reference: ['swt-base/debian:*'] } }))[0]!.RepoTags![0]!;
    // Labelled as made by this very pid, but by a process that started at another time.
    const stale = await docker.createContainer({ Image: image, Cmd: ['true'], Labels: { ...containerLabels('run'), 'swt-bot.started': '1' } });
    const mine = await docker.createContainer({ Image: image, Cmd: ['true'], Labels: containerLabels('run') });
    try {
      await reapOrphans(docker);
      await expect(docker.getContainer(stale.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await docker.getContainer(mine.id).inspect()).Id).toBe(mine.id);
    } finally {
      await docker.getContainer(mine.id).remove({ force: true }).catch(() => undefined);
      await docker.getContainer(stale.id).remove({ force: true }).catch(() => undefined);
    }
  });

  it('SIGTERM also removes what the registry missed: a container and a network whose create answered while the handler was removing', async () => {
    const image = (await docker.listImages({ filters: { reference: ['swt-base/debian:*'] } }))[0]!.RepoTags![0]!;
    const src = (f: string) => JSON.stringify(pathToFileURL(resolve(`src/sandbox/${f}`)).href);
    const c = runner.start(
      'unregistered',
      `import { connectDocker } from ${src('docker.ts')};
import { containerLabels } from ${src('containers/limits.ts')};
import { registerContainer } from ${src('containers/liveContainers.ts')};
const docker = connectDocker();
const image = process.argv[2];
const a = await docker.createContainer({ Image: image, Cmd: ['sleep', '1000'], Labels: containerLabels('run') });
registerContainer(docker, a.id);
// Never registered: as if their creates answered after the handler had listed what to remove.
await docker.createContainer({ Image: image, Cmd: ['true'], Labels: containerLabels('run') });
await docker.createNetwork({ Name: 'swt-unregistered-' + process.pid, Internal: true, Labels: containerLabels('install') });
console.log('READY');
setInterval(() => {}, 1000);
`,
      [image],
    );
    await c.waitFor('READY');
    expect(containersOfOurs(c.child.pid!).split('\n')).toHaveLength(2);
    expect(networksOfOurs(c.child.pid!)).not.toBe('');
    c.child.kill('SIGTERM');
    expect((await c.exited).code).toBe(143);
    expect(containersOfOurs(c.child.pid!)).toBe('');
    expect(networksOfOurs(c.child.pid!)).toBe('');
  });

  it('after a SIGKILL during an install, the next sandbox reaps its containers and networks', async () => {
    const { child, exited } = start('install');
    await waitForRole(child.pid!, 'install');
    // What it has while alive: a SIGKILL gives it no chance to remove any of it. (Any test process's
    // next sandbox may reap it first; this one's reapOrphans must leave none either way.)
    expect(containersOfOurs(child.pid!)).not.toBe('');
    expect(networksOfOurs(child.pid!)).not.toBe('');
    child.kill('SIGKILL');
    await exited;
    await reapOrphans(docker);
    expect(containersOfOurs(child.pid!)).toBe('');
    expect(networksOfOurs(child.pid!)).toBe('');
  });
});
