import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import Docker from 'dockerode';
import { validate, type ValidationResult } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { packageCacheVolume } from '../../src/sandbox/environments/environment.js';
import { SAVED_INSTALLS_DIR } from '../../src/sandbox/environments/savedInstall.js';
import { swt } from './cli.js';
import { expectNothingLeftBehind, networksOfOurs, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from './docker.js';
import { cleanupGitRepos, commitsMade } from './gitRepo.js';

export interface ValidateJson {
  tests: { id: string; transition: string }[];
  success: boolean;
  runner: string;
  warnings: string[];
  environment: { image: string; dependenciesAsOf?: string };
  runs: Record<'base' | 'head', unknown>;
  /** Reruns of the tests that moved (confirmation, on by default). */
  confirmation?: { rounds: number; tests: string[]; alone: boolean; inProcess?: string[]; runs: Record<'base' | 'head', { tests: { id: string; outcome: string }[] }[]> };
  [more: string]: unknown;
}

/**
 * `swt validate --json` (and any `flags`) on a temp repository with `testPatch` as the tests; its
 * last line, parsed. Nothing on stderr: no error, no warning.
 */
export async function validateJson(repoPath: string, base: string, head: string, testPatch: string, ...flags: string[]): Promise<ValidateJson> {
  // Beside the repo, not in it (the patch is not part of base), and removed after: nothing left in /tmp.
  const dir = await mkdtemp(join(tmpdir(), 'swt-test-patch-'));
  const tests = join(dir, `${base.slice(0, 8)}-tests.patch`);
  await writeFile(tests, testPatch);
  const r = await swt('validate', '--repo', repoPath, '--base', base, '--head', head, '--tests', tests, ...flags, '--json').finally(() => rm(dir, { recursive: true, force: true }));
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ValidateJson;
}

/** What an ecosystem test's real runs leave: env images of its commits, its repos and their package caches; then nothing of ours. */
export async function cleanUpEcosystemRuns(): Promise<void> {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
  expect(networksOfOurs()).toBe('');
}

/** `[id, transition]` pairs, the shape the ecosystem tests compare. */
export const transitions = (out: { tests: { id: string; transition: string }[] }): [string, string][] => out.tests.map((t) => [t.id, t.transition]);

/**
 * The package cache at work: a validation through the API builds the repository's environment
 * online (filling its package cache); its image is removed, and the same validation runs again
 * with the egress proxy refusing every registry, so its install finds everything in the cache or
 * fails: first from the saved install of its key, then (the image and the saved installs removed)
 * by an install resolving offline from the cached downloads. Returns the three results.
 */
export async function validateOnlineThenFromCacheOnly(repo: string, base: string, head: string, testPatch: string): Promise<[ValidationResult, ValidationResult, ValidationResult]> {
  const docker = new Docker();
  const online = await validate(createDockerSandbox(), { repo, base, head, testPatch });
  await docker.getImage(online.environment.image).remove({ force: true });
  const offline = () => validate(createDockerSandbox({ egress: { hosts: ['deb.debian.org'] } }), { repo, base, head, testPatch });
  const restored = await offline();
  await dropSavedInstalls(docker, await packageCacheVolume({ repo }), restored.environment.image);
  await docker.getImage(restored.environment.image).remove({ force: true });
  return [online, restored, await offline()];
}

/**
 * The package cache's promise, the same for every ecosystem: the three validations of
 * validateOnlineThenFromCacheOnly judge the tests as `expected`, with no warning (every package came
 * from the registry, then from the cache), and neither offline one reused an image.
 */
export async function expectSameJudgementFromCacheOnly(repo: string, base: string, head: string, testPatch: string, expected: [string, string][]): Promise<void> {
  const [online, restored, resolved] = await validateOnlineThenFromCacheOnly(repo, base, head, testPatch);
  for (const v of [online, restored, resolved]) {
    expect(transitions(v)).toEqual(expected);
    expect(v.warnings).toEqual([]);
  }
  // The first offline build extracted the saved install, the second installed offline.
  expect(restored.environment.cached).toBe(false);
  expect(resolved.environment.cached).toBe(false);
}

/** Removes the saved installs from a package cache volume (our own command, no network). */
async function dropSavedInstalls(docker: Docker, volume: string, image: string): Promise<void> {
  const c = await docker.createContainer({
    Image: image,
    Entrypoint: [],
    Cmd: ['rm', '-rf', `/c/${SAVED_INSTALLS_DIR}`],
    User: '0:0',
    NetworkDisabled: true,
    HostConfig: { Mounts: [{ Type: 'volume', Source: volume, Target: '/c' }] },
  });
  try {
    await c.start();
    expect((await c.wait()).StatusCode).toBe(0);
  } finally {
    await c.remove({ force: true });
  }
}
