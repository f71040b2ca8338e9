/**
 * Path safety for model-written patches. A path is rejected when it is absolute, escapes the
 * repository through `..`, passes through a symlink (one pointing out of the repository, or any
 * symlink git could not patch through), or targets `.git/`. Patch size and file count are capped.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { SwtError } from '../util/errors.js';

export interface PatchLimits {
  /** Maximum size of the model's output, in bytes. */
  maxPatchBytes: number;
  /** Maximum number of files one patch may touch. */
  maxFiles: number;
  /** Maximum size of any resulting file, in bytes. */
  maxFileBytes: number;
}

export const DEFAULT_PATCH_LIMITS: PatchLimits = {
  maxPatchBytes: 512 * 1024,
  maxFiles: 20,
  maxFileBytes: 2 * 1024 * 1024,
};

/**
 * Checks that no component of `rel` inside `repoDir` is a symlink. A symlink pointing out of the
 * repository gets its own message. Throws SwtError('UNSAFE_PATH').
 */
export function checkNoSymlink(repoDir: string, rel: string): void {
  const root = realpathSync(repoDir);
  const parts = rel.split('/');
  let cur = resolve(repoDir);
  for (let k = 0; k < parts.length; k++) {
    cur = cur + sep + parts[k];
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      return; // does not exist from here on: nothing to pass through
    }
    if (st.isSymbolicLink()) {
      let target = '';
      try {
        target = realpathSync(cur);
      } catch {
        target = resolve(cur, '..', readlinkSync(cur));
      }
      const inside = target === root || target.startsWith(root + sep);
      const shown = parts.slice(0, k + 1).join('/');
      if (!inside) {
        throw new SwtError('UNSAFE_PATH', `path ${rel} passes through symlink ${shown}, which points out of the repository (${target})`);
      }
      throw new SwtError('UNSAFE_PATH', `path ${rel} passes through symlink ${shown}; patch the real path ${posixRel(root, target)}${parts.slice(k + 1).length ? '/' + parts.slice(k + 1).join('/') : ''} instead`);
    }
  }
}

function posixRel(root: string, target: string): string {
  return target.slice(root.length + 1).split(sep).join('/');
}

export function checkPatchSize(text: string, limits: PatchLimits): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxPatchBytes) {
    throw new SwtError('PATCH_TOO_LARGE', `patch is ${bytes} bytes; the limit is ${limits.maxPatchBytes}`);
  }
}

export function checkFileCount(paths: readonly string[], limits: PatchLimits): void {
  const n = new Set(paths).size;
  if (n > limits.maxFiles) {
    throw new SwtError('PATCH_TOO_LARGE', `patch touches ${n} files; the limit is ${limits.maxFiles}`);
  }
}
