import { createHash } from 'node:crypto';
import { isDependencyManifest } from '../../ecosystems/index.js';

/**
 * The environment cache key: sha256 over the repository's scope (whose image it is), whether its
 * install was trusted, the base image id, the install command and the blob ids of the dependency
 * manifests and lockfiles at the snapshot revision (none when nothing is installed; which files
 * those are, the ecosystems say). Pure.
 */

/** The warm-up's part of a key: absent when it has no step (so keys without one stay as they were). */
function warmPart(w: EnvKeyInput['warm']): { warm?: string; before?: string } {
  return { ...(w?.after?.trim() ? { warm: w.after.trim() } : {}), ...(w?.before?.trim() ? { before: w.before.trim() } : {}) };
}

/** Bump when the key's inputs or the environment build change meaning. */
export const ENV_KEY_VERSION = 3;

export interface EnvKeyInput {
  /** The repository the image is for (EnvironmentSpec.cacheScope, or the repository's path): one repository never reuses another's image. */
  scope: string;
  /** false: built by an untrusted head's install (cacheWrite: false); trusted runs never reuse it. */
  trusted: boolean;
  baseImageId: string;
  install: string;
  /** The ecosystem's steps around the install (absent: none). */
  warm?: { before?: string; after?: string };
  /** Paths and content hashes (git blob ids) of the files at the revision; non-manifests are ignored. */
  files: Array<{ path: string; blob: string }>;
}

export function environmentKey(input: EnvKeyInput): string {
  // With nothing to install, the manifests change nothing in the image.
  const manifests = (input.install.trim() ? input.files : [])
    .filter((f) => isDependencyManifest(f.path))
    .map((f) => `${f.path}\0${f.blob}`)
    .sort();
  return createHash('sha256')
    .update(JSON.stringify({ v: ENV_KEY_VERSION, scope: input.scope, trusted: input.trusted, base: input.baseImageId, install: input.install.trim(), ...warmPart(input.warm), manifests }))
    .digest('hex');
}

/**
 * The key of an environment's family: the key's inputs but the manifests (and trust, which the
 * lookup filters on). Images of one family differ only in their dependencies, so a build whose
 * manifests changed can start from another's installed tree (the nearest layer). Pure.
 */
export function environmentFamily(input: Omit<EnvKeyInput, 'files' | 'trusted'>): string {
  return createHash('sha256')
    .update(JSON.stringify({ v: ENV_KEY_VERSION, family: true, scope: input.scope, base: input.baseImageId, install: input.install.trim(), ...warmPart(input.warm) }))
    .digest('hex');
}

/**
 * `swt-env:<key16>-<snapshot8>`: one image per (key, snapshot), so two clones of one repository
 * with the same key never retag each other's image under a caller still using it. Another cache
 * namespace than `default` gets its own repository name, `swt-env-<namespace>`.
 */
export function envImageTag(key: string, snapshotRev: string, namespace = 'default'): string {
  const repo = namespace === 'default' ? 'swt-env' : `swt-env-${namespace}`;
  return `${repo}:${key.slice(0, 16)}-${snapshotRev.slice(0, 8)}`;
}

export const ENV_LABELS = {
  key: 'swt-bot.env.key',
  snapshotRev: 'swt-bot.env.snapshotRev',
  baseImage: 'swt-bot.env.baseImage',
  namespace: 'swt-bot.env.namespace',
  scope: 'swt-bot.env.scope',
  trusted: 'swt-bot.env.trusted',
  /** environmentFamily of the image. */
  family: 'swt-bot.env.family',
  /** How many environment layers it stacks on its base image (0: built on the base image). */
  depth: 'swt-bot.env.depth',
  /** Size of the image it was built on (its own bytes are its size minus this). */
  fromBytes: 'swt-bot.env.fromBytes',
  /** What the install recorded in its notes file (base64), read at the build: a hit needs no container to read it. */
  installNotes: 'swt-bot.env.installNotes',
} as const;
