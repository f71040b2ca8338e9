/**
 * Attacks on "a pull request cannot vouch for itself" (issue 37): a bot's fork PR that leaves the
 * bug alone and changes the test machinery instead, so its failing test reports a pass: a pytest
 * conftest.py hook, a mocha `--require` named in a `.mocharc.yml`, an RSpec spec_helper that turns
 * failed expectations into no-ops. Against the App as it runs: signed webhooks from the loopback
 * fake GitHub, the scripted model writing the reproducing test at the base, real containers.
 *
 * Each head waits for a maintainer (its check names the machinery); approved, its tests run on it
 * with the base's test machinery, so the bug shows: the gate fails (the author is gated, `*[bot]`),
 * the check and the comment say which machinery ran, and the stored verdict is not likely correct.
 * A control in each shows the forge is real: with it as the base's own machinery, the reproducing
 * test passes on the buggy code. The last attack forces the head's own machinery (base's cannot
 * load on it): its forged F→P is flagged and not likely correct.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { FakeGitHub } from '../../src/demo/fakeGitHub.js';
import { REGISTRIES } from '../../src/ecosystems/registries.js';
import { DEFAULT_EGRESS_HOSTS } from '../../src/sandbox/egress/egressConfig.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { fixFilterPasses, gateConclusion } from '../../src/github/decide.js';
import { renderCheckResult } from '../../src/github/render.js';
import { DEFAULT_APP_SETTINGS } from '../../src/config/repoConfig.js';
import { candidateVerdict } from '../../src/pipeline/rank.js';
import { validate } from '../../src/pipeline/validate.js';
import { appKey } from '../helpers/webhooks.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { msg, startScriptedLlm, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const SECRET = 'swt-redteam-machinery-secret';
const OWNER = 'acme';
const MAINTAINER = { login: 'maintainer', type: 'User' } as const;
/** Gated by default (`gate.authors` holds `*[bot]`): its PR passes only if the fix filter does. */
const BOT = { login: 'fixer[bot]', type: 'Bot' } as const;

const diff = (file: string, body: string) => `\`\`\`custom-diff\ndiff\n${file}\ninsert\nEOF\n${body}\nend diff\n\`\`\``;

interface Target {
  repo: string;
  files: Record<string, string>;
  issue: { title: string; body: string };
  /** What the scripted model answers for this repository's issue: the reproducing test. */
  model: string;
  /** The forging head: the bug left alone, the test machinery changed. */
  forge: Record<string, string>;
  machinery: string[];
  test: string;
}

const PYTHON: Target = {
  repo: 'calc-py',
  files: {
    '.github/swt.yml': stringify({ image: 'python:3.11', install: '', test_command: 'python3 -m pytest -p no:cacheprovider {files}', generation: { strategy: 'zero-shot-plus' } }),
    'calc.py': 'def add(a, b):\n    return a - b\n',
    'tests/test_calc.py': 'from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n',
  },
  issue: { title: 'add(1, 2) returns -1 in calc', body: 'calc.add(1, 2) should be 3.' },
  model: diff('tests/test_calc.py', '\ndef test_adds_two():\n    assert add(1, 2) == 3'),
  forge: {
    'conftest.py': [
      'import pytest',
      '',
      '',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_runtest_makereport(item, call):',
      '    outcome = yield',
      '    report = outcome.get_result()',
      '    if report.failed:',
      "        report.outcome = 'passed'",
      '        report.longrepr = None',
      '',
    ].join('\n'),
    'README.md': 'calc: adds numbers\n',
  },
  machinery: ['conftest.py'],
  test: 'tests/test_calc.py::test_adds_two',
};

const MOCHA: Target = {
  repo: 'mean-js',
  files: {
    '.github/swt.yml': stringify({ image: 'node:22', install: 'npm install --no-audit --no-fund', test_command: './node_modules/.bin/mocha {files}', generation: { strategy: 'zero-shot-plus' } }),
    // mocha's npm version (not an address).
    'package.json': `${JSON.stringify({ name: 'mean', version: '1.0.0', private: true, devDependencies: { mocha: '10.8.2' } }, null, 2)}\n`,
    'lib/mean.js': 'exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / (xs.length + 1);\n',
    'test/mean.test.js': "const assert = require('node:assert');\nconst { mean } = require('../lib/mean.js');\n\ndescribe('mean', () => {\n  it('is a number', () => assert.strictEqual(typeof mean([1]), 'number'));\n});\n",
  },
  issue: { title: 'mean of [2, 4] is 2 in mean-js', body: 'mean([2, 4]) should be 3.' },
  model: diff('test/mean.test.js', "describe('mean of two', () => {\n  it('averages two numbers', () => assert.strictEqual(mean([2, 4]), 3));\n});"),
  // mocha loads what .mocharc.yml requires before any test: here, a runner whose failures are passes.
  forge: {
    '.mocharc.yml': 'require:\n  - ./test/support/speedup.js\n',
    'test/support/speedup.js': [
      "const { Runner } = require('mocha');",
      'const fail = Runner.prototype.fail;',
      'Runner.prototype.fail = function (test, err, force) {',
      "  if (test.type !== 'test') return fail.call(this, test, err, force);",
      "  test.state = 'passed';",
      "  this.emit('pass', test);",
      '};',
      '',
    ].join('\n'),
  },
  machinery: ['.mocharc.yml', 'test/support/speedup.js'],
  test: 'test/mean.test.js > mean of two > averages two numbers',
};

const RSPEC: Target = {
  repo: 'stack-rb',
  files: {
    '.github/swt.yml': stringify({ image: 'ruby:3.3', generation: { strategy: 'zero-shot-plus' } }),
    Gemfile: "source 'https://rubygems.org'\ngem 'rspec', '~> 3.0'\n",
    '.rspec': '--require spec_helper\n',
    'lib/stack.rb': 'class Stack\n  def initialize = @items = []\n  def push(x) = @items.push(x)\n  def peek = @items.first\nend\n',
    'spec/spec_helper.rb': "require_relative '../lib/stack'\n",
    'spec/stack_spec.rb': "RSpec.describe Stack do\n  it 'peeks at an only item' do\n    s = Stack.new\n    s.push(1)\n    expect(s.peek).to eq(1)\n  end\nend\n",
  },
  issue: { title: 'Stack#peek returns the first item in stack-rb', body: 'peek should return the last item pushed.' },
  model: diff('spec/stack_spec.rb', "RSpec.describe Stack do\n  it 'peeks at the last item pushed' do\n    s = Stack.new\n    s.push(1)\n    s.push(2)\n    expect(s.peek).to eq(2)\n  end\nend"),
  // spec_helper runs before every spec: here, every failed expectation becomes a no-op.
  forge: {
    'spec/spec_helper.rb': "require_relative '../lib/stack'\nrequire 'rspec/expectations'\nRSpec::Expectations.singleton_class.send(:define_method, :fail_with) { |*| nil }\n",
  },
  machinery: ['spec/spec_helper.rb'],
  test: 'spec/stack_spec.rb > Stack peeks at the last item pushed',
};

const TARGETS = [PYTHON, MOCHA, RSPEC];

let fake: FakeGitHub;
let app: RunningApp;
let llm: ScriptedLlm;
let dataDir: string;
let sandbox: Sandbox;
const sources = new Map<string, TempRepo>();
const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };

beforeAll(async () => {
  // The model answers each repository's issue with that repository's test.
  llm = await startScriptedLlm((req) => msg((TARGETS.find((t) => JSON.stringify(req.body).includes(t.issue.title)) ?? PYTHON).model));
  process.env.OPENAI_BASE_URL = llm.baseURL;
  process.env.OPENAI_API_KEY = 'sk-redteam-scripted-model-key';
  fake = await new FakeGitHub({ webhookSecret: SECRET, appPrivateKey: appKey() }).start();
  for (const t of TARGETS) {
    const source = createGitRepo(t.files);
    sources.set(t.repo, source);
    await fake.addRepo(OWNER, t.repo, source.path);
    fake.setPermission(OWNER, t.repo, MAINTAINER.login, 'admin');
    fake.addIssue(OWNER, t.repo, { ...t.issue, user: { login: 'reporter', type: 'User' } });
  }
  dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-${process.pid}-`));
  // RubyGems is not reachable from here: refused by the proxy, the Ruby install takes its air-gapped way at once.
  const refused = new Set<string>(REGISTRIES.ruby);
  sandbox = createDockerSandbox({ egress: { hosts: DEFAULT_EGRESS_HOSTS.filter((h) => !refused.has(h)) } });
  app = await startApp({
    appId: fake.appId,
    privateKey: appKey(),
    secret: SECRET,
    dataDir,
    env: { GHE_HOST: fake.host, GHE_PROTOCOL: 'http' },
    sandbox,
    progressIntervalMs: 200,
  });
  fake.appUrl = app.url;
});

afterAll(async () => {
  await app?.stop();
  await fake?.close();
  await llm?.close();
  rmSync(dataDir, { recursive: true, force: true });
  for (const [k, v] of [['OPENAI_BASE_URL', saved.url], ['OPENAI_API_KEY', saved.key]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await cleanUpEcosystemRuns();
});

const settle = () => app.services.queue.drain(15 * 60_000);

afterEach(async () => {
  expect((await app.services.queue.list()).filter((j) => j.state === 'failed').map((j) => [j.kind, j.error])).toEqual([]);
});

/** The bot's fork PR of the forging head; returns its number and head. */
async function openForgingPull(t: Target): Promise<{ pr: number; head: string }> {
  const source = sources.get(t.repo)!;
  const head = source.commit(t.forge, 'Make the tests faster');
  source.git('reset', '-q', '--hard', 'HEAD~1');
  await fake.pushRef(OWNER, t.repo, source.path, head, `refs/heads/swt-redteam-${head.slice(0, 12)}`);
  const pr = await fake.addPull(OWNER, t.repo, { title: 'Fix the bug', body: 'Fixes #1', user: BOT, headSha: head, headRef: 'fix-1', fork: true });
  expect((await fake.deliver('pull_request', await fake.pullPayload(OWNER, t.repo, pr.number, 'opened'))).status).toBe(200);
  return { pr: pr.number, head };
}

/** Opened: it waits for a maintainer, naming the machinery; approved: base's machinery, the bug shows, the gate fails. */
async function expectNotVouchedFor(t: Target): Promise<void> {
  const { pr, head } = await openForgingPull(t);
  await settle();
  const runs = () => fake.checkRuns(OWNER, t.repo).filter((c) => c.head_sha === head);
  expect(runs()).toHaveLength(1);
  expect(runs()[0]).toMatchObject({ status: 'completed', conclusion: 'action_required', output: { title: 'Waiting for a maintainer' } });
  expect(runs()[0]!.output!.summary).toContain(`changes test machinery (how tests run and how their results are reported), so it could make its own tests report a pass:\n\n${t.machinery.map((m) => `- \`${m}\``).join('\n')}`);
  expect(llm.requests.filter((r) => JSON.stringify(r.body).includes(t.issue.title))).toHaveLength(0);

  expect((await fake.deliver('issue_comment', fake.commentPayload(OWNER, t.repo, pr, `/swt validate ${head}`, MAINTAINER, 'MEMBER'))).status).toBe(200);
  await settle();
  const last = runs().at(-1)!;
  expect(last).toMatchObject({ status: 'completed', conclusion: 'failure', output: { title: 'The fix does not pass the reproducing tests' } });
  expect(last.output!.summary).toContain(`🔧 This head changes test machinery (${t.machinery.map((m) => `\`${m}\``).join(', ')}): the tests ran on it with the base's test machinery, the head's set aside.`);
  const comment = fake.issue(OWNER, t.repo, pr).comments.find((c) => c.body.startsWith('<!-- swt-bot:validation -->'))!.body;
  expect(comment).toContain("the tests ran on it with the base's test machinery, the head's set aside.");
  expect(comment).toContain('- ❌ **S (the tests reproduce the issue): no**');
  expect(comment).toContain('- ❌ **Fix likely correct: no**');
  // The reproducing test still fails on the head: F→F, and the ranking's verdict is not "likely correct".
  const leaf = t.test.split(/::| > /).pop()!;
  expect(comment.split('\n').filter((l) => l.includes(leaf) && l.includes('F→F'))).toHaveLength(1);
  expect(await app.services.store.verdictOf({ owner: OWNER, repo: t.repo }, pr, 1)).toMatchObject({ headSha: head, verdict: 'does-not-fix', f2p: 0 });

  // Control: the forge is real. With it as the base's own machinery (so on both sides), the same test passes while the bug is still there.
  const rep = (await app.services.store.latestReproduction({ owner: OWNER, repo: t.repo }, 1))!;
  const forged = await validate(sandbox, { repo: sources.get(t.repo)!.path, base: head, head, testPatch: rep.testPatch, confirm: 0 });
  expect(forged.machinery).toBeUndefined();
  expect(forged.tests.find((x) => x.id === t.test)).toMatchObject({ base: 'pass', head: 'pass' });
}

describe('redteam: a pull request cannot vouch for itself (test machinery)', () => {
  it("attack: a bot's fork head that leaves the bug and adds a conftest.py turning failed reports into passes waits for a maintainer, then fails on base's machinery", async () => {
    await expectNotVouchedFor(PYTHON);
  });

  it("attack: a bot's fork head that leaves the bug and adds a mocha --require (.mocharc.yml) whose runner passes failures waits, then fails on base's machinery", async () => {
    await expectNotVouchedFor(MOCHA);
  });

  it("attack: a bot's fork head that leaves the bug and rewrites RSpec's spec_helper so failed expectations pass waits, then fails on base's machinery", async () => {
    await expectNotVouchedFor(RSPEC);
  });

  it("attack: a head that breaks the base's conftest.py (removing what it imports) to force its own forging one gets the forged F→P only flagged: not likely correct, the bot's gate fails", async () => {
    const repo = createGitRepo({
      'calc.py': 'def add(a, b):\n    return a - b\n\n\ndef legacy_zero():\n    return 0\n',
      'conftest.py': 'from calc import legacy_zero\n',
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n',
    });
    const base = repo.sha;
    // The bug stays; legacy_zero goes, so base's conftest.py cannot load on the head, and the head's own forges.
    const head = repo.commit({ 'calc.py': 'def add(a, b):\n    return a - b\n', 'conftest.py': PYTHON.forge['conftest.py']! }, 'Drop legacy_zero');
    const testPatch = ['diff --git a/tests/test_calc.py b/tests/test_calc.py', '--- a/tests/test_calc.py', '+++ b/tests/test_calc.py', '@@ -3,3 +3,7 @@ from calc import add', ' ', ' def test_zero():', '     assert add(0, 0) == 0', '+', '+', '+def test_adds_two():', '+    assert add(1, 2) == 3', ''].join('\n');
    const v = await validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch, image: 'python:3.11', install: '', testCmd: 'python3 -m pytest -p no:cacheprovider {files}' });
    // The forge works with the head's own set-up (the bug is still there)...
    expect(v.tests.find((t) => t.id === 'tests/test_calc.py::test_adds_two')).toMatchObject({ transition: 'F2P' });
    // ...and that is all it gets: flagged, never likely correct, ranked below, and the bot's gate fails saying why.
    expect(v.machinery).toEqual({ changed: ['conftest.py'], used: 'head' });
    expect(v.likelyCorrect).toBe(false);
    expect(candidateVerdict(v)).toBe('own-set-up');
    const issues = [{ issue: 1, kind: 'validated' as const, validation: { ...v, machinery: v.machinery! }, reproduction: { strategy: 'zero-shot-plus', sha: base, testPatch } }];
    expect(fixFilterPasses(issues)).toBe(false);
    const gate = gateConclusion(BOT.login, fixFilterPasses(issues), DEFAULT_APP_SETTINGS.gate);
    expect(gate).toEqual({ conclusion: 'failure', gated: true });
    expect(renderCheckResult({ ...gate, author: BOT.login, issues }).summary).toContain("**Not trusted: the tests ran with the head's own test set-up.**");
  });
});
