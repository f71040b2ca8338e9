/**
 * The py-durations fixture as a repository on the fake GitHub, for the end-to-end tests (built by
 * the same code as `swt demo --app`): main with a `.github/swt.yml`, the fixture's fix on branch
 * fix, and a change that fixes nothing on branch no-fix.
 */
import { fixtureConfig, publishFixture, type PublishedFixture } from '../../src/demo/appDemo.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import type { StrategyName } from '../../src/generation/candidate.js';
import { appKey } from './webhooks.js';

export const WEBHOOK_SECRET = 'swt-e2e-webhook-secret';
export const OWNER = 'acme';
export const REPO = 'durations';
export const MAINTAINER_TOKEN = 'ghp_maintainerToken0123456789';

/** What the scripted model answers: a test in the custom diff format. */
export const MODEL_TEST = '```custom-diff\ndiff\ntests/test_parse.py\ninsert\nEOF\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\nend diff\n```';

export interface FixtureGitHub extends PublishedFixture {
  fake: FakeGitHub;
}

export async function fixtureOnFakeGitHub(strategy: StrategyName, extraConfig: Record<string, unknown> = {}): Promise<FixtureGitHub> {
  const fake = await new FakeGitHub({ webhookSecret: WEBHOOK_SECRET, appPrivateKey: appKey(), personalTokens: { [MAINTAINER_TOKEN]: 'maintainer' } }).start();
  try {
    const published = await publishFixture(fake, 'py-durations', { owner: OWNER, repo: REPO, config: (fx) => fixtureConfig(fx, { generation: { strategy }, ...extraConfig }) });
    fake.setPermission(OWNER, REPO, 'maintainer', 'admin');
    return {
      ...published,
      fake,
      async cleanup() {
        await fake.close();
        await published.cleanup();
      },
    };
  } catch (e) {
    await fake.close();
    throw e;
  }
}
