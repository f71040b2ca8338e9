import { shellQuote } from '../../util/shell.js';

/**
 * Saved installs: for an ecosystem whose installs write only under /testbed and the sandbox user's
 * home (Node: node_modules, npm's own files), what an install made there is saved into the
 * repository's package cache volume, by environment key. A later build of the same key (same
 * repository, trust, base image, install command, warm-up and dependency manifests) whose image is
 * gone extracts it instead of running the install again: `npm ci` of 539 packages from a warm
 * cache still unpacks and links every one of them. The saved copy holds no file the repository
 * tracks: those always come from the revision being built. Pure: shell text only.
 */

/** The package cache volume's folder of saved installs. */
export const SAVED_INSTALLS_DIR = 'installs';

/** How many saved installs a volume keeps (the newest); each is the size of an installed tree. */
export const SAVED_INSTALLS_KEPT = 3;

/** Where the build puts the list of tracked paths (`testbed/<path>`) the save leaves out (not /tmp: a tmpfs mounted over what was put there). */
export const TRACKED_LIST = '/home/swt/.swt-tracked';

function savedPath(key: string): string {
  return `"$SWT_PKG_CACHE/${SAVED_INSTALLS_DIR}/${key.slice(0, 32)}.tar"`;
}

/**
 * The install, or the saved one of this key extracted in its place (files already there, the
 * revision's own, are kept); the install runs when there is none or it does not extract.
 */
export function installOrRestore(install: string, key: string): string {
  return `if ${extracted(key)}; then swt_restored=1; else sh -c ${shellQuote(install)} || exit $?; fi`;
}

/** True when the saved install of this key is there and extracts (files already there, the revision's own, are kept). */
function extracted(key: string): string {
  const saved = savedPath(key);
  return `[ -n "$SWT_PKG_CACHE" ] && [ -f ${saved} ] && tar -C / --skip-old-files -xf ${saved}`;
}

/** The exit status of a restore-only build that found no saved install of its key (the install then runs, with its network). */
export const NO_SAVED_INSTALL = 75;

/** The saved install of this key extracted, or the script exits NO_SAVED_INSTALL: run with no network, it never installs. */
export function restoreOnly(key: string): string {
  return `if ${extracted(key)}; then swt_restored=1; else exit ${NO_SAVED_INSTALL}; fi`;
}

/**
 * After the install and warm-up (not after an extraction): every file and link under /testbed and the home the repository
 * does not track, into the volume (written aside, then moved, so a half-written one is never
 * read); the oldest beyond SAVED_INSTALLS_KEPT go. Quiet; its failure changes nothing.
 */
export function saveInstall(key: string): string {
  const saved = savedPath(key);
  const dir = `"$SWT_PKG_CACHE/${SAVED_INSTALLS_DIR}"`;
  return [
    `[ -z "\${swt_restored:-}" ] && [ -n "$SWT_PKG_CACHE" ] && [ -d "$HOME" ] && [ "$HOME" != / ] && mkdir -p ${dir} && cd / &&`,
    `find testbed "\${HOME#/}" \\( -type f -o -type l \\) ! -path 'testbed/.git/*' | grep -vxF -f ${TRACKED_LIST} > ${dir}/.list &&`,
    `tar -cf ${saved}.tmp -T ${dir}/.list && mv ${saved}.tmp ${saved};`,
    `rm -f ${dir}/.list ${saved}.tmp ${TRACKED_LIST}; ls -t ${dir}/*.tar 2>/dev/null | tail -n +${SAVED_INSTALLS_KEPT + 1} | xargs -r rm -f`,
  ].join(' ');
}

/** The tracked-paths list's content, one `testbed/<path>` a line (paths with a newline cannot be listed, nor tracked by most tools). */
export function trackedList(paths: readonly string[]): Buffer {
  // The list itself is left out too.
  return Buffer.from([...paths.filter((p) => !p.includes('\n')).map((p) => `testbed/${p}`), TRACKED_LIST.slice(1)].map((l) => `${l}\n`).join(''));
}
