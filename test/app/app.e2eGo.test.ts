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

describe('the App end to end on a Go module (no configuration but the strategy)', () => {
  it('issue → a reproducing Go test in a comment; fix PR → F→P and success', async () => {
    const { fake, llm } = e2e;
    const issue = await e2e.openIssue();
    const { comment } = issue;
    expect(comment).toContain('### 🧪 swt-bot reproduced this issue');
    expect(comment).toContain('<code>durations_test.go</code>');
    expect(comment).toContain('+func TestParseCombinedUnits(t *testing.T) {');
    // How it fails at base: Go's own message, from the real run.
    expect(comment).toMatch(/Parse\("1h30m"\) = 0, strconv\.Atoi: parsing "1h30": invalid syntax; want 5400/);
    expect(fake.issue(OWNER, REPO, issue.number).labels).toEqual(['reproduced']);
    expect(llm.requests).toHaveLength(1);
    // The prompt names the language and its runner.
    expect(JSON.stringify(llm.requests[0]!.body)).toMatch(/\bGo\b|golang|go test/);

    const run = await e2e.openFixPull(issue.number, 'Parse combined units');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'success', output: { title: 'The fix passes the reproducing tests' } });
    expect(run.output!.summary).toMatch(/\| `example\.com\/durations\.TestParseCombinedUnits` \| ❌ fail[^|]*\| ✅ pass \| \*\*F→P\*\*/);
    // The fix PR brings its own test too: shown, and marked pre-existing (it is not ours to count).
    expect(run.output!.summary).toMatch(/\| `example\.com\/durations\.TestCombinedUnits` \| ❌ fail \(missing\) \| ✅ pass \| F→P \(pre-existing\)/);
    expect(run.output!.summary).toContain('F→P 2 · P→F 0 · F→F 0 · P→P 3');
    expect(run.output!.summary).toContain('**S (the tests reproduce the issue): yes**: 1 test goes from failing to passing');
  });
});
