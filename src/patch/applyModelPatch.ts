/**
 * The one entry point for model-written patches: detects the format (custom diff blocks, unified or
 * git diff, fenced or wrapped in prose), checks every path, applies in memory and returns the
 * canonical unified git diff. The repository directory is only read, never written.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { PatchApplication } from './types.js';
import { errorLine, isSwtError } from '../util/errors.js';
import { canonicalDiff, type CanonicalChange } from './canonical.js';
import { applyCustomBlocks } from './customApply.js';
import { looksLikeCustom, parseCustomDiff } from './customFormat.js';
import { checkFileCount, checkNoSymlink, checkPatchSize, DEFAULT_PATCH_LIMITS, type PatchLimits } from './safety.js';
import { confineRepoPath } from '../util/repoPath.js';
import { applyUnifiedToText, type HunkReport } from './unified.js';
import { looksLikeUnified, parseUnifiedDiff } from './unifiedParse.js';
import { parseWholeFiles } from './wholeFiles.js';

/** `files`: whole files in fenced blocks that name their paths (what small models often write). */
export type PatchFormat = 'custom' | 'unified' | 'files' | 'unknown';

export interface ApplyModelPatchOptions {
  limits?: Partial<PatchLimits>;
  /** Force a format instead of detecting it. */
  format?: 'custom' | 'unified' | 'files';
}

/** PatchApplication plus details for callers that want them (benchmarks, logs). */
export interface DetailedPatchApplication extends PatchApplication {
  format: PatchFormat;
  /** The changed files, with their original and new content (null: absent). */
  changes: CanonicalChange[];
  /** Per-hunk reports, for unified diffs. */
  hunks: (HunkReport & { path: string })[];
}

/** Reads a repository-relative file's content, or null if absent. */
export type FileReader = (path: string) => string | null;

export function detectFormat(text: string): PatchFormat {
  if (looksLikeCustom(text)) return 'custom';
  if (looksLikeUnified(text)) return 'unified';
  if (parseWholeFiles(text).length) return 'files';
  return 'unknown';
}

function fail(format: PatchFormat, warnings: string[], errors: string[]): DetailedPatchApplication {
  return { applied: false, diff: '', warnings, errors, format, changes: [], hunks: [] };
}

function errorText(e: unknown): string {
  return `${isSwtError(e) ? e.code : 'PATCH_DOES_NOT_APPLY'}: ${errorLine(e, 1000)}`;
}

/**
 * Applies model output against files provided by `readFile` (pure apart from what `readFile` and
 * `checkPath` do). `checkPath` may throw SwtError('UNSAFE_PATH') for a normalised path.
 */
export async function applyModelPatchToFiles(
  text: string,
  readFile: FileReader,
  opts: ApplyModelPatchOptions & { checkPath?: (path: string) => void } = {},
): Promise<DetailedPatchApplication> {
  const limits = { ...DEFAULT_PATCH_LIMITS, ...opts.limits };
  const warnings: string[] = [];
  try {
    checkPatchSize(text, limits);
  } catch (e) {
    return fail('unknown', warnings, [errorText(e)]);
  }
  let format: PatchFormat = opts.format ?? detectFormat(text);
  let custom = format === 'custom' ? parseCustomDiff(text) : null;
  if (custom && custom.blocks.length === 0 && custom.errors.length === 0 && looksLikeUnified(text)) {
    format = 'unified';
    custom = null;
  }
  if (format === 'unknown') {
    return fail(format, warnings, ['PATCH_MALFORMED: found neither custom diff blocks (diff / path / rewrite|insert / line|EOF|BOF / code / end diff), nor a unified diff, nor a fenced block naming its file']);
  }

  const files = patchFiles(readFile, opts.checkPath);
  if (custom) return applyCustom(custom, files, format, warnings, limits);
  if (format === 'files') return applyWholeFiles(text, files, warnings, limits);
  return applyUnified(text, files, format, warnings, limits);
}

/** The files a patch reads, each once; every path confined to the repository (and checked) before anything is touched. */
interface PatchFiles {
  safePath(raw: string): string;
  read(path: string): string | null;
}

function patchFiles(readFile: FileReader, checkPath?: (path: string) => void): PatchFiles {
  const cache = new Map<string, string | null>();
  return {
    safePath: (raw) => {
      const p = confineRepoPath(raw, { root: '' });
      checkPath?.(p);
      return p;
    },
    read: (p) => {
      if (!cache.has(p)) cache.set(p, readFile(p));
      return cache.get(p)!;
    },
  };
}

async function applyCustom(custom: ReturnType<typeof parseCustomDiff>, { safePath, read }: PatchFiles, format: PatchFormat, warnings: string[], limits: PatchLimits): Promise<DetailedPatchApplication> {
  warnings.push(...custom.warnings);
  if (custom.errors.length > 0) return fail(format, warnings, custom.errors);
  if (custom.blocks.length === 0) return fail(format, warnings, ['PATCH_MALFORMED: no complete custom diff block']);
  try {
    for (const b of custom.blocks) {
      b.path = safePath(b.path);
      // `a/x.py` written the git way: use `x.py` when only that exists.
      if (/^[ab]\//.test(b.path) && read(b.path) === null && read(safePath(b.path.slice(2))) !== null) b.path = b.path.slice(2);
    }
    checkFileCount(
      custom.blocks.map((b) => b.path),
      limits,
    );
  } catch (e) {
    return fail(format, warnings, [errorText(e)]);
  }
  const r = await applyCustomBlocks(custom.blocks, read);
  warnings.push(...r.warnings);
  return finish(format, r.changes, warnings, r.errors, [], limits);
}

/** Each named block becomes its file's whole new content. */
function applyWholeFiles(text: string, { safePath, read }: PatchFiles, warnings: string[], limits: PatchLimits): DetailedPatchApplication {
  let whole;
  try {
    whole = parseWholeFiles(text).map((f) => ({ ...f, path: safePath(f.path) }));
    checkFileCount(
      whole.map((f) => f.path),
      limits,
    );
  } catch (e) {
    return fail('files', warnings, [errorText(e)]);
  }
  if (!whole.length) return fail('files', warnings, ['PATCH_MALFORMED: no fenced block names its file']);
  for (const f of whole) if (read(f.path) !== null) warnings.push(`${f.path}: replaced by the whole file the answer gives`);
  return finish('files', whole.map((f) => ({ path: f.path, before: read(f.path), after: f.content })), warnings, [], [], limits);
}

function applyUnified(text: string, { safePath, read }: PatchFiles, format: PatchFormat, warnings: string[], limits: PatchLimits): DetailedPatchApplication {
  const parsed = parseUnifiedDiff(text);
  warnings.push(...parsed.warnings);
  if (parsed.errors.length > 0) return fail(format, warnings, parsed.errors);
  if (parsed.files.length === 0) return fail(format, warnings, ['PATCH_MALFORMED: the unified diff has no hunks']);
  const errors: string[] = [];
  const hunks: DetailedPatchApplication['hunks'] = [];
  const current = new Map<string, { before: string | null; after: string | null }>();
  try {
    for (const f of parsed.files) {
      const oldP = f.oldPath === null ? null : safePath(f.oldPath);
      const newP = f.newPath === null ? null : safePath(f.newPath);
      let path = newP ?? oldP!;
      if (oldP && newP && oldP !== newP) {
        if (read(newP) === null && read(oldP) !== null) {
          warnings.push(`${oldP} -> ${newP}: renames are not supported; patched ${oldP}`);
          path = oldP;
        }
      }
      f.oldPath = f.oldPath === null ? null : path;
      f.newPath = f.newPath === null ? null : path;
    }
    checkFileCount(
      parsed.files.map((f) => (f.newPath ?? f.oldPath)!),
      limits,
    );
  } catch (e) {
    return fail(format, warnings, [errorText(e)]);
  }
  for (const f of parsed.files) {
    const path = (f.newPath ?? f.oldPath)!;
    const state = current.get(path) ?? { before: read(path), after: read(path) };
    const r = applyUnifiedToText(state.after, f);
    for (const h of r.reports) hunks.push({ ...h, path });
    warnings.push(...r.warnings);
    for (const h of r.reports) if (h.status !== 'exact' && h.status !== 'failed') warnings.push(`${path}: hunk ${h.index} ${h.message}`);
    if (!r.ok) {
      errors.push(`PATCH_DOES_NOT_APPLY: ${r.error}`);
      continue;
    }
    state.after = r.text;
    current.set(path, state);
  }
  const changes = [...current.entries()].map(([path, s]) => ({ path, before: s.before, after: s.after ?? '' }));
  // Deleted files: after is null.
  for (const c of changes) if (current.get(c.path)!.after === null) (c as { after: string | null }).after = null;
  return finish(format, changes, warnings, errors, hunks, limits);
}

function finish(
  format: PatchFormat,
  changes: { path: string; before: string | null; after: string | null }[],
  warnings: string[],
  errors: string[],
  hunks: DetailedPatchApplication['hunks'],
  limits: PatchLimits,
): DetailedPatchApplication {
  for (const c of changes) {
    if (c.after !== null && Buffer.byteLength(c.after, 'utf8') > limits.maxFileBytes) {
      errors.push(`PATCH_TOO_LARGE: ${c.path} would be ${Buffer.byteLength(c.after, 'utf8')} bytes; the limit is ${limits.maxFileBytes}`);
    }
  }
  const real = changes.filter((c) => c.before !== c.after);
  if (errors.length > 0) return { applied: false, diff: '', warnings, errors, format, changes: [], hunks };
  const diff = canonicalDiff(real);
  if (diff === '') return { applied: false, diff: '', warnings, errors: ['PATCH_DOES_NOT_APPLY: the patch changes nothing'], format, changes: [], hunks };
  return { applied: true, diff, warnings, errors, format, changes: real, hunks };
}

/**
 * Applies a model's patch (custom diff format or unified diff) to the repository at `repoDir`,
 * without modifying it, and returns the canonical unified git diff of the result.
 */
export async function applyModelPatch(repoDir: string, text: string, opts: ApplyModelPatchOptions = {}): Promise<DetailedPatchApplication> {
  const readFile = (p: string): string | null => {
    const abs = join(repoDir, p);
    let st;
    try {
      st = statSync(abs);
    } catch {
      return null;
    }
    if (!st.isFile()) throw new Error(`${p} is not a regular file`);
    return readFileSync(abs, 'utf8');
  };
  try {
    return await applyModelPatchToFiles(text, readFile, { ...opts, checkPath: (p) => checkNoSymlink(repoDir, p) });
  } catch (e) {
    return fail('unknown', [], [errorText(e)]);
  }
}
