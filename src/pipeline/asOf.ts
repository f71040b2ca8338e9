/**
 * Time-consistent installs: the date an install resolves unpinned dependencies as of, from the
 * base commit's date. A commit from years ago installed against today's registries gets today's
 * majors (werkzeug 3 under a 2023 Flask, numpy 2 under a 2022 pandas library) and fails on import
 * on both sides. Pure.
 */

import { envValues, type Environment } from '../settings/index.js';

export type AsOfMode = 'auto' | 'base' | 'today';

/** Older than this, `auto` resolves as of the commit's date. */
export const AS_OF_AFTER_DAYS = 30;

const DAY_MS = 24 * 3600 * 1000;

/** The operator's setting (SWT_DEPENDENCIES_AS_OF); unset or empty: none. A bad value is refused with its name. */
export function asOfModeFromEnv(env?: Environment): AsOfMode | undefined {
  return envValues(env).SWT_DEPENDENCIES_AS_OF;
}

/**
 * The cut-off for a commit dated `commitDate` (ISO 8601 with offset): the start of the UTC day
 * after it, so every release of the commit's own day counts and commits of one day share an
 * environment image. Undefined when today's registries apply (mode `today`, or `auto` on a recent
 * commit) or the date does not parse.
 */
export function installAsOf(commitDate: string | undefined, mode: AsOfMode = 'auto', now: Date = new Date()): string | undefined {
  if (mode === 'today' || !commitDate) return undefined;
  const t = Date.parse(commitDate);
  if (Number.isNaN(t)) return undefined;
  if (mode === 'auto' && now.getTime() - t < AS_OF_AFTER_DAYS * DAY_MS) return undefined;
  const next = new Date(Math.floor(t / DAY_MS) * DAY_MS + DAY_MS);
  return next.toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * A release version from `git describe --tags` output: `v7.3.1` → `7.3.1`; a describe past the
 * tag (`v7.3.1-12-gabc1234`) → `7.3.1.post12` (after the tag); past a pre-release tag
 * (`8.0.0.dev0-79-g…`, pytest's main in 2023), the tag's own version.
 * Undefined for a tag that is not a version.
 */
export function versionFromDescribe(describe: string): string | undefined {
  const m = /^(?:[A-Za-z_-]*?[-_]?)?v?(\d+(?:\.\d+)*(?:(?:a|b|rc|\.dev|\.post)\d+)?)(?:-(\d+)-g[0-9a-f]+)?$/.exec(describe.trim());
  if (!m) return undefined;
  // `.post` goes only after a release: `8.0.0.dev0.post79` is no version (PEP 440).
  return m[2] && m[2] !== '0' && /^[\d.]+$/.test(m[1]!) ? `${m[1]}.post${m[2]}` : m[1];
}
