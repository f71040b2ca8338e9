/**
 * What to build when the user names no image or install command: guessed from the repository's
 * files at base, the way a person setting up CI would.
 */
import type { RepoFacts } from '../harness/runners.js';

export type { RepoFacts };

export interface EnvironmentDefaults {
  image: string;
  install: string;
}

const DEFAULT_NODE_MAJOR = 22;
const OLDEST_NODE_MAJOR = 18;

/** Lowest major allowed by an engines range such as ">=18", "^20.3", ">= 0.8"; clamped to a supported one. */
export function nodeMajorFor(range: string | undefined): number {
  if (!range) return DEFAULT_NODE_MAJOR;
  const majors = [...range.matchAll(/(\d+)(?:\.\d+)*/g)].map((m) => Number(m[1]));
  if (majors.length === 0) return DEFAULT_NODE_MAJOR;
  const lowest = Math.min(...majors);
  return lowest < OLDEST_NODE_MAJOR ? DEFAULT_NODE_MAJOR : lowest;
}

export function environmentDefaults(facts: RepoFacts): EnvironmentDefaults {
  const has = (name: string) => facts.files.includes(name);
  if (facts.packageJson || has('package.json')) {
    const image = `node:${nodeMajorFor(typeof facts.packageJson?.engines?.node === 'string' ? facts.packageJson.engines.node : undefined)}`;
    if (has('package-lock.json') || has('npm-shrinkwrap.json')) return { image, install: 'npm ci --no-audit --no-fund' };
    if (has('pnpm-lock.yaml')) return { image, install: 'npx --yes pnpm install --frozen-lockfile' };
    if (has('yarn.lock')) return { image, install: 'npx --yes yarn install --frozen-lockfile' };
    return { image, install: 'npm install --no-audit --no-fund' };
  }
  // Python: pytest ships in the image; dependency installs need an index, so they are opt-in.
  return { image: 'python:3.11', install: '' };
}
