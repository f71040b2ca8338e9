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

/**
 * A saved install is this many tars, extracted side by side: creating files on the container's
 * overlay is kernel time on one core (path-to-regexp's 13,752 files: 5.6 s in one tar, 3.0 s in
 * two or four on 2 cores).
 */
export const SAVED_INSTALL_PARTS = 4;

/** A save's folder aside older than this is a save that was cut off (installs get 20 min by default). */
const STALE_SAVE_MINUTES = 120;

/** Where the build puts the list of tracked paths (`testbed/<path>`) the save leaves out (not /tmp: a tmpfs mounted over what was put there). */
export const TRACKED_LIST = '/home/swt/.swt-tracked';

/** The key's folder of parts (`0.tar`…), or the one its save writes first. */
function savedDir(key: string, suffix = ''): string {
  return `"$SWT_PKG_CACHE/${SAVED_INSTALLS_DIR}/${key.slice(0, 32)}${suffix}"`;
}

const PARTS = Array.from({ length: SAVED_INSTALL_PARTS }, (_, i) => i).join(' ');

/** `command` (which reads the part number in `$i`) for every part side by side; true when every one succeeded, all waited for either way. */
function everyPart(command: string): string {
  return `{ swt_r=0; swt_ps=; for i in ${PARTS}; do ${command} & swt_ps="$swt_ps $!"; done; for swt_p in $swt_ps; do wait "$swt_p" || swt_r=1; done; [ "$swt_r" = 0 ]; }`;
}

/**
 * The install, or the saved one of this key extracted in its place (files already there, the
 * revision's own, are kept); the install runs when there is none or it does not extract.
 */
export function installOrRestore(install: string, key: string): string {
  return `if ${extracted(key)}; then swt_restored=1; else sh -c ${shellQuote(install)} || exit $?; fi`;
}

/** True when every part of the key's saved install is there and extracts (files already there, the revision's own, are kept). */
function extracted(key: string): string {
  const there = `for i in ${PARTS}; do [ -f "$swt_s/$i.tar" ] || swt_s=; done; [ -n "$swt_s" ] && [ -f "$swt_s/dirs" ]`;
  // The folders first, as a tar makes them for its files: tars making one folder at once can fail ("Cannot open").
  const folders = `(cd / && tr '\\n' '\\0' < "$swt_s/dirs" | xargs -0 -r mkdir -p --)`;
  return `[ -n "$SWT_PKG_CACHE" ] && swt_s=${savedDir(key)} && { ${there}; } && ${folders} && ${everyPart('tar -C / --skip-old-files -xf "$swt_s/$i.tar"')}`;
}

/** The exit status of a restore-only build that found no saved install of its key (the install then runs, with its network). */
export const NO_SAVED_INSTALL = 75;

/** The saved install of this key extracted, or the script exits NO_SAVED_INSTALL: run with no network, it never installs. */
export function restoreOnly(key: string): string {
  return `if ${extracted(key)}; then swt_restored=1; else exit ${NO_SAVED_INSTALL}; fi`;
}

/**
 * After the install and warm-up (not after an extraction): every file and link under /testbed and the home the repository
 * does not track, into the volume as SAVED_INSTALL_PARTS tars and the list of their folders (written aside, then moved, so a
 * half-written one is never read); the oldest beyond SAVED_INSTALLS_KEPT go. Quiet; its failure changes nothing.
 */
export function saveInstall(key: string): string {
  return [
    `[ -z "\${swt_restored:-}" ] && [ -n "$SWT_PKG_CACHE" ] && [ -d "$HOME" ] && [ "$HOME" != / ] &&`,
    `swt_d="$SWT_PKG_CACHE/${SAVED_INSTALLS_DIR}" && swt_s=${savedDir(key)} && swt_a=${savedDir(key, '.tmp')} && rm -rf "$swt_a" && mkdir -p "$swt_a" && cd / &&`,
    `find testbed "\${HOME#/}" \\( -type f -o -type l \\) ! -path 'testbed/.git/*' | grep -vxF -f ${TRACKED_LIST} > "$swt_a/all" &&`,
    // Runs of find's order, so each part holds whole folders and the extractions seldom meet in one.
    `sed 's|/[^/]*$||' "$swt_a/all" | sort -u > "$swt_a/dirs" && swt_n=$(wc -l < "$swt_a/all") && for i in ${PARTS}; do : > "$swt_a/$i.list"; done &&`,
    `awk -v n="$swt_n" -v d="$swt_a" '{ print > (d "/" int((NR - 1) * ${SAVED_INSTALL_PARTS} / n) ".list") }' "$swt_a/all" &&`,
    `${everyPart('tar -cf "$swt_a/$i.tar" -T "$swt_a/$i.list"')} &&`,
    `rm -f "$swt_a/all" "$swt_a"/*.list && rm -rf "$swt_s" && mv "$swt_a" "$swt_s";`,
    `rm -rf "$swt_a" ${TRACKED_LIST}; ls -t "$swt_d" 2>/dev/null | grep -v '\\.tmp$' | tail -n +${SAVED_INSTALLS_KEPT + 1} | (cd "$swt_d" && xargs -r rm -rf);`,
    // A save cut off (its install's time limit, a signal) left its folder aside; no save runs this long.
    `find "$swt_d" -maxdepth 1 -name '*.tmp' -mmin +${STALE_SAVE_MINUTES} -exec rm -rf {} +`,
  ].join(' ');
}

/** The tracked-paths list's content, one `testbed/<path>` a line (paths with a newline cannot be listed, nor tracked by most tools). */
export function trackedList(paths: readonly string[]): Buffer {
  // The list itself is left out too.
  return Buffer.from([...paths.filter((p) => !p.includes('\n')).map((p) => `testbed/${p}`), TRACKED_LIST.slice(1)].map((l) => `${l}\n`).join(''));
}
