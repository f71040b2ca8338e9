/**
 * What to build when the user names no image or install command: guessed from the repository's
 * files at base, the way a person setting up CI would, by the ecosystem it is (src/ecosystems).
 */
import { detectEcosystem, ECOSYSTEMS, ecosystemOfRunner, type Ecosystem, type EnvironmentChoice, type RepoFacts } from '../ecosystems/index.js';
import { python } from '../ecosystems/python/index.js';
import type { RunnerSpec } from '../results/types.js';

export type { RepoFacts };
export { nodeMajorFor } from '../ecosystems/node/index.js';

export type EnvironmentDefaults = EnvironmentChoice;

/**
 * The ecosystem whose environment a repository gets: the one its files say (`touched`: the files
 * the test patch touches, to choose among several); when they say nothing, the named runner's.
 */
export function environmentEcosystem(facts: RepoFacts, runner?: RunnerSpec, touched: readonly string[] = []): Ecosystem {
  // Python's image (with pytest) is the last resort, as before ecosystems had modules.
  return detectEcosystem(facts, touched) ?? (runner ? ecosystemOfRunner(runner) : undefined) ?? python;
}

export function environmentDefaults(facts: RepoFacts, runner?: RunnerSpec, touched: readonly string[] = []): EnvironmentDefaults {
  return environmentEcosystem(facts, runner, touched).environment(facts);
}

/** Each ecosystem's base image for a repository that names no version: what `swt images` prepares by default. */
export function defaultBaseImages(): string[] {
  return [...new Set(ECOSYSTEMS.map((e) => e.environment({ files: [] }).image))];
}
