/**
 * The App end to end on a C++ project (CMake + GoogleTest), with no image, install or test command
 * configured: the issue gets a reproducing GoogleTest test written by the (scripted) model and
 * proven in real containers (the swt-cc image, the build kept warm in the environment), and the
 * fix PR's check run says F→P and success. The fake GitHub serves as a GHES on loopback.
 */
import { appOnPublishedFixture } from '../helpers/appOnFakeGitHub.js';

const SECRET = 'swt-e2e-cpp-webhook-secret';
const OWNER = 'acme';
const REPO = 'clampx-cpp';
/** The model's answer: a GoogleTest test appended to the project's test file, in the custom diff format. */
const MODEL_TEST = ['```custom-diff', 'diff', 'tests/clampx_test.cpp', 'insert', 'EOF', '', 'TEST(Clamp, Above) { EXPECT_EQ(10, clampx(15, 0, 10)); }', 'end diff', '```'].join('\n');

const e2e = appOnPublishedFixture('cpp-clampx', { owner: OWNER, repo: REPO, secret: SECRET, apiKey: 'sk-e2e-cpp-scripted-model-key', answer: MODEL_TEST });

describe('the App end to end on a C++ project (no configuration but the strategy)', () => {
  it('issue → a reproducing GoogleTest test in a comment; fix PR → F→P and success', async () => {
    const { fake, llm } = e2e;
    const issue = await e2e.openIssue();
    const { comment } = issue;
    expect(comment).toContain('### 🧪 swt-bot reproduced this issue');
    expect(comment).toContain('<code>tests/clampx_test.cpp</code>');
    expect(comment).toContain('+TEST(Clamp, Above) { EXPECT_EQ(10, clampx(15, 0, 10)); }');
    // How it fails at base: GoogleTest's own message, from the real run.
    expect(comment).toMatch(/Expected equality of these values:[\s\S]*10[\s\S]*clampx\(15, 0, 10\)[\s\S]*15/);
    expect(fake.issue(OWNER, REPO, issue.number).labels).toEqual(['reproduced']);
    expect(llm.requests).toHaveLength(1);
    // The prompt names the language and its runner.
    expect(JSON.stringify(llm.requests[0]!.body)).toMatch(/C\+\+|\bctest\b/);

    const run = await e2e.openFixPull(issue.number, 'clampx limits from above');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'success', output: { title: 'The fix passes the reproducing tests' } });
    const summary = run.output!.summary!;
    expect(summary).toMatch(/\| `tests\/clampx_test\.cpp > Clamp\.Above` \| ❌ fail[^|]*\| ✅ pass \| \*\*F→P\*\*/);
    // The fix PR brings its own test too: shown, and marked pre-existing (it is not ours to count).
    expect(summary).toMatch(/\| `tests\/clampx_test\.cpp > Clamp\.LimitsFromAbove` \| ❌ fail \(missing\) \| ✅ pass \| F→P \(pre-existing\)/);
    expect(summary).toContain('F→P 2 · P→F 0 · F→F 0 · P→P 2');
    expect(summary).toContain('**S (the tests reproduce the issue): yes**: 1 test goes from failing to passing');
  });
});
