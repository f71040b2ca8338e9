/**
 * The py-durations fixture as a repository on the fake GitHub, for the end-to-end tests: main
 * with a `.github/swt.yml`, a correct fix (the fixture's own fix commit) on one branch and an
 * incorrect one (adds a unit, still crashes on "1h30m") on another.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import { git } from '../../src/sandbox/gitExec.js';
import { appKey } from './payloads.js';

export const WEBHOOK_SECRET = 'swt-e2e-webhook-secret';
export const OWNER = 'acme';
export const REPO = 'durations';

export const CONFIG = [
  'image: python:3.11',
  'install: ""',
  'test_command: python3 -m pytest -p no:cacheprovider {files}',
  'generation:',
  '  strategy: zero-shot-plus',
  '',
].join('\n');

/** What the scripted model answers: a test in the custom diff format. */
export const MODEL_TEST = '```custom-diff\ndiff\ntests/test_parse.py\ninsert\nEOF\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\nend diff\n```';

const GIT_ENV = { GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.invalid', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.invalid' };

export interface FixtureGitHub {
  fake: FakeGitHub;
  fx: FixtureRepo;
  base: string;
  goodFix: string;
  badFix: string;
  cleanup(): Promise<void>;
}

export async function fixtureOnFakeGitHub(config = CONFIG): Promise<FixtureGitHub> {
  const fx = await createFixtureRepo('py-durations');
  const run = (...args: string[]) => git(fx.dir, args, { env: GIT_ENV }).then((s) => s.trim());
  await run('checkout', '-q', fx.base);
  await mkdir(join(fx.dir, '.github'), { recursive: true });
  await writeFile(join(fx.dir, '.github', 'swt.yml'), config);
  await run('add', '-A');
  await run('commit', '-q', '-m', 'Configure swt-bot');
  const base = await run('rev-parse', 'HEAD');
  await run('cherry-pick', '--allow-empty', fx.head);
  const goodFix = await run('rev-parse', 'HEAD');
  await run('checkout', '-q', base);
  const parse = join(fx.dir, 'durations', 'parse.py');
  const { readFile } = await import('node:fs/promises');
  await writeFile(parse, (await readFile(parse, 'utf8')).replace('"d": 86400}', '"d": 86400, "w": 604800}'));
  await run('commit', '-q', '-am', 'Support weeks');
  const badFix = await run('rev-parse', 'HEAD');
  await run('checkout', '-q', base);

  const fake = await new FakeGitHub({ webhookSecret: WEBHOOK_SECRET, appPrivateKey: appKey(), personalTokens: { ghp_maintainerToken0123456789: 'maintainer' } }).start();
  await fake.addRepo(OWNER, REPO, fx.dir);
  await fake.pushRef(OWNER, REPO, fx.dir, goodFix, 'refs/heads/fix-combined-units');
  await fake.pushRef(OWNER, REPO, fx.dir, badFix, 'refs/heads/bot-fix');
  fake.setPermission(OWNER, REPO, 'maintainer', 'admin');
  return {
    fake,
    fx,
    base,
    goodFix,
    badFix,
    async cleanup() {
      await fake.close();
      await fx.cleanup();
    },
  };
}
