/**
 * The snippet strategy's tests run in each runner it writes for, on real containers: small
 * repositories with the bug a real issue reports (issue texts from test/unit/fixtures/issues), the
 * test the strategy writes in the repository's own style, verified on base, then F→P under the fix.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { IssueInput } from '../../src/generation/types.js';
import { reproduceIssue } from '../../src/pipeline/reproduce.js';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

function issue(name: string): IssueInput {
  const c = parse(readFileSync(new URL(`../unit/fixtures/issues/${name}.yaml`, import.meta.url), 'utf8'));
  return { title: c.title, body: c.body ?? '' };
}

interface RunnerCase {
  runner: string;
  issue: string;
  testCmd: string;
  base: Record<string, string>;
  fix: Record<string, string>;
  /** The test file the strategy writes, and a line it must hold. */
  path: string;
  line: string;
}

const CASES: RunnerCase[] = [
  {
    runner: 'mocha (CommonJS, no semicolons)',
    issue: 'node-validator-2',
    testCmd: 'npx mocha {files}',
    base: {
      // mocha's npm version (not an address).
      'package.json': '{"name": "node-validator", "version": "1.0.0", "main": "index.js", "devDependencies": {"mocha": "10.8.2"}}\n',
      'index.js': 'exports.isEmail = function (str) {\n  return /^\\S+@\\S+$/.test(str)\n}\n',
      'test/index.js': "var assert = require('assert')\nvar validator = require('../')\n\ndescribe('isEmail', function () {\n  it('accepts a plain address', function () {\n    assert.strictEqual(validator.isEmail('a@b.co'), true)\n  })\n})\n",
    },
    fix: { 'index.js': 'exports.isEmail = function (str) {\n  return /^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/.test(str)\n}\n' },
    path: 'test/e-mail-test-failed.js',
    line: "    assert.notStrictEqual(validator.isEmail('test@abc'), true)",
  },
  {
    runner: 'tape',
    issue: 'deepmerge-65',
    testCmd: 'npx tape {files}',
    base: {
      'package.json': '{"name": "deepmerge", "version": "1.0.0", "main": "index.js", "devDependencies": {"tape": "5.9.0"}}\n',
      'index.js':
        "function isObject(x) {\n  return x !== null && typeof x === 'object'\n}\n\nfunction deepmerge(target, source) {\n  var out = Array.isArray(target) ? target.slice() : Object.assign({}, target)\n  Object.keys(source).forEach(function (key) {\n    if (isObject(source[key]) && isObject(target[key])) out[key] = deepmerge(target[key], source[key])\n    else out[key] = source[key]\n  })\n  return out\n}\n\nmodule.exports = deepmerge\n",
      'test/merge.js': "var merge = require('../')\nvar test = require('tape')\n\ntest('adds keys', function (t) {\n  t.deepEqual(merge({ a: 1 }, { b: 2 }), { a: 1, b: 2 })\n  t.end()\n})\n",
    },
    fix: {
      'index.js':
        "function isObject(x) {\n  return x !== null && typeof x === 'object'\n}\n\nfunction deepmerge(target, source) {\n  var out = Array.isArray(target) ? target.slice() : Object.assign({}, target)\n  Object.keys(source).forEach(function (key) {\n    var same = isObject(source[key]) && isObject(target[key]) && Array.isArray(source[key]) === Array.isArray(target[key])\n    out[key] = same ? deepmerge(target[key], source[key]) : source[key]\n  })\n  return out\n}\n\nmodule.exports = deepmerge\n",
    },
    path: 'test/array-to-object-not-working-as-expected.js',
    line: "  t.deepEqual(result.prop, { name: 'foo', value: 'bar' })",
  },
  {
    runner: 'tap (ESM, a When/Expected/Actual list)',
    issue: 'lodash-3037',
    testCmd: 'npx tap {files}',
    base: {
      'package.json': '{"name": "lodash-lite", "version": "1.0.0", "type": "module", "exports": "./index.js", "devDependencies": {"tap": "16.3.9"}}\n',
      'index.js':
        "const words = (s) => s.match(/[A-Z]?[a-z]+|[A-Z]+|\\d+/g) ?? [];\n\nexport function camelCase(s) {\n\treturn words(s).map((w, i) => (i ? w[0].toUpperCase() + w.slice(1).toLowerCase() : w.toLowerCase())).join('');\n}\n\nexport default {camelCase};\n",
      'test/camel-case.js': "import t from 'tap';\nimport _ from '../index.js';\n\nt.test('camelCase', t => {\n\tt.equal(_.camelCase('foo-bar'), 'fooBar');\n\tt.end();\n});\n",
    },
    fix: {
      'index.js':
        "const words = (s) => s.split(/[-_\\s]+/).filter(Boolean);\n\nexport function camelCase(s) {\n\treturn words(s).map((w, i) => (i ? w[0].toUpperCase() + w.slice(1).toLowerCase() : w.toLowerCase())).join('');\n}\n\nexport default {camelCase};\n",
    },
    path: 'test/camelcase-when-string-contains-numbers.js',
    line: "\tt.equal(_.camelCase('i18n-locales'), 'i18nLocales');",
  },
  {
    runner: 'node:test (ESM)',
    issue: 'camelcase-107',
    testCmd: 'node --test {files}',
    base: {
      'package.json': '{"name": "camelcase", "version": "1.0.0", "type": "module", "exports": "./index.js"}\n',
      'index.js':
        "export default function camelCase(input, options = {}) {\n  const words = input.split(/[-_\\s]+/).filter(Boolean);\n  const out = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');\n  return options.pascalCase ? out[0].toUpperCase() + out.slice(1) : out;\n}\n",
      'test/camelcase.test.js': "import test from 'node:test';\nimport assert from 'node:assert';\nimport camelCase from '../index.js';\n\ntest('camelCase', () => {\n  assert.strictEqual(camelCase('foo-bar'), 'fooBar');\n});\n",
    },
    fix: {
      'index.js':
        "export default function camelCase(input, options = {}) {\n  const words = input.split(/[-_\\s]+/).filter(Boolean);\n  const out = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('').replace(/(\\d)([a-z])/g, (_m, d, c) => d + c.toUpperCase());\n  return options.pascalCase ? out[0].toUpperCase() + out.slice(1) : out;\n}\n",
    },
    path: 'test/pascal-case-broken-when-string-ends-with.test.js',
    line: "  assert.strictEqual(camelcase('a1b', { pascalCase: true }), 'A1B');",
  },
  {
    runner: 'pytest (an exception and its message)',
    issue: 'tabulate-434',
    testCmd: 'python3 -m pytest -p no:cacheprovider {files}',
    base: {
      'pyproject.toml': '[project]\nname = "tabulate"\nversion = "0.1"\n',
      'tabulate/__init__.py':
        "def _padded(values, count, default):\n    return values + [default] * (count - len(values))\n\n\ndef tabulate(tabular_data, headers=(), rowalign=None):\n    rows = [[str(c) for c in row] for row in tabular_data]\n    _padded(rowalign or [], len(rows), 'top')\n    return '\\n'.join(' '.join(row) for row in rows)\n",
      'test/test_api.py': "from tabulate import tabulate\n\n\ndef test_plain():\n    assert tabulate([[1, 2]]) == '1 2'\n",
    },
    fix: {
      'tabulate/__init__.py':
        "def _padded(values, count, default):\n    return list(values) + [default] * (count - len(values))\n\n\ndef tabulate(tabular_data, headers=(), rowalign=None):\n    rows = [[str(c) for c in row] for row in tabular_data]\n    _padded(rowalign or [], len(rows), 'top')\n    return '\\n'.join(' '.join(row) for row in rows)\n",
    },
    path: 'test/test_tabulate_raises_typeerror_when_rowalign.py',
    line: '        assert \'can only concatenate tuple (not "list") to tuple\' not in str(error)',
  },
  {
    runner: 'pytest (a bare call in prose, resolved through the tests\' imports)',
    issue: 'mongoengine-extras-7',
    testCmd: 'python3 -m pytest -p no:cacheprovider {files}',
    base: {
      'setup.py': "from setuptools import setup\nsetup(name='mongoengine-extras', packages=['mongoengine_extras'])\n",
      'mongoengine_extras/__init__.py': '',
      'mongoengine_extras/utils.py': "import re\n\n\ndef slugify(value):\n    value = re.sub(r'[^a-z0-9\\s-]', '', value.lower())\n    return re.sub(r'\\s+', '-', value.strip())\n",
      'tests/test_utils.py': "from mongoengine_extras.utils import slugify\n\n\ndef test_spaces():\n    assert slugify('a b') == 'a-b'\n",
    },
    fix: {
      'mongoengine_extras/utils.py':
        "import re\nimport unicodedata\n\n\ndef slugify(value):\n    value = unicodedata.normalize('NFKD', value).encode('ascii', 'ignore').decode('ascii')\n    value = re.sub(r'[^a-z0-9\\s-]', '', value.lower())\n    return re.sub(r'\\s+', '-', value.strip())\n",
    },
    path: 'tests/test_slugify_is_not_accurate.py',
    line: "    assert slugify(u\"test del ñandú\") == u'test-del-nandu'",
  },
];

describe('snippet tests in every runner (real containers)', () => {
  let sandbox: Sandbox;
  beforeAll(() => {
    sandbox = createDockerSandbox();
  });
  afterAll(() => {
    cleanupGitRepos();
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it.each(CASES.map((c) => [c.runner, c] as const))('%s: written in the repository\'s style, fails on base, F→P under the fix', async (_runner, c) => {
    const repo = createGitRepo(c.base);
    const base = repo.sha;
    const head = repo.commit(c.fix, 'fix');
    const rep = await reproduceIssue(sandbox, { repo: repo.path, base, testCmd: c.testCmd, issue: issue(c.issue), generation: { strategy: 'snippet', llm: null } });
    expect({ status: rep.status, reason: rep.reason }).toEqual({ status: 'reproduced', reason: rep.reason });
    expect(rep.testPatch).toContain(`+++ b/${c.path}\n`);
    expect(rep.testPatch).toContain(`\n+${c.line}\n`);
    const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: rep.testPatch, testCmd: c.testCmd });
    expect(v.tests.map((t) => t.transition)).toEqual(['F2P']);
    expect(v.success).toBe(true);
  });
});
