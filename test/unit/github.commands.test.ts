import { parseCommand } from '../../src/github/decide.js';
import { mayLeadToWork } from '../../src/github/events.js';
import { visibleText } from '../../src/github/markdown.js';

/** Commands count only where a reader of the comment sees them as a line of text. */
describe('parseCommand: only commands a person sees', () => {
  it.each([
    ['an HTML comment', 'Looks good to me.\n<!--\n/swt validate\n-->'],
    ['an HTML comment on one line', '<!-- /swt validate -->'],
    ['an HTML comment opened inline in a paragraph', 'Thanks for this <!--\n/swt validate\n--> fix.'],
    ['an HTML comment never closed (it runs to the end)', 'LGTM\n\n<!--\n\n/swt validate\n'],
    ['a ``` fence', '```\n/swt validate\n```'],
    ['a ~~~ fence', 'See:\n\n~~~\n/swt validate\n~~~'],
    ['a ``` fence with an info string and a longer closing fence', '````text\n/swt validate\n`````'],
    ['a fence never closed (it runs to the end)', 'LGTM\n\n```\n/swt validate'],
    ['a ~~~ fence holding ``` (the ``` does not close it)', '~~~\n```\n/swt validate\n~~~'],
    ['an indented code block', 'Log:\n\n    /swt validate\n'],
    ['a tab-indented code block', 'Log:\n\n\t/swt validate\n'],
    ['a block quote', '> /swt validate'],
    ['a block quote, lazily continued', '> quoting the author:\n/swt validate'],
    ['a nested quote in a list', '- > /swt validate'],
    ['a folded <details> block', '<details><summary>log</summary>\n\n/swt validate\n\n</details>'],
    ['an HTML block (type 6) without blank lines', '<div>\n/swt validate\n</div>'],
    ['a link\'s title (shown only on hover)', 'see [the log](https://example.invalid/log "build\n/swt validate\n")'],
    ['a link reference definition (not rendered)', '[log]: https://example.invalid/log\n"\n/swt validate\n"'],
    ['a code span over lines', 'run `make\n/swt validate\n` first'],
    ['an inline tag\'s attribute', 'ok <span title="\n/swt validate\n">x</span>'],
    ['a <details> in a list item', '- <details>\n\n  /swt validate\n\n  </details>'],
  ])('a command in %s is ignored', (_what, body) => {
    expect(parseCommand(body)).toBeNull();
  });

  it.each([
    ['after a closed HTML comment', '<!-- note -->\n\n/swt validate', { name: 'validate' }],
    ['after a closed ~~~ fence', '~~~\nlog\n~~~\n/swt reproduce', { name: 'reproduce' }],
    ['after a closed <details>', '<details>\n\n/swt help\n\n</details>\n\n/swt validate abcdef1', { name: 'validate', sha: 'abcdef1' }],
    ['in a paragraph, indented four spaces (a continuation, not code)', 'Thanks!\n    /swt validate', { name: 'validate' }],
    ['on a list item\'s second line', '- thanks\n  /swt stats', { name: 'stats' }],
    ['in the paragraph after one with an inline comment', '🎉 <!-- x -->\n\n/swt validate', { name: 'validate' }],
    ['with Windows line ends', 'LGTM\r\n\r\n/swt validate\r\n', { name: 'validate' }],
    ['before a quote', '/swt reproduce\n\n> /swt validate', { name: 'reproduce' }],
  ])('a command %s counts', (_what, body, command) => {
    expect(parseCommand(body)).toEqual(command);
  });

  it('visibleText keeps the lines, emptying those hidden', () => {
    expect(visibleText('a\n<!--\nb\n-->\n\nc')).toBe('a\n\n\n\n\nc');
    expect(visibleText('plain /swt text')).toBe('plain /swt text');
  });

  // Each is GitHub's largest comment (65,536 characters) with a command line, so that it is parsed.
  // Nested quotes, the slowest, take about 0.3 s alone and took 1.06 s once under CI's full load: the
  // bound is what a super-linear parse would blow through, not a speed target.
  it.each([
    ['unclosed links', '[a]('],
    ['nested quotes', '> '],
    ['nested lists', '- '],
    ['fences and comments', '~~~\n<!--\n'],
    ['code spans', '`a'],
    ['emphasis', '*a '],
  ])('a comment of %s is read in under five seconds', (_what, unit) => {
    const body = `/swt validate\n\n${unit.repeat(70_000 / unit.length)}`.slice(0, 65_536);
    const started = performance.now();
    expect(parseCommand(body)).toEqual({ name: 'validate' });
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

/** The receiver's routing, from the payload alone: what may lead to heavy work goes straight to the heavy lane. */
describe('mayLeadToWork: one queue trip for the deliveries that may start a reproduction or a validation', () => {
  const comment = (body: string) => ({ action: 'created', comment: { body } });
  it.each<[string, string, unknown, boolean]>([
    ['an issue opened', 'issues', { action: 'opened' }, true],
    ['an issue labelled (the trigger label is in the config, read by the job)', 'issues', { action: 'labeled' }, true],
    ['a push to a PR', 'pull_request', { action: 'synchronize' }, true],
    ['a PR closed (a ranking, a merge to record)', 'pull_request', { action: 'closed' }, false],
    ['a re-run of the check', 'check_run', { action: 'rerequested' }, true],
    ['/swt validate', 'issue_comment', comment('LGTM\n/swt validate'), true],
    ['/swt Reproduce', 'issue_comment', comment('/swt Reproduce'), true],
    ['/swt help', 'issue_comment', comment('/swt help'), false],
    ['/swt stats', 'issue_comment', comment('/swt stats'), false],
    ['/swt alone (help)', 'issue_comment', comment('/swt'), false],
  ])('%s', (_what, name, payload, heavy) => {
    expect(mayLeadToWork(name, payload)).toBe(heavy);
  });
});
