import { createHash } from 'node:crypto';
import { caEnv, caFingerprint, IMAGE_CA_BUNDLE, IMAGE_CA_DIR, type CaBundle } from './caCertificates.js';

/**
 * What base images are and how they are made: reference parsing, names, and Dockerfiles. Pure.
 *
 * Every base image = some starting point (a pulled image, or a Debian rootfs built offline) +
 * a recipe's packages + the "finish" layer shared by all: extra CA certificates, git, the
 * non-root user `swt` (1000:1000, HOME /home/swt), /testbed and /swt-out owned by it.
 */

/** Bump when the Dockerfiles below change, so images built by an older recipe are rebuilt. */
export const RECIPE_VERSION = 3;

export const DEBIAN_SUITE = 'bookworm';
/** The Python that Debian bookworm ships. */
export const DEBIAN_PYTHON = '3.11';
/**
 * The Pythons offline builds have, each a Debian suite's own: bullseye's 3.9 for code older than
 * 3.10 (the collections aliases, distutils and the wheels of its time are still there), bookworm's
 * 3.11 for the rest.
 */
export const DEBIAN_PYTHONS: Readonly<Record<string, string>> = { '3.9': 'bullseye', [DEBIAN_PYTHON]: DEBIAN_SUITE };

/** The offline Python minor that serves `version` (`3`, `3.7`, `3.9.7`): its own when a suite has it, else 3.9 below it and 3.11 above. */
export function offlinePython(version: string): string {
  const minor = /^3\.(\d+)/.exec(version)?.[1];
  if (minor === undefined) return DEBIAN_PYTHON;
  return Number(minor) <= 9 ? '3.9' : DEBIAN_PYTHON;
}

export type Recipe =
  | { kind: 'debian'; suite: string }
  | { kind: 'python'; version: string }
  | { kind: 'node'; version: string }
  /** An ecosystem's official image (`golang:1.22`), built offline from Debian packages: see TOOLCHAIN_RECIPES. */
  | { kind: 'toolchain'; image: string; version: string }
  | { kind: 'other' };

/** How an ecosystem's official image is stood in for offline: a Debian suite and its packages. */
export interface ToolchainRecipe {
  /** The Debian suite whose packages hold the toolchain (its rootfs comes from debootstrap). */
  suite: string;
  /** Dockerfile lines run as root on that rootfs, before the finish layer. */
  steps: string[];
  /** What the offline image holds, said when it stands in for the official one. */
  holds: string;
}

function aptInstall(packages: string): string {
  return `RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${packages} ` +
    '&& rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb';
}

/**
 * `find_package(googletest)`, which a FetchContent of googletest asks first with
 * FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS: Debian's GTest package, and the target names a
 * googletest built in the tree would give (`gtest_main`, `GTest::gtest_main`).
 */
const GOOGLETEST_SHIM = [
  'find_package(GTest CONFIG REQUIRED)',
  'foreach(t gtest gtest_main gmock gmock_main)',
  '  if(TARGET GTest::${t} AND NOT TARGET ${t})',
  '    set_property(TARGET GTest::${t} PROPERTY IMPORTED_GLOBAL TRUE)',
  '    add_library(${t} INTERFACE IMPORTED GLOBAL)',
  '    target_link_libraries(${t} INTERFACE GTest::${t})',
  '  endif()',
  'endforeach()',
  'set(googletest_FOUND TRUE)',
]
  .map((l) => `'${l}'`)
  .join(' ');

/**
 * Offline recipes by official image name. Go: Debian trixie's golang (1.24; bookworm's 1.19 is
 * older than most go.mod files ask for); with GOTOOLCHAIN=auto, a module that asks for a newer Go
 * gets that toolchain through the module proxy during its install (kept in the image's module cache).
 */
export const TOOLCHAIN_RECIPES: Record<string, ToolchainRecipe> = {
  golang: {
    suite: 'trixie',
    steps: [aptInstall('golang-go git ca-certificates'), 'ENV GOTOOLCHAIN=auto CGO_ENABLED=0', 'RUN go version'],
    holds: "Debian trixie's Go 1.24 (a go.mod asking for a newer Go gets it through the module proxy at install)",
  },
  // Ruby: bookworm's 3.1 with the test tools Debian packages, for air-gapped installs (RSpec 3.12,
  // minitest 5.17 and minitest-reporters, which test helpers often load; rake, bundler). Gems
  // bundler installs go to the swt user's GEM_HOME; Debian's stay visible beside them.
  ruby: {
    suite: 'bookworm',
    steps: [
      aptInstall('ruby ruby-dev ruby-bundler rake ruby-rspec ruby-minitest ruby-minitest-reporters ruby-test-unit build-essential git ca-certificates'),
      'ENV GEM_HOME=/home/swt/.gem BUNDLE_SILENCE_ROOT_WARNING=1',
      'ENV PATH=/home/swt/.gem/bin:${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}',
      'RUN ruby --version && rspec --version',
    ],
    holds: "Debian bookworm's Ruby 3.1 with RSpec 3.12, minitest 5.17 (and minitest-reporters), rake and bundler",
  },
  // PHP: bookworm's 8.2 CLI with composer, PHPUnit 9.6 and the extensions composer and most suites need.
  php: {
    suite: 'bookworm',
    steps: [
      aptInstall('php-cli php-xml php-mbstring php-curl php-zip php-intl php-bcmath phpunit composer unzip git ca-certificates'),
      'RUN php --version && phpunit --version && composer --version',
    ],
    holds: "Debian bookworm's PHP 8.2 with PHPUnit 9.6 and composer 2.5",
  },
  // Rust: trixie's 1.85 (bookworm's cargo 1.63 cannot read crates.io's sparse index).
  rust: {
    suite: 'trixie',
    steps: [aptInstall('rustc cargo gcc libc6-dev git ca-certificates'), 'ENV CARGO_TERM_COLOR=never', 'RUN cargo --version'],
    holds: "Debian trixie's Rust 1.85 and cargo",
  },
  // C and C++ (no official image holds the test frameworks, so this name is ours and never pulled
  // from a registry: `library/` holds only official images): bookworm's gcc 12, clang 14, CMake
  // 3.25, Ninja, Meson 1.0, autotools, GoogleTest 1.12, Catch2 2.13, doctest 2.4 and ccache. A
  // FetchContent of googletest (whose own package name is GTest) finds Debian's through a shim.
  'swt-cc': {
    suite: 'bookworm',
    steps: [
      aptInstall(
        'build-essential g++ clang cmake ninja-build meson pkg-config ccache autoconf automake libtool ' +
          'libgtest-dev libgmock-dev googletest catch2 doctest-dev python3 git ca-certificates',
      ),
      `RUN mkdir -p /usr/local/lib/cmake/googletest && printf '%s\\n' ${GOOGLETEST_SHIM} > /usr/local/lib/cmake/googletest/googletestConfig.cmake`,
      'ENV CCACHE_DIR=/home/swt/.ccache CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=/testbed',
      'RUN gcc --version && cmake --version && meson --version && ccache --version',
    ],
    holds: "Debian bookworm's gcc 12, clang 14, CMake 3.25, Ninja, Meson 1.0, autotools, GoogleTest 1.12, Catch2 2.13, doctest 2.4 and ccache",
  },
  // Maven: bookworm's OpenJDK 17 and Maven 3.8.7; ca-certificates-java puts the extra CAs into the JDK's trust store.
  maven: {
    suite: 'bookworm',
    steps: [aptInstall('default-jdk-headless maven ca-certificates-java git ca-certificates'), 'RUN mvn -v'],
    holds: "Debian bookworm's OpenJDK 17 and Maven 3.8.7 (with its /usr/share/maven-repo)",
  },
};

export interface BaseRef {
  /** As given, e.g. `node:18`. */
  ref: string;
  repo: string;
  tag: string;
  recipe: Recipe;
}

const DEBIAN_NUMBERS: Record<string, string> = { '10': 'buster', '11': 'bullseye', '12': 'bookworm', '13': 'trixie' };

export function parseBaseRef(ref: string): BaseRef {
  const trimmed = ref.trim();
  const m = /^(?:docker\.io\/)?(?:library\/)?([a-z0-9][a-z0-9._/-]*)(?::([A-Za-z0-9._-]+))?$/.exec(trimmed);
  if (!m) return { ref: trimmed, repo: trimmed, tag: 'latest', recipe: { kind: 'other' } };
  const repo = m[1]!;
  const tag = m[2] ?? 'latest';
  if (repo === 'node') {
    const v = /^(\d+(?:\.\d+){0,2})(?:-.*)?$/.exec(tag);
    if (v) return { ref: trimmed, repo, tag, recipe: { kind: 'node', version: v[1]! } };
  }
  if (repo === 'python') {
    const v = /^(\d+(?:\.\d+){0,2})(?:-.*)?$/.exec(tag);
    if (v) return { ref: trimmed, repo, tag, recipe: { kind: 'python', version: v[1]! } };
  }
  if (Object.prototype.hasOwnProperty.call(TOOLCHAIN_RECIPES, repo)) {
    const v = /^(\d+(?:\.\d+){0,2})?(?:-.*)?$/.exec(tag === 'latest' ? '' : tag);
    if (v) return { ref: trimmed, repo, tag, recipe: { kind: 'toolchain', image: repo, version: v[1] ?? 'latest' } };
  }
  if (repo === 'debian') {
    const suite = DEBIAN_NUMBERS[tag.replace(/-slim$/, '').split('.')[0]!] ?? tag.replace(/-slim$/, '');
    if (/^[a-z]+$/.test(suite) && suite !== 'latest') return { ref: trimmed, repo, tag, recipe: { kind: 'debian', suite } };
    if (tag === 'latest') return { ref: trimmed, repo, tag, recipe: { kind: 'debian', suite: DEBIAN_SUITE } };
  }
  return { ref: trimmed, repo, tag, recipe: { kind: 'other' } };
}

/**
 * A recipe's own revision, bumped when only its Dockerfile lines change (the Node images' native
 * build tools): its images are rebuilt, the others kept.
 */
const RECIPE_REVISIONS: Partial<Record<Recipe['kind'], number>> = { node: 1 };

/** 8 hex chars of (recipe version, the recipe's own revision, CA fingerprint): part of every base image name. */
export function baseIdentity(ca: CaBundle | undefined, kind?: Recipe['kind']): string {
  const rev = kind ? RECIPE_REVISIONS[kind] : undefined;
  return createHash('sha256').update(`swt-base v${RECIPE_VERSION}${rev ? ` ${kind} r${rev}` : ''}\n${caFingerprint(ca)}`).digest('hex').slice(0, 8);
}

/** `swt-base/node:18-<hash8>`: the local name of a base image built by us for `ref`. */
export function baseImageName(ref: BaseRef, ca: CaBundle | undefined): string {
  const repo = ref.repo.replace(/[^a-z0-9._/-]/g, '-');
  return `swt-base/${repo}:${ref.tag}-${baseIdentity(ca, ref.recipe.kind)}`;
}

/** The raw Debian rootfs imported from debootstrap (no CA, no user: the start of offline builds). */
export function rootfsImageName(suite: string): string {
  return `swt-base/debian:${suite}`;
}

/** npm that goes with a Node major: npm@11 for ≥ 23, npm@10 for 18–22, npm@9 for 16–17, npm@8 for 14–15, npm@6 below. */
export function npmMajorFor(nodeVersion: string): number {
  const major = Number(nodeVersion.split('.')[0]);
  if (major >= 23) return 11;
  if (major >= 18) return 10;
  if (major >= 16) return 9;
  if (major >= 14) return 8;
  return 6;
}

export const IMAGE_LABELS = {
  ref: 'swt-bot.base.ref',
  source: 'swt-bot.base.source',
  ca: 'swt-bot.base.ca',
  recipe: 'swt-bot.base.recipe',
} as const;

/** Shell script run as root in the finish layer. Works on Debian/Ubuntu (apt) and Alpine (apk). */
export function finishScript(caFileNames: string[]): string {
  const certs = caFileNames.map((n) => `/tmp/swt-finish/certs/${n}`).join(' ');
  return `#!/bin/sh
set -eu
export DEBIAN_FRONTEND=noninteractive
mkdir -p ${IMAGE_CA_DIR} /etc/ssl/certs
certs="${certs}"
add_certs() {
  for c in $certs; do
    grep -qF "$(sed -n 2p "$c")" ${IMAGE_CA_BUNDLE} 2>/dev/null || cat "$c" >> ${IMAGE_CA_BUNDLE}
  done
}
for c in $certs; do cp "$c" ${IMAGE_CA_DIR}/; done
# Trust the extra CAs before any download, so apt/apk work behind an intercepting proxy.
[ -z "$certs" ] || add_certs
need=""
command -v git >/dev/null 2>&1 || need="$need git"
command -v update-ca-certificates >/dev/null 2>&1 || need="$need ca-certificates"
if [ -n "$need" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $need
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
  elif command -v apk >/dev/null 2>&1; then
    apk add --no-cache $need
  else
    echo "cannot install$need: neither apt-get nor apk in this image" >&2; exit 1
  fi
fi
update-ca-certificates >/dev/null 2>&1 || true
[ -z "$certs" ] || add_certs
# The non-root user swt, 1000:1000 (renaming an existing uid/gid 1000 such as node's "node").
old_group=$(awk -F: '$3==1000{print $1}' /etc/group)
if [ -z "$old_group" ]; then groupadd -g 1000 swt 2>/dev/null || addgroup -g 1000 swt
elif [ "$old_group" != swt ]; then groupmod -n swt "$old_group" 2>/dev/null || sed -i "s/^$old_group:/swt:/" /etc/group
fi
old_user=$(awk -F: '$3==1000{print $1}' /etc/passwd)
if [ -z "$old_user" ]; then
  shell=/bin/sh; [ -x /bin/bash ] && shell=/bin/bash
  useradd -u 1000 -g 1000 -M -d /home/swt -s $shell swt 2>/dev/null || adduser -D -H -u 1000 -G swt -h /home/swt swt
elif [ "$old_user" != swt ]; then
  usermod -l swt -d /home/swt "$old_user" 2>/dev/null || sed -i "s/^$old_user:\\([^:]*\\):1000:\\([^:]*\\):\\([^:]*\\):[^:]*:/swt:\\1:1000:\\2:\\3:\\/home\\/swt:/" /etc/passwd
else
  usermod -d /home/swt swt 2>/dev/null || true
fi
mkdir -p /home/swt /testbed /swt-out
chown -R 1000:1000 /home/swt /testbed /swt-out
`;
}

export interface DockerfileInput {
  from: string;
  /** Recipe lines run as root before the finish layer. */
  steps: string[];
  withCa: boolean;
}

export function finishDockerfile(input: DockerfileInput): string {
  const env = input.withCa ? caEnv() : {};
  const envLines = Object.entries({
    ...env,
    LANG: 'C.UTF-8',
    PIP_BREAK_SYSTEM_PACKAGES: '1',
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  }).map(([k, v]) => `${k}=${v}`);
  return [
    `FROM ${input.from}`,
    'USER root',
    ...input.steps,
    'COPY swt-finish/ /tmp/swt-finish/',
    'RUN sh /tmp/swt-finish/finish.sh && rm -rf /tmp/swt-finish',
    `ENV ${envLines.join(' ')}`,
    'ENV PATH=/home/swt/.local/bin:${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}',
    'ENTRYPOINT []',
    'CMD ["/bin/sh"]',
    'WORKDIR /testbed',
    'USER 1000:1000',
    '',
  ].join('\n');
}

export function pythonSteps(): string[] {
  return [
    'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ' +
      'python3 python3-pytest python3-pip python3-venv git ca-certificates ' +
      '&& ln -sf /usr/bin/python3 /usr/local/bin/python && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb',
  ];
}

/**
 * Node comes pre-extracted in the build context under node-root/ (bin/node, its headers in
 * include/node, lib/node_modules/npm, symlinks). With Python, make and a C++ compiler, as GitHub's
 * runners have, a package that builds a native module (node-gyp) installs; node-gyp takes the
 * headers from /usr/local (npm_config_nodedir), not from nodejs.org, which no allowlist opens.
 */
export function nodeSteps(): string[] {
  return [
    aptInstall('python3 make g++'),
    'COPY node-root/ /usr/local/',
    'ENV npm_config_nodedir=/usr/local',
    'RUN node --version && npm --version && test -f /usr/local/include/node/node.h',
  ];
}

export function debianSteps(): string[] {
  return [];
}

/** The egress proxy: Debian's squid on the debootstrap rootfs, run as nobody; its config comes at start. */
export function egressProxyDockerfile(from: string): string {
  return [
    `FROM ${from}`,
    'USER root',
    'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends squid ' +
      '&& rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb && squid -v',
    'USER 65534:65534',
    'ENTRYPOINT []',
    'CMD ["squid", "-N"]',
    '',
  ].join('\n');
}

/** `swt-base/egress-proxy:squid-<hash8>`, the hash over its Dockerfile. */
export function egressProxyImageName(): string {
  const hash = createHash('sha256').update(egressProxyDockerfile(rootfsImageName(DEBIAN_SUITE))).digest('hex').slice(0, 8);
  return `swt-base/egress-proxy:squid-${hash}`;
}
