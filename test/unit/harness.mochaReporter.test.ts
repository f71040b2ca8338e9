/**
 * The mocha reporter's own logic on events mocha's real runs rarely produce (after-hooks, a leak
 * found in a hook, an error outside any test) and its file loading one file at a time. Real mocha
 * versions run it in test/integration/harness.mocha.test.ts; here it runs in this process against
 * a runner made of an EventEmitter and a stand-in for mocha's class.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { MOCHA_REPORTER_FILE, mochaReporterOneLine } from '../../src/results/formats/mochaReporter.js';
import { parseMochaJsonl } from '../../src/results/formats/mocha.js';

interface FakeSuite {
  title: string;
  root?: boolean;
  file?: string;
  parent?: FakeSuite;
  tests: FakeTest[];
  suites: FakeSuite[];
}
interface FakeTest {
  title: string;
  type: 'test';
  parent: FakeSuite;
  file?: string;
}

function suite(title: string, parent?: FakeSuite, file?: string): FakeSuite {
  const s: FakeSuite = { title, root: !parent, parent, file, tests: [], suites: [] };
  parent?.suites.push(s);
  return s;
}
function test(title: string, parent: FakeSuite): FakeTest {
  const t: FakeTest = { title, type: 'test', parent, file: parent.file };
  parent.tests.push(t);
  return t;
}

let dir: string;
let load: NodeJS.Require;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swt-reporter-unit-'));
  load = createRequire(path.join(dir, 'x.js'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A fresh copy of the reporter (its module state is per file) in its own out dir. */
function reporter(): { Reporter: new (runner: EventEmitter) => unknown; records: () => Array<Record<string, any>>; report: () => string } {
  const out = fs.mkdtempSync(path.join(dir, 'out-'));
  fs.writeFileSync(path.join(out, MOCHA_REPORTER_FILE), `${mochaReporterOneLine()}\n`);
  const Reporter = load(path.join(out, MOCHA_REPORTER_FILE));
  const report = () => fs.readFileSync(path.join(out, 'mocha.jsonl'), 'utf8');
  return { Reporter, report, records: () => report().trim().split('\n').map((l) => JSON.parse(l)) };
}

function quietly<T>(f: () => T): T {
  const write = process.stdout.write;
  (process.stdout as { write: unknown }).write = () => true;
  try {
    return f();
  } finally {
    process.stdout.write = write;
  }
}

describe("swt-bot's mocha reporter", () => {
  it('a failed "before each" hook fails the tests it kept from running, not the ones that passed before it', () => {
    const { Reporter, records } = reporter();
    const root = suite('');
    const s = suite('s', root, '/testbed/test/a.js');
    const t1 = test('one', s);
    test('two', s);
    test('three', s);
    const runner = new EventEmitter();
    quietly(() => {
      new Reporter(runner);
      runner.emit('pass', t1);
      runner.emit('fail', { type: 'hook', title: '"before each" hook for "two"', parent: s, ctx: { currentTest: s.tests[1] } }, new Error('db down'));
      runner.emit('end');
    });
    const tests = records().filter((r) => r.event === 'test');
    expect(tests.map((r) => [r.title.join(' > '), r.state, r.hook])).toEqual([
      ['s > one', 'passed', undefined],
      ['s > two', 'failed', '"before each" hook'],
      ['s > three', 'failed', '"before each" hook'],
    ]);
  });

  it('a failed "after all" hook fails the tests of its suite; "after each" the test it ran after', () => {
    const { Reporter, report } = reporter();
    const root = suite('');
    const a = suite('a', root, '/testbed/test/a.js');
    const b = suite('b', root, '/testbed/test/b.js');
    const a1 = test('one', a);
    const a2 = test('two', a);
    const b1 = test('one', b);
    const runner = new EventEmitter();
    quietly(() => {
      new Reporter(runner);
      runner.emit('pass', a1);
      runner.emit('pass', a2);
      runner.emit('fail', { type: 'hook', title: '"after all" hook', parent: a }, new Error('teardown broke'));
      runner.emit('pass', b1);
      runner.emit('fail', { type: 'hook', title: '"after each" hook for "one"', parent: b, ctx: { currentTest: b1 } }, new Error('cleanup broke'));
      runner.emit('end');
    });
    const parsed = parseMochaJsonl(report(), { files: ['test/a.js', 'test/b.js'], root: '/testbed' });
    expect(parsed.tests.map((t) => [t.id, t.outcome, t.message])).toEqual([
      ['test/a.js > a > one', 'failed', '"after all" hook failed: teardown broke'],
      ['test/a.js > a > two', 'failed', '"after all" hook failed: teardown broke'],
      ['test/b.js > b > one', 'failed', '"after each" hook failed: cleanup broke'],
    ]);
    expect(parsed.complete).toBe(true);
  });

  it('a leak found after a hook, a hook with no test left, an error outside any test: recorded, no test failed for them', () => {
    const { Reporter, records } = reporter();
    const root = suite('');
    const s = suite('s', root, '/testbed/test/a.js');
    const t = test('one', s);
    const runner = new EventEmitter();
    quietly(() => {
      new Reporter(runner);
      runner.emit('fail', { type: 'hook', title: '"before all" hook', parent: s }, new Error("global leak(s) detected: 'x'"));
      runner.emit('pass', t);
      runner.emit('fail', { type: 'hook', title: '"after all" hook', parent: suite('empty', root, '/testbed/test/b.js') }, new Error('nothing here'));
      runner.emit('fail', { title: 'Uncaught error outside test suite', parent: root }, new Error('stray'));
      runner.emit('end');
    });
    expect(records().map((r) => [r.event, r.state ?? r.err?.message])).toEqual([
      ['start', undefined],
      ['hook', "global leak(s) detected: 'x'"],
      ['test', 'passed'],
      ['hook', 'nothing here'],
      ['error', 'stray'],
      ['end', undefined],
    ]);
  });

  it('loads test files one at a time when required first: a file that throws is recorded, the others load, the exit code counts it', () => {
    // A stand-in for mocha's class, where the reporter looks for it: a module ending in lib/mocha.js.
    const lib = path.join(dir, 'node_modules', 'mocha-alias', 'lib');
    fs.mkdirSync(lib, { recursive: true });
    fs.writeFileSync(
      path.join(lib, 'mocha.js'),
      [
        'function Mocha(files) { this.files = files; this.loaded = []; }',
        'Mocha.Runner = function () {};',
        'Mocha.prototype.loadFiles = function (fn) {',
        '  var self = this;',
        '  this.files.forEach(function (f) { require(f); self.loaded.push(f); });',
        '  if (fn) fn();',
        '};',
        'module.exports = Mocha;',
      ].join('\n'),
    );
    const good = path.join(dir, 'good.js');
    const bad = path.join(dir, 'bad.js');
    fs.writeFileSync(good, 'module.exports = 1;\n');
    fs.writeFileSync(bad, "throw new Error('cannot load');\n");
    const Mocha = load(path.join(lib, 'mocha.js'));
    const { Reporter, records } = reporter();
    const m = new Mocha([bad, good]);
    let called = false;
    const stderr = process.stderr.write;
    (process.stderr as { write: unknown }).write = () => true;
    try {
      m.loadFiles(() => (called = true));
    } finally {
      process.stderr.write = stderr;
    }
    expect(called).toBe(true);
    expect(m.files).toEqual([good]);
    expect(m.loaded).toEqual([good]);
    const runner = Object.assign(new EventEmitter(), { failures: 0 });
    quietly(() => {
      new Reporter(runner);
      runner.emit('end');
    });
    expect(runner.failures).toBe(1);
    expect(records()[0]).toMatchObject({ event: 'load-error', file: bad, err: { message: 'cannot load' } });
  });
});
