/** The App's pure parts: config keys, closing links, decisions, the gate, ranking. */
import { appSettings, checkRepoConfig, DEFAULT_APP_SETTINGS, parseRepoConfig } from '../../src/config/repoConfig.js';
import {
  fixFilterPasses,
  gateConclusion,
  isBotAccount,
  matchesAuthor,
  needsApproval,
  parseCommand,
  readsAsQuestion,
  shouldReproduce,
  approvalOf,
  headInstallOf,
  permissionGrantsWrite,
  type IssueFacts,
} from '../../src/github/decide.js';
import { closingIssueNumbers } from '../../src/github/links.js';
import { PERMISSION_TTL_MS, WriteAccess } from '../../src/github/permissions.js';
import type { IssueOutcome } from '../../src/github/outcome.js';
import { verdictOf } from '../../src/harness/classify.js';
import type { TestTransition } from '../../src/results/types.js';
import { candidateVerdict, rank, type Candidate } from '../../src/pipeline/rank.js';

describe('.github/swt.yml App keys', () => {
  it('reads every App key and fills the defaults for the rest', () => {
    const cfg = parseRepoConfig(
      [
        'events: { pull_requests: false }',
        'issues: { auto: false, trigger_label: "needs-repro", comment_on_failure: false, draft_pr: true }',
        'labels: { reproduced: "bug:confirmed" }',
        'gate: { authors: ["renovate[bot]"], mode: all }',
        'budget: { usd: 0.5, wall_seconds: 120 }',
        'image: python:3.12',
      ].join('\n'),
    );
    expect(appSettings(cfg)).toEqual({
      events: { issues: true, pull_requests: false, commands: true },
      issues: { ...DEFAULT_APP_SETTINGS.issues, auto: false, trigger_label: 'needs-repro', comment_on_failure: false, draft_pr: true },
      labels: { reproduced: 'bug:confirmed', not_reproduced: 'not-reproduced' },
      gate: { authors: ['renovate[bot]'], mode: 'all' },
    });
    expect(cfg.budget).toEqual({ usd: 0.5, wall_seconds: 120 });
    expect(appSettings({})).toEqual(DEFAULT_APP_SETTINGS);
  });

  it('names exactly the wrong key, nested or unknown', () => {
    expect(() => checkRepoConfig({ gate: { mode: 'sometimes' } })).toThrow(/^\.github\/swt\.yml: gate\.mode: Invalid option/);
    expect(() => checkRepoConfig({ issues: { atuo: true } })).toThrow('.github/swt.yml: issues.atuo: unknown key');
    expect(checkRepoConfig({ coverage: true }).coverage).toBe(true);
    expect(() => checkRepoConfig({ coverage: 'yes' })).toThrow(/^\.github\/swt\.yml: coverage: /);
    expect(() => checkRepoConfig({ labels: { reproduced: '' } })).toThrow(/^\.github\/swt\.yml: labels\.reproduced: /);
    expect(() => checkRepoConfig({ budget: { usd: -1 } })).toThrow(/^\.github\/swt\.yml: budget\.usd: /);
    expect(() => checkRepoConfig({ gate: { authors: 'bots' } })).toThrow(/^\.github\/swt\.yml: gate\.authors: /);
    expect(() => checkRepoConfig('a string')).toThrow(/^\.github\/swt\.yml: top level: /);
    expect(checkRepoConfig(null)).toEqual({});
  });
});

describe('closing keywords', () => {
  it('reads fixes/closes/resolves with #n, owner/repo#n and URLs of this repository only', () => {
    const body = [
      'Fixes #12 and closes #3.',
      'Resolves: octo/app#7',
      'resolved https://github.com/octo/app/issues/9',
      'fixes other/repo#99, see also #5',
      '```\nfixes #100\n```',
      'This prefixes #44 nothing.',
    ].join('\n');
    expect(closingIssueNumbers(body, 'octo', 'app')).toEqual([3, 7, 9, 12]);
    expect(closingIssueNumbers(null, 'octo', 'app')).toEqual([]);
    expect(closingIssueNumbers('FIXED #2', 'Octo', 'App')).toEqual([2]);
  });
});

const issue = (over: Partial<IssueFacts> = {}): IssueFacts => ({
  number: 1,
  title: 'parse_duration crashes on "1h30m"',
  body: 'Traceback …',
  author: { login: 'alice', type: 'User' },
  locked: false,
  labels: [],
  isPullRequest: false,
  ...over,
});

describe('shouldReproduce: triggers and noise control', () => {
  const s = DEFAULT_APP_SETTINGS;
  it('acts on opened, reopened, the trigger label and a command', () => {
    expect(shouldReproduce({ kind: 'opened' }, issue(), s)).toEqual({ act: true });
    expect(shouldReproduce({ kind: 'reopened' }, issue(), s)).toEqual({ act: true });
    expect(shouldReproduce({ kind: 'labeled', label: 'SWT:Reproduce' }, issue(), s)).toEqual({ act: true });
    expect(shouldReproduce({ kind: 'labeled', label: 'bug' }, issue(), s)).toEqual({ act: false, reason: 'label "bug" is not the trigger label' });
    expect(shouldReproduce({ kind: 'command' }, issue(), s)).toEqual({ act: true });
  });
  it('issues.auto off: only the label or the command', () => {
    const off = appSettings({ issues: { auto: false } });
    expect(shouldReproduce({ kind: 'opened' }, issue(), off)).toEqual({ act: false, reason: 'issues.auto is off: only the trigger label or /swt reproduce' });
    expect(shouldReproduce({ kind: 'labeled', label: 'swt:reproduce' }, issue(), off)).toEqual({ act: true });
    expect(shouldReproduce({ kind: 'command' }, issue(), off)).toEqual({ act: true });
  });
  it('skips questions, feature requests, skip labels, bots, locked issues and PRs on automatic triggers', () => {
    expect(shouldReproduce({ kind: 'opened' }, issue({ title: 'How do I parse weeks?' }), s)).toEqual({ act: false, reason: 'the title reads as a question or a feature request' });
    expect(shouldReproduce({ kind: 'opened' }, issue({ title: 'Feature request: weeks' }), s).act).toBe(false);
    expect(shouldReproduce({ kind: 'opened' }, issue({ labels: ['Question'] }), s)).toEqual({ act: false, reason: 'labelled "Question"' });
    expect(shouldReproduce({ kind: 'opened' }, issue({ author: { login: 'dependabot[bot]', type: 'Bot' } }), s)).toEqual({ act: false, reason: 'opened by a bot (dependabot[bot])' });
    expect(shouldReproduce({ kind: 'opened' }, issue({ locked: true }), s)).toEqual({ act: false, reason: 'the issue is locked' });
    expect(shouldReproduce({ kind: 'command' }, issue({ isPullRequest: true }), s)).toEqual({ act: false, reason: 'a pull request, not an issue' });
    // An explicit maintainer request is honoured even on a question.
    expect(shouldReproduce({ kind: 'command' }, issue({ title: 'Why does it crash?' }), s)).toEqual({ act: true });
    expect(shouldReproduce({ kind: 'opened' }, issue({ title: 'Why does it crash?' }), appSettings({ issues: { skip_questions: false } }))).toEqual({ act: true });
  });
  it('a 1 MB body is refused with a message, whatever the trigger', () => {
    const big = 'x'.repeat(1024 * 1024);
    expect(shouldReproduce({ kind: 'command' }, issue({ body: big }), s)).toEqual({ act: false, reason: 'the body has 1048576 characters', tell: 'too-large' });
  });
  it('events.issues off silences automatic triggers only', () => {
    const off = appSettings({ events: { issues: false } });
    expect(shouldReproduce({ kind: 'opened' }, issue(), off)).toEqual({ act: false, reason: 'events.issues is off' });
    expect(shouldReproduce({ kind: 'command' }, issue(), off)).toEqual({ act: true });
  });
  it('reads questions by a simple rule', () => {
    expect(['Is there a way to parse weeks', '[Question] units', 'feat: weeks', 'RFC: new parser'].map(readsAsQuestion)).toEqual([true, true, true, true]);
    expect(['parse_duration crashes on 1h30m', 'Whatever input crashes', 'Howto page 404s'].map(readsAsQuestion)).toEqual([false, false, false]);
  });
});

describe('commands and permissions', () => {
  it('parses /swt commands at the start of a line, outside code blocks', () => {
    expect(parseCommand('/swt reproduce')).toEqual({ name: 'reproduce' });
    expect(parseCommand('Thanks!\n  /SWT Validate  \nmore')).toEqual({ name: 'validate' });
    expect(parseCommand('/swt')).toEqual({ name: 'help' });
    expect(parseCommand('/swt deploy')).toEqual({ name: 'unknown', word: 'deploy' });
    expect(parseCommand('/swt stats')).toEqual({ name: 'stats' });
    expect(parseCommand('please run /swt reproduce')).toBeNull();
    expect(parseCommand('```\n/swt reproduce\n```')).toBeNull();
    expect(parseCommand(null)).toBeNull();
    // `/swt validate <sha>` names the head it approves: 7 to 40 hex digits, nothing else.
    expect(parseCommand('/swt validate ABCDEF1')).toEqual({ name: 'validate', sha: 'abcdef1' });
    expect(parseCommand('/swt validate main')).toEqual({ name: 'unknown', word: 'validate main' });
    expect(parseCommand('/swt stats now')).toEqual({ name: 'unknown', word: 'stats now' });
  });
  it('write access: admin/maintain/write permission only (the API is asked; author_association is not)', () => {
    expect(['admin', 'maintain', 'write', 'triage', 'read', 'none'].map(permissionGrantsWrite)).toEqual([true, true, true, false, false, false]);
  });
});

const t = (id: string, base: 'pass' | 'fail', head: 'pass' | 'fail', extra: Partial<TestTransition> = {}): TestTransition => ({
  id,
  base,
  head,
  transition: base === 'fail' ? (head === 'pass' ? 'F2P' : 'F2F') : head === 'pass' ? 'P2P' : 'P2F',
  flaky: false,
  ...extra,
});

describe('the gate', () => {
  it('matches authors with * globs, case-insensitively', () => {
    const a = DEFAULT_APP_SETTINGS.gate.authors;
    expect(['dependabot[bot]', 'Copilot', 'copilot', 'devin-ai-integration', 'openhands-agent', 'alice', 'bot-lover'].map((l) => matchesAuthor(l, a))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(isBotAccount({ login: 'Copilot', type: 'Bot' })).toBe(true);
  });
  it('gated authors fail unless the filter passes; others get neutral; mode all and off', () => {
    const g = DEFAULT_APP_SETTINGS.gate;
    expect(gateConclusion('swt-fixer[bot]', true, g)).toEqual({ conclusion: 'success', gated: true });
    expect(gateConclusion('swt-fixer[bot]', false, g)).toEqual({ conclusion: 'failure', gated: true });
    expect(gateConclusion('alice', true, g)).toEqual({ conclusion: 'success', gated: false });
    expect(gateConclusion('alice', false, g)).toEqual({ conclusion: 'neutral', gated: false });
    expect(gateConclusion('alice', false, { ...g, mode: 'all' })).toEqual({ conclusion: 'failure', gated: true });
    expect(gateConclusion('x[bot]', false, { ...g, mode: 'off' })).toEqual({ conclusion: 'neutral', gated: false });
  });
  it('the fix filter over linked issues: all reproduced ones pass, none errored, at least one ran', () => {
    const pass = verdictOf([t('a::t', 'fail', 'pass')]);
    const fail = verdictOf([t('a::t', 'fail', 'fail')]);
    const view = (v: typeof pass) => ({ ...v, base: 'b', head: 'h', durationMs: 1, warnings: [] });
    const ok: IssueOutcome = { issue: 1, kind: 'validated', validation: view(pass), reproduction: { strategy: 's', sha: 'b', testPatch: '' } };
    const bad: IssueOutcome = { issue: 2, kind: 'validated', validation: view(fail), reproduction: { strategy: 's', sha: 'b', testPatch: '' } };
    const none: IssueOutcome = { issue: 3, kind: 'no-reproduction', reason: 'r' };
    const err: IssueOutcome = { issue: 4, kind: 'error', message: 'm' };
    expect([fixFilterPasses([ok]), fixFilterPasses([ok, none]), fixFilterPasses([ok, bad]), fixFilterPasses([ok, err]), fixFilterPasses([none])]).toEqual([true, true, false, false, false]);
  });
  it('a fork changing dependency manifests or test machinery needs approval', () => {
    const none: string[] = [];
    expect(needsApproval({ fork: true, manifests: ['package.json', 'sub/requirements-dev.txt'], machinery: none, approved: false })).toEqual({ manifests: ['package.json', 'sub/requirements-dev.txt'], machinery: [] });
    expect(needsApproval({ fork: true, manifests: none, machinery: ['conftest.py'], approved: false })).toEqual({ manifests: [], machinery: ['conftest.py'] });
    // A file both is named once, as a manifest.
    expect(needsApproval({ fork: true, manifests: ['pyproject.toml'], machinery: ['pyproject.toml', 'tests/conftest.py'], approved: false })).toEqual({ manifests: ['pyproject.toml'], machinery: ['tests/conftest.py'] });
    expect(needsApproval({ fork: true, manifests: ['package.json'], machinery: ['jest.config.js'], approved: true })).toBeNull();
    expect(needsApproval({ fork: false, manifests: ['package.json'], machinery: ['conftest.py'], approved: false })).toBeNull();
    expect(needsApproval({ fork: true, manifests: none, machinery: none, approved: false })).toBeNull();
  });
  it('an approval binds to the head seen before the comment, or the one it names', () => {
    const head = 'abcdef1234567890abcdef1234567890abcdef12';
    expect(approvalOf({ head, headSeenAt: 100, commentAt: 200 })).toEqual({ approve: true });
    expect(approvalOf({ head, headSeenAt: 300, commentAt: 200 })).toEqual({ approve: false, reason: 'pushed-after' });
    expect(approvalOf({ named: 'abcdef1', head, headSeenAt: 100, commentAt: 200 })).toEqual({ approve: true });
    expect(approvalOf({ named: '1234567', head, headSeenAt: 100, commentAt: 200 })).toEqual({ approve: false, reason: 'other-head' });
    // A short prefix cannot approve a later push (a crafted commit can share it); the full sha can.
    expect(approvalOf({ named: 'abcdef1', head, headSeenAt: 300, commentAt: 200 })).toEqual({ approve: false, reason: 'pushed-after' });
    expect(approvalOf({ named: head, head, headSeenAt: 300, commentAt: 200 })).toEqual({ approve: true });
  });
  it("the head's install: a writer's branch as base's, an approved fork or a non-writer's branch without writing the cache, else refused", () => {
    expect(headInstallOf({ fork: false, approved: false, authorWrites: true })).toBe('writer');
    expect(headInstallOf({ fork: false, approved: false, authorWrites: false })).toBe('other');
    expect(headInstallOf({ fork: true, approved: true, authorWrites: true })).toBe('other');
    expect(headInstallOf({ fork: true, approved: false, authorWrites: true })).toBe('refused');
  });
});

describe('rank(issue)', () => {
  it('names the verdict of each validation', () => {
    expect(candidateVerdict(verdictOf([t('a::t', 'fail', 'pass'), t('a::u', 'pass', 'pass')]))).toBe('likely-correct');
    expect(candidateVerdict(verdictOf([t('a::t', 'fail', 'fail', { baseFailure: { kind: 'assertion' }, headFailure: { kind: 'assertion' } })]))).toBe('does-not-fix');
    expect(candidateVerdict(verdictOf([t('a::t', 'fail', 'pass'), t('a::u', 'pass', 'fail')]))).toBe('breaks-reproduction');
    expect(candidateVerdict(verdictOf([t('a::t', 'fail', 'fail', { baseFailure: { kind: 'assertion' }, headFailure: { kind: 'collection' } })]))).toBe('breaks-reproduction');
  });
  it('orders by verdict, then smaller diff, then faster run, then PR number', () => {
    const c = (pr: number, verdict: Candidate['verdict'], diffSize: number, durationMs: number): Candidate => ({ pr, title: '', author: 'a', headSha: 'x', verdict, f2p: 0, failing: 0, durationMs, diffSize });
    const ranked = rank([c(1, 'error', 1, 1), c(2, 'does-not-fix', 1, 1), c(3, 'likely-correct', 40, 5), c(4, 'likely-correct', 10, 9), c(5, 'likely-correct', 10, 3), c(6, 'breaks-reproduction', 1, 1)]);
    expect(ranked.map((r) => r.pr)).toEqual([5, 4, 3, 2, 6, 1]);
  });
});

describe('app.yml', () => {
  it('subscribes to exactly the events the handlers use, with least privilege', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const { HANDLED } = await import('../../src/jobs/payloads.js');
    const manifest = parse(readFileSync('app.yml', 'utf8'));
    const events = [...new Set(Object.values(HANDLED).flatMap((names) => names.map((n) => n.split('.')[0])))].sort();
    expect([...manifest.default_events].sort()).toEqual(events);
    expect(manifest.default_permissions).toEqual({ metadata: 'read', contents: 'read', issues: 'write', pull_requests: 'write', checks: 'write' });
  });
});

describe('write access from the permission API', () => {
  it('asked once a minute per installation, repository and user; a failure is not kept', async () => {
    let now = 0;
    const access = new WriteAccess({ now: () => now });
    const asked: string[] = [];
    const ask = (answer: string) => async () => {
      asked.push(answer);
      return answer;
    };
    const key = { installationId: 1, owner: 'o', repo: 'r', login: 'alice' };
    expect(await access.writes(key, ask('read'))).toBe(false);
    now = PERMISSION_TTL_MS - 1;
    expect(await access.writes(key, ask('write'))).toBe(false);
    expect(await access.writes({ ...key, repo: 'other' }, ask('write'))).toBe(true);
    expect(await access.writes({ ...key, installationId: 2 }, ask('admin'))).toBe(true);
    now = PERMISSION_TTL_MS;
    expect(await access.writes(key, ask('maintain'))).toBe(true);
    await expect(access.writes({ ...key, login: 'bob' }, async () => Promise.reject(new Error('502')))).rejects.toThrow('502');
    expect(await access.writes({ ...key, login: 'bob' }, ask('triage'))).toBe(false);
    expect(asked).toEqual(['read', 'write', 'admin', 'maintain', 'triage']);
  });
});
