/**
 * Shell for an ecosystem's own download cache kept in the repository's package cache volume
 * (`$SWT_PKG_CACHE`, set only when it is mounted). Pure: text only.
 */

/** The volume's `sub` folder copied into `dest` before an install (nothing when no cache is mounted or it holds none). */
export function seedFromCache(sub: string, dest: string): string {
  return `[ -z "$SWT_PKG_CACHE" ] || [ ! -d "$SWT_PKG_CACHE/${sub}" ] || { mkdir -p ${dest} && cp -a "$SWT_PKG_CACHE/${sub}/." ${dest}/; }`;
}

/** `src` copied into the volume's `sub` folder after an install; files already there are not copied again. */
export function saveToCache(src: string, sub: string): string {
  return `[ -z "$SWT_PKG_CACHE" ] || [ ! -d ${src} ] || { mkdir -p "$SWT_PKG_CACHE/${sub}" && cp -au ${src}/. "$SWT_PKG_CACHE/${sub}/"; }`;
}
