import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connectDocker } from '../../src/sandbox/docker.js';
import { prunePackageCaches } from '../../src/sandbox/environments/packageCache.js';
import { tempPrefix } from '../../src/util/tempDirs.js';
import { leftoverGitRepos } from './gitRepo.js';

/**
 * Containers this test process created and still has (jest runs files in parallel workers,
 * each its own pid, so only our own label counts here; .ci/run checks the whole engine at the end).
 */
export function containersOfOurs(pid: number = process.pid, opts: { running?: boolean } = {}): string {
  // `running`: only those already started (a container only created cannot be killed yet).
  const which = opts.running ? ['--filter', 'status=running'] : ['-a'];
  return execFileSync('docker', ['ps', '-q', ...which, '--filter', 'label=swt-bot', '--filter', `label=swt-bot.pid=${pid}`], { encoding: 'utf8' }).trim();
}

/**
 * Our containers once a build's stopped install containers, which it hands to a removal in the
 * background, are gone (within seconds; 10 s at most here). Any other container counts at once.
 */
export function containersOfOursOnceRetired(): string {
  for (let waited = 0; ; waited += 200) {
    const ids = containersOfOurs();
    if (!ids || waited >= 10_000) return ids;
    let states: string[] = ['gone'];
    try {
      states = execFileSync('docker', ['inspect', '-f', '{{index .Config.Labels "swt-bot.role"}} {{.State.Status}}', ...ids.split('\n')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n');
    } catch {
      // One went between the listing and the inspection: look again.
    }
    if (!states.every((s) => s === 'gone' || /^install (exited|created|removing|dead)$/.test(s))) return ids;
    // The removal's request is already with the engine: blocking this thread does not hold it up.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
}

/** Networks (install networks, the egress proxy's) this test process created and still has. */
export function networksOfOurs(pid: number = process.pid): string {
  return execFileSync('docker', ['network', 'ls', '-q', '--filter', 'label=swt-bot', '--filter', `label=swt-bot.pid=${pid}`], { encoding: 'utf8' }).trim();
}

/** Removes the package caches of repositories that no longer exist on this host (temporary test repositories). */
export async function removePackageCachesOfGoneRepos(): Promise<void> {
  await prunePackageCaches(connectDocker(), Number.POSITIVE_INFINITY);
}

/** Removes the environment images whose snapshot is one of these commits (e.g. `commitsMade()`). */
export async function removeEnvImagesBuiltFrom(commits: Iterable<string>): Promise<void> {
  const docker = connectDocker();
  const ours = new Set(commits);
  const images = await docker.listImages({ filters: { label: ['swt-bot.env.snapshotRev'] } });
  for (const img of images) {
    if (!ours.has(img.Labels?.['swt-bot.env.snapshotRev'] ?? '')) continue;
    for (const tag of img.RepoTags ?? []) await docker.getImage(tag).remove().catch(() => undefined);
  }
}

/** This process left no container, no sandbox temp dir (nor one of `otherTempPrefixes`) and no temp git repo. */
export function expectNothingLeftBehind(otherTempPrefixes: string[] = []): void {
  expect(containersOfOursOnceRetired()).toBe('');
  const prefixes = [tempPrefix(), ...otherTempPrefixes];
  expect(readdirSync(tmpdir()).filter((n) => prefixes.some((p) => n.startsWith(p)))).toEqual([]);
  expect(leftoverGitRepos()).toEqual([]);
}
