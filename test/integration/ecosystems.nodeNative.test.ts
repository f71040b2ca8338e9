import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';

// Issue 39: a package whose install builds a native module with node-gyp (a pnpm monorepo's
// sqlite3) failed: the Node image had no Python or compiler, which GitHub's runners have. Here the
// small epoll@4.0.2 from the npm registry (its install script is `node-gyp rebuild`, from source,
// no prebuilt binary), against the headers of the image's own Node (npm_config_nodedir): nodejs.org,
// where node-gyp would fetch them, is on no allowlist. Real containers, real npm registry.

const PKG = JSON.stringify({ name: 'watcher', version: '1.0.0', private: true, scripts: { test: 'node --test' }, dependencies: { epoll: '4.0.2' } }, null, 2);
const CODE = (fixed: boolean) => `const { Epoll } = require('epoll');

/** The epoll events a watcher asks for: readable, and writable when it has something to send. */
exports.events = (sending) => Epoll.EPOLLIN | (sending ? Epoll.${fixed ? 'EPOLLOUT' : 'EPOLLIN'} : 0);
`;
const OLD_TEST = `const test = require('node:test');
const assert = require('node:assert');
const { Epoll } = require('epoll');
const { events } = require('../index.js');

test('readable', () => assert.strictEqual(events(false), Epoll.EPOLLIN));
`;
const TEST_PATCH = [
  'diff --git a/test/events.test.js b/test/events.test.js',
  '--- a/test/events.test.js',
  '+++ b/test/events.test.js',
  '@@ -5,2 +5,3 @@ const { events } = require(\'../index.js\');',
  ' ',
  " test('readable', () => assert.strictEqual(events(false), Epoll.EPOLLIN));",
  "+test('writable when sending', () => assert.strictEqual(events(true) & Epoll.EPOLLOUT, Epoll.EPOLLOUT));",
  '',
].join('\n');

afterAll(cleanUpEcosystemRuns);

describe('native build tools in the Node image (real containers, npm registry)', () => {
  it('a dependency built from source by node-gyp installs; the new test is F→P', async () => {
    const repo = createGitRepo({ 'package.json': PKG, 'index.js': CODE(false), 'test/events.test.js': OLD_TEST });
    const base = repo.sha;
    const head = repo.commit({ 'index.js': CODE(true) }, 'ask for EPOLLOUT when sending');
    const out = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(transitions(out)).toEqual([
      ['test/events.test.js > readable', 'P2P'],
      ['test/events.test.js > writable when sending', 'F2P'],
    ]);
    expect(out.success).toBe(true);
  }, 1_200_000);
});
