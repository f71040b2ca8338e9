/**
 * The App end to end on a Go module, with no image, install or test command configured: the
 * issue gets a reproducing Go test written by the (scripted) model and proven in real containers,
 * and the fix PR's check run says F→P and success. The fake GitHub serves as a GHES on loopback.
 */
import { appOnPublishedFixture } from '../helpers/appOnFakeGitHub.js';

const SECRET = 'swt-e2e-go-webhook-secret';
const OWNER = 'acme';
const REPO = 'durations-go';
/** The model's answer: a Go test appended to the package's test file, in the custom diff format. */
const MODEL_TEST = [
  '```custom-diff',
  'diff',
  'durations_test.go',
  'insert',
  'EOF',
  'func TestParseCombinedUnits(t *testing.T) {',
  '\tgot, err := Parse("1h30m")',
  '\tif err != nil || got != 5400 {',
  '\t\tt.Fatalf("Parse(\\"1h30m\\") = %d, %v; want 5400", got, err)',
  '\t}',
  '}',
  'end diff',
  '```',
].join('\n');

const e2e = appOnPublishedFixture('go-durations', { owner: OWNER, repo: REPO, secret: SECRET, apiKey: 'sk-e2e-go-scripted-model-key', answer: MODEL_TEST });

const settle = () => e2e.app.services.queue.drain(20 * 60_000);

describe('the App end to end on a Go module (no configuration but the strategy)', () => {
  it('issue → a reproducing Go test in a comment; fix PR → F→P and success', async () => {
    const { fake, published, llm } = e2e;
    const issue = fake.addIssue(OWNER, REPO, { title: published.fx.issue.title, body: published.fx.issue.body });
    expect((await fake.deliver('issues', fake.issuePayload(OWNER, REPO, issue.number, 'opened'))).status).toBe(200);
    await settle();

    const [comment, ...more] = fake.issue(OWNER, REPO, issue.number).comments;
    expect(more).toEqual([]);
    expect(comment!.body).toContain('### 🧪 swt-bot reproduced this issue');
    expect(comment!.body).toContain('<code>durations_test.go</code>');
    expect(comment!.body).toContain('+func TestParseCombinedUnits(t *testing.T) {');
    // How it fails at base: Go's own message, from the real run.
    expect(comment!.body).toMatch(/Parse\("1h30m"\) = 0, strconv\.Atoi: parsing "1h30": invalid syntax; want 5400/);
    expect(fake.issue(OWNER, REPO, issue.number).labels).toEqual(['reproduced']);
    expect(llm.requests).toHaveLength(1);
    // The prompt names the language and its runner.
    expect(JSON.stringify(llm.requests[0]!.body)).toMatch(/\bGo\b|golang|go test/);

    const pr = await fake.addPull(OWNER, REPO, { title: 'Parse combined units', body: `Fixes #${issue.number}`, user: { login: 'alice', type: 'User' }, headSha: published.goodFix, headRef: 'fix' });
    expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, REPO, pr.number, 'opened'))).status).toBe(200);
    await settle();
    const runs = fake.checkRuns(OWNER, REPO).filter((c) => c.head_sha === published.goodFix);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'completed', conclusion: 'success', output: { title: 'The fix passes the reproducing tests' } });
    expect(runs[0]!.output!.summary).toMatch(/\| `example\.com\/durations\.TestParseCombinedUnits` \| ❌ fail[^|]*\| ✅ pass \| \*\*F→P\*\*/);
    // The fix PR brings its own test too: shown, and marked pre-existing (it is not ours to count).
    expect(runs[0]!.output!.summary).toMatch(/\| `example\.com\/durations\.TestCombinedUnits` \| ❌ fail \(missing\) \| ✅ pass \| F→P \(pre-existing\)/);
    expect(runs[0]!.output!.summary).toContain('F→P 2 · P→F 0 · F→F 0 · P→P 3');
    expect(runs[0]!.output!.summary).toContain('**S (the tests reproduce the issue): yes**: 1 test goes from failing to passing');
  });
});
