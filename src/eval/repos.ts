import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { git } from '../repo/gitExec.js';
import { cacheDir } from '../settings/index.js';
import { singleFlight } from '../util/lock.js';
import { errorLine, SwtError } from '../util/errors.js';
import { repoDirName } from './instances.js';

export function repoCacheDir(): string {
  return join(cacheDir(), 'repos');
}

/**
 * `<repos>/<owner>__<name>` as a git repository or bare mirror; failing that, a git bundle
 * `<repos>/<owner>__<name>.bundle`, unpacked once into a cached bare mirror.
 */
export async function resolveRepoPath(reposDir: string, repo: string): Promise<string> {
  const name = repoDirName(repo);
  const dir = resolve(reposDir, name);
  if (existsSync(dir)) return dir;
  const bundle = `${dir}.bundle`;
  if (!existsSync(bundle)) throw new SwtError('NOT_A_REPO', `repository ${repo} not found: neither ${dir} nor ${bundle} exists`);
  const mirror = join(repoCacheDir(), `${name}.git`);
  // Several instances of one repository share its bundle: one unpacking per mirror at a time.
  return singleFlight(`bundle:${mirror}`, async () => {
    if (existsSync(mirror) && statSync(mirror).mtimeMs >= statSync(bundle).mtimeMs) return mirror;
    await mkdir(repoCacheDir(), { recursive: true });
    const tmp = `${mirror}.tmp-${process.pid}-${randomUUID().slice(0, 8)}`;
    try {
      await git(reposDir, ['clone', '--quiet', '--mirror', bundle, tmp]);
      await rm(mirror, { recursive: true, force: true });
      await rename(tmp, mirror);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      throw new SwtError('NOT_A_REPO', `cannot unpack git bundle ${bundle}: ${errorLine(e)}`);
    }
    return mirror;
  });
}
