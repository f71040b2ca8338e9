/** Node's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { inAncestors, jsonPart, named, partChanged } from '../machinery.js';
import type { MachineryTexts, PathInfo, TestMachinery } from '../types.js';

const MANIFESTS = new Set(['package.json', 'package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml']);

export const nodeDependencyManifest = (p: PathInfo): boolean => MANIFESTS.has(p.base);

/** Runner, transform and set-up configs: whatever they say, they decide how the tests load and report. */
const CONFIG =
  /^((jest|vitest|vite|ava|babel|jest-preset|wallaby|karma)\.(config|setup|workspace)\.[cm]?[jt]sx?(on)?|(jest|vitest)\.(setup|workspace)[^/]*|\.mocharc\.[^/]*|mocha\.opts|\.babelrc[^/]*|\.swcrc|setupTests\.[cm]?[jt]sx?|deno\.jsonc?)$/;
const JS_EXTS = ['js', 'cjs', 'mjs', 'ts', 'cts', 'mts', 'json'];
const ROOT_CONFIGS = [
  ...named(['jest.config', 'vitest.config', 'vite.config', 'ava.config', 'vitest.workspace'], JS_EXTS),
  ...named(['.mocharc'], ['js', 'cjs', 'mjs', 'json', 'jsonc', 'yml', 'yaml']),
  'test/mocha.opts',
];

/** What of a package.json the runners read: their config keys and the scripts `npm test` runs. */
const PACKAGE_PART = jsonPart((pkg) => ({
  jest: pkg?.jest, mocha: pkg?.mocha, ava: pkg?.ava, babel: pkg?.babel, tap: pkg?.tap, c8: pkg?.c8, nyc: pkg?.nyc,
  scripts: ['test', 'pretest', 'posttest'].map((s) => pkg?.scripts?.[s]),
}));

/** Keys whose values are files the runner loads before or around the tests. */
const SETUP_KEYS = 'setupFiles|setupFilesAfterEnv|globalSetup|globalTeardown|reporters|testEnvironment|snapshotResolver|transform|preset|runner|testRunner|testSequencer|resolver|watchPlugins|require|file|import|loader|spec-reporter';

/** Literal paths the configs give under set-up keys (`setupFiles: ['./test/setup.js']`, `require: x`, `--require x`). */
function setUpFilesNamed(text: string): string[] {
  const out: string[] = [];
  const values = new RegExp(`(?:["']?(?:${SETUP_KEYS})["']?\\s*[:=]\\s*(\\[[^\\]]*\\]|\\{[^}]*\\}|[^\\n,}]+)|--(?:require|file|import|loader)[ =]+(\\S+)|(?:${SETUP_KEYS}):\\s*\\n((?:[ \\t]*-[^\\n]*\\n?)+))`, 'g');
  for (const m of text.matchAll(values)) {
    const chunk = m[1] ?? m[2] ?? m[3] ?? '';
    for (const s of chunk.matchAll(/["'`]([^"'`]+)["'`]|(?:^|[\s-])([\w./<>@-]+\.[cm]?[jt]sx?)\b/g)) out.push(s[1] ?? s[2]!);
  }
  return out.map((s) => s.replace(/^<rootDir>\//, '').replace(/^\.\//, ''));
}

/** A changed script a config names as a set-up file (at base or at head), the config's directory as the root. */
function namedAsSetUp(p: PathInfo, texts: MachineryTexts): boolean {
  const stem = p.path.replace(/\.[^./]+$/, '');
  for (const side of [texts.base, texts.head]) {
    for (const [config, text] of Object.entries(side)) {
      const dir = config.includes('/') ? config.slice(0, config.lastIndexOf('/') + 1) : '';
      const body = config.endsWith('package.json') ? safeJson(text) : text;
      if (setUpFilesNamed(body).some((n) => `${dir}${n}` === p.path || `${dir}${n}` === stem)) return true;
    }
  }
  return false;
}

function safeJson(text: string): string {
  try {
    const pkg = JSON.parse(text);
    return JSON.stringify({ jest: pkg?.jest, mocha: pkg?.mocha, ava: pkg?.ava, scripts: pkg?.scripts }, null, 1);
  } catch {
    return text;
  }
}

export const nodeMachinery: TestMachinery = {
  reads: (changed) => [...ROOT_CONFIGS, ...inAncestors(changed, 'package.json'), ...changed.filter((f) => CONFIG.test(f.split('/').pop()!))],
  changes(p, texts) {
    // The runner itself and what it loads (committed node_modules), jest's automatic mocks of packages.
    if (CONFIG.test(p.base) || p.dirs.includes('node_modules') || p.dirs[0] === '__mocks__') return true;
    if (p.base === 'package.json') return partChanged(p.path, texts, PACKAGE_PART);
    return /\.[cm]?[jt]sx?$/.test(p.base) && namedAsSetUp(p, texts);
  },
};
