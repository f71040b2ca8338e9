import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { swt } from './cli.js';
import { expectNothingLeftBehind, networksOfOurs, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from './docker.js';
import { cleanupGitRepos, commitsMade } from './gitRepo.js';

export interface ValidateJson {
  tests: { id: string; transition: string }[];
  success: boolean;
  runner: string;
  warnings: string[];
  [more: string]: unknown;
}

/** `swt validate --json` on a temp repository with `testPatch` as the tests; its last line, parsed. */
export async function validateJson(repoPath: string, base: string, head: string, testPatch: string): Promise<ValidateJson> {
  const tests = join(repoPath, '..', `${base.slice(0, 8)}-tests.patch`);
  await writeFile(tests, testPatch);
  const r = await swt('validate', '--repo', repoPath, '--base', base, '--head', head, '--tests', tests, '--json');
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
export const transitions = (out: ValidateJson): [string, string][] => out.tests.map((t) => [t.id, t.transition]);
