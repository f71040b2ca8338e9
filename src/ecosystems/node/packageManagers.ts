/**
 * Node's package managers at the version the project pins: which one (npm, pnpm, yarn classic,
 * yarn berry, bun) and which version, from `packageManager` in package.json, `.yarnrc.yml`'s
 * `yarnPath`, or the lockfile's own version; the install command that fetches exactly that version
 * from the npm registry (into the image's home, so a Plug'n'Play project's `yarn` is there at test
 * time), with its store or cache in the package-cache volume; and the runner command under
 * Plug'n'Play, which has no node_modules. Pure: reads `facts.manifests`.
 */
import { parse as parseYaml } from 'yaml';
import { shellQuote } from '../../util/shell.js';
import { installNote } from '../command.js';
import type { RepoFacts } from '../types.js';

/** The root files these decisions read (added to the Node module's `manifests`). */
export const PM_MANIFESTS = ['package.json', '.yarnrc.yml', 'pnpm-lock.yaml', 'yarn.lock', 'pnpm-workspace.yaml'] as const;

export type PackageManager =
  | { name: 'npm'; lockfile: boolean }
  /** `version`: exact (`8.15.4`) or a major (`8`) for npm to resolve; `lockfile`: install frozen. */
  | { name: 'pnpm'; version: string; from: PinSource; lockfile: boolean }
  | { name: 'yarn'; version: string; from: PinSource; lockfile: boolean; berry: boolean; pnp: boolean; yarnPath?: string }
  | { name: 'bun'; version: string; from: PinSource; lockfile: boolean };

/** Where the version came from, for the install's log and tests. */
export type PinSource = 'packageManager' | 'yarnPath' | 'lockfile' | 'default';

/** Versions used when nothing pins one: the current majors. */
const DEFAULT_VERSIONS = { pnpm: '10', yarn: '1', berry: '4', bun: '1' } as const;

/** Where pinned package managers are installed: the image's home, kept in the environment image. */
export const PM_HOME = '"$HOME"/.swt-pm';
/** The project's yarn, linked at install time: what runner commands call under Plug'n'Play. */
export const YARN_SHIM = `${PM_HOME}/bin/yarn`;
/** The bun binary fetched at install time: what `bun test` runs as when bun is no dependency (bun is not in the image). */
export const BUN_CLI = `${PM_HOME}/bin/bun`;

/** The Deno CLI fetched at install time (Deno is not in the image), at the newest release of this major. */
export const DENO_CLI = `${PM_HOME}/bin/deno`;
const DENO_DEFAULT_MAJOR = '2';

const VERSION = /^\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z.-]+)?$/;

/** `pnpm@8.15.4+sha512.abc…` → { name: 'pnpm', version: '8.15.4' }; undefined when malformed or not a package manager we know. */
export function parsePackageManagerField(value: unknown): { name: 'npm' | 'pnpm' | 'yarn' | 'bun'; version: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(npm|pnpm|yarn|bun)@([^+\s]+)(?:\+\S*)?$/.exec(value.trim());
  if (!m || !VERSION.test(m[2]!)) return undefined;
  return { name: m[1] as 'npm' | 'pnpm' | 'yarn' | 'bun', version: m[2]! };
}

/** pnpm-lock.yaml's `lockfileVersion` → the pnpm major that writes it (5.3: 6, 5.4: 7, 6.x: 8, 9.0: 9 — pnpm 10 writes 9.0 too). */
export function pnpmMajorOfLockfile(head: string | undefined): string | undefined {
  const m = head && /^lockfileVersion:\s*['"]?(\d+)(?:\.(\d+))?/m.exec(head);
  if (!m) return undefined;
  const [major, minor] = [Number(m[1]), Number(m[2] ?? 0)];
  if (major >= 9) return '9';
  if (major >= 6) return '8';
  if (major === 5) return minor >= 4 ? '7' : minor === 3 ? '6' : '5';
  return undefined;
}

/** yarn.lock's head: berry writes `__metadata: version: N` (4: yarn 2, 5–6: yarn 3, 7+: yarn 4), classic `# yarn lockfile v1`. */
export function yarnOfLockfile(head: string | undefined): { berry: boolean; major: string } | undefined {
  if (!head) return undefined;
  const meta = /^__metadata:\s*\n\s+version:\s*['"]?(\d+)/m.exec(head);
  if (meta) {
    const v = Number(meta[1]);
    return { berry: true, major: v <= 4 ? '2' : v <= 6 ? '3' : '4' };
  }
  return /yarn lockfile v1/.test(head) ? { berry: false, major: '1' } : undefined;
}

function yarnrcOf(facts: RepoFacts): Record<string, unknown> | undefined {
  const text = facts.manifests?.['.yarnrc.yml'];
  if (text === undefined) return undefined;
  try {
    const v = parseYaml(text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A repository-relative path that stays inside the repository (yarnPath comes from the repository). */
function safeRelative(p: unknown): string | undefined {
  if (typeof p !== 'string') return undefined;
  const s = p.trim().replace(/^\.\//, '');
  if (!s || s.startsWith('/') || s.split('/').includes('..') || /[\u0000-\u001f]/.test(s)) return undefined;
  return s;
}

function semverMajor(v: string): number {
  return Number(v.split('.')[0]);
}

/**
 * The project's package manager and the version it pins. `packageManager` wins; then the
 * lockfile present (npm's first, as before); a `.yarnrc.yml` alone means berry.
 */
export function packageManagerOf(facts: RepoFacts, pkg: any): PackageManager {
  const has = (f: string) => facts.files.includes(f);
  const field = parsePackageManagerField(pkg?.packageManager);
  const yarnrc = yarnrcOf(facts);
  const yarnPath = safeRelative(yarnrc?.yarnPath);
  const yarnLock = yarnOfLockfile(facts.manifests?.['yarn.lock']);
  const bunLock = has('bun.lockb') || has('bun.lock');

  const yarn = (version: string, from: PinSource): PackageManager => {
    const berry = semverMajor(version) >= 2;
    // Berry's default linker is Plug'n'Play; `nodeLinker: node-modules` (or pnpm) turns it off.
    const linker = typeof yarnrc?.nodeLinker === 'string' ? yarnrc.nodeLinker : 'pnp';
    return { name: 'yarn', version, from, lockfile: has('yarn.lock'), berry, pnp: berry && linker === 'pnp', ...(berry && yarnPath ? { yarnPath } : {}) };
  };
  const pnpm = (version: string, from: PinSource): PackageManager => ({ name: 'pnpm', version, from, lockfile: has('pnpm-lock.yaml') });
  const bun = (version: string, from: PinSource): PackageManager => ({ name: 'bun', version, from, lockfile: bunLock });

  if (field?.name === 'pnpm') return pnpm(field.version, 'packageManager');
  if (field?.name === 'bun') return bun(field.version, 'packageManager');
  if (field?.name === 'yarn') {
    // A yarnPath release is what yarn itself would run, whatever packageManager says.
    if (yarnPath) return yarn(versionOfYarnPath(yarnPath) ?? field.version, 'yarnPath');
    return yarn(field.version, 'packageManager');
  }
  // bun's lockfile beside another one, in a project whose scripts run bun (`bun test`): bun installs it.
  if (bunLock && runsBun(pkg)) return bun(DEFAULT_VERSIONS.bun, 'default');
  if (field?.name === 'npm' || has('package-lock.json') || has('npm-shrinkwrap.json')) return { name: 'npm', lockfile: has('package-lock.json') || has('npm-shrinkwrap.json') };
  if (has('pnpm-lock.yaml')) return pnpm(pnpmMajorOfLockfile(facts.manifests?.['pnpm-lock.yaml']) ?? DEFAULT_VERSIONS.pnpm, pnpmMajorOfLockfile(facts.manifests?.['pnpm-lock.yaml']) ? 'lockfile' : 'default');
  if (yarnPath) return yarn(versionOfYarnPath(yarnPath) ?? yarnLock?.major ?? DEFAULT_VERSIONS.berry, 'yarnPath');
  if (has('yarn.lock')) return yarn(yarnLock?.major ?? DEFAULT_VERSIONS.yarn, yarnLock ? 'lockfile' : 'default');
  if (yarnrc) return yarn(DEFAULT_VERSIONS.berry, 'default');
  if (bunLock) return bun(DEFAULT_VERSIONS.bun, 'default');
  return { name: 'npm', lockfile: false };
}

/** Whether a package.json script runs bun or bunx. */
function runsBun(pkg: any): boolean {
  const scripts = pkg?.scripts && typeof pkg.scripts === 'object' ? Object.values(pkg.scripts) : [];
  return scripts.some((v) => typeof v === 'string' && /(^|[\s;&|(])bunx?\s/.test(v));
}

/** `.yarn/releases/yarn-3.6.4.cjs` → `3.6.4`. */
function versionOfYarnPath(p: string): string | undefined {
  const m = /yarn-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\.c?js$/.exec(p);
  return m?.[1];
}

/** The npm package that holds a package manager's CLI at a version: berry ships as @yarnpkg/cli-dist. */
export function cliPackage(pm: Exclude<PackageManager, { name: 'npm' }>): { pkg: string; bin: string } {
  if (pm.name === 'yarn') return { pkg: `${pm.berry ? '@yarnpkg/cli-dist' : 'yarn'}@${pm.version}`, bin: 'yarn' };
  return { pkg: `${pm.name}@${pm.version}`, bin: pm.name };
}

/**
 * Shell that puts the pinned CLI at `$PM_HOME/bin/<bin>` and sets `pm` to it: an `npm install -g`
 * of exactly that version under its own prefix (the npm cache is in the volume, so an air-gapped
 * install finds a version fetched before); when the registry does not answer and nothing is
 * cached, the install fails saying which version could not be had.
 */
function fetchCli(pm: Exclude<PackageManager, { name: 'npm' }>): string {
  const { pkg, bin } = cliPackage(pm);
  if (pm.name === 'yarn' && pm.yarnPath) {
    // The release the repository carries: nothing to fetch.
    const rel = shellQuote(pm.yarnPath);
    return (
      `[ -f ${rel} ] || { echo ${shellQuote(`swt: .yarnrc.yml's yarnPath ${pm.yarnPath} is not in the repository`)} >&2; exit 1; }; ` +
      `mkdir -p ${PM_HOME}/bin && printf '#!/bin/sh\\nexec node "%s" "$@"\\n' "$PWD/"${rel} > ${PM_HOME}/bin/yarn && chmod +x ${PM_HOME}/bin/yarn; pm=${PM_HOME}/bin/yarn; `
    );
  }
  return fetchNpmBin(pkg, bin, pinSourceText(pm.from)) + `pm=${PM_HOME}/bin/${bin}; `;
}

/** Shell: `npm install -g` of exactly `pkg` under its own prefix, its `bin` linked at `$PM_HOME/bin/<bin>`. */
function fetchNpmBin(pkg: string, bin: string, why: string): string {
  const prefix = `${PM_HOME}/${pkg.replace('/', '+')}`;
  return (
    `if npm install -g --prefix ${prefix} --no-audit --no-fund --loglevel=error ${shellQuote(pkg)} >/dev/null; then echo ${shellQuote(`swt: ${pkg} (${why})`)}; ` +
    `else ${installNote(`${pkg} (${why}) could not be fetched from the npm registry (air-gapped?) and is not in the package cache: nothing is installed`)} >&2; exit 1; fi; ` +
    `mkdir -p ${PM_HOME}/bin && ln -sf ${prefix}/bin/${bin} ${PM_HOME}/bin/${bin}; `
  );
}

function pinSourceText(from: PinSource): string {
  return { packageManager: "package.json's packageManager", yarnPath: ".yarnrc.yml's yarnPath", lockfile: "the lockfile's version", default: 'no version pinned' }[from];
}

/**
 * The install: the pinned CLI, then a frozen install with its store or cache in the package-cache
 * volume (`$SWT_PKG_CACHE`), retried offline from that cache when no registry answers, saying so.
 */
export function installCommand(pm: PackageManager, asOf?: string): string {
  const cache = (sub: string) => `"\${SWT_PKG_CACHE:-$HOME/.cache}"/${sub}`;
  switch (pm.name) {
    case 'npm': {
      if (pm.lockfile) return 'npm ci --no-audit --no-fund';
      const today = 'npm install --no-audit --no-fund';
      // Time-consistent (`asOf`): no version published after the base commit's date. pnpm, yarn
      // and bun have no such date option; their lockfile (when there is one) pins them instead.
      if (!asOf) return today;
      const day = asOf.slice(0, 10);
      return (
        `{ ${today} --before=${shellQuote(asOf)} && ${installNote(`dependencies resolved as of ${day} (the base commit date; npm --before=${asOf})`)}; } || ` +
        `{ ${installNote(`the install as of ${day} (npm --before) failed: installing current releases instead`)}; rm -rf node_modules; ${today}; }`
      );
    }
    case 'pnpm': {
      const frozen = pm.lockfile ? ' --frozen-lockfile' : '';
      // pnpm ≥ 9.7 would switch itself to packageManager's version: it already is that version.
      const base = `npm_config_manage_package_manager_versions=false "$pm" install${frozen} --store-dir ${cache('pnpm')}`;
      return (
        fetchCli(pm) +
        `${base} --prefer-offline || { ${installNote('pnpm install failed (no registry answered?): installing offline from the pnpm store in the package cache')}; ${base} --offline; }`
      );
    }
    case 'yarn': {
      if (!pm.berry) {
        const frozen = pm.lockfile ? ' --frozen-lockfile' : '';
        const base = `"$pm" install${frozen} --non-interactive --cache-folder ${cache('yarn')}`;
        return fetchCli(pm) + `${base} --prefer-offline || { ${installNote('yarn install failed (no registry answered?): installing offline from the yarn cache in the package cache')}; ${base} --offline; }`;
      }
      // Berry: downloads go to the global mirror in the volume and are copied into the project's
      // cache (in the image), which Plug'n'Play reads at test time; cacheFolder must not be the volume.
      const env =
        `env -u YARN_CACHE_FOLDER YARN_ENABLE_GLOBAL_CACHE=false YARN_ENABLE_MIRROR=true YARN_GLOBAL_FOLDER=${cache('yarn-berry')} ` +
        `YARN_ENABLE_TELEMETRY=0 YARN_ENABLE_PROGRESS_BARS=false YARN_ENABLE_IMMUTABLE_INSTALLS=${pm.lockfile} ` +
        // Berry reads its own proxy settings, not HTTP(S)_PROXY.
        `YARN_HTTP_PROXY="\${HTTP_PROXY:-}" YARN_HTTPS_PROXY="\${HTTPS_PROXY:-}"`;
      return (
        fetchCli(pm) +
        `${env} "$pm" install || { ${installNote('yarn install failed: no registry answered and the package cache lacks some of yarn.lock\'s packages (air-gapped?)')} >&2; exit 1; }`
      );
    }
    case 'bun': {
      const frozen = pm.lockfile ? ' --frozen-lockfile' : '';
      return fetchCli(pm) + `BUN_INSTALL_CACHE_DIR=${cache('bun')} "$pm" install${frozen} || { ${installNote('bun install failed (no registry answered?) and the package cache lacks some packages')} >&2; exit 1; }`;
    }
  }
}

/** The bun CLI at `BUN_CLI`, for a project installed by another package manager whose tests run with `bun test`. */
export function bunCliInstall(): string {
  return fetchCli({ name: 'bun', version: DEFAULT_VERSIONS.bun, from: 'default', lockfile: false });
}

/** The Deno CLI at `DENO_CLI` (the `deno` npm package carries the binary in its platform packages), for `deno test` with no deno dependency. */
export function denoCliInstall(): string {
  return fetchNpmBin(`deno@${DENO_DEFAULT_MAJOR}`, 'deno', '`deno test` with no deno dependency');
}

/**
 * A runner command under Plug'n'Play, where there is no node_modules/.bin: tools run as
 * `yarn <bin>` and node as `yarn node` (which loads .pnp.cjs). Other layouts keep the command.
 */
export function underPackageManager(pm: PackageManager, template: string): string {
  if (!(pm.name === 'yarn' && pm.pnp)) return template;
  // Variables the command sets for itself stay in front (`TS_NODE_TRANSPILE_ONLY=true npx mocha`).
  const [, env, t] = /^((?:[A-Za-z_]\w*=\S*\s+)*)(.*)$/s.exec(template.trim())!;
  const tool = /^(?:npx(?:\s+(?:--yes|-y|--no-install|--no))*\s+|(?:\.\/)?node_modules\/\.bin\/)(\S.*)$/s.exec(t!);
  if (tool) return `${env}${YARN_SHIM} ${tool[1]}`;
  if (/^node(\s|$)/.test(t!)) return `${env}${YARN_SHIM} ${t}`;
  return template.trim();
}
