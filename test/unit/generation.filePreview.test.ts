import { filePreamble } from '../../src/generation/filePreview.js';

const file = (content: string) => ({ path: 't', content, truncated: false });

describe('filePreamble: a test file shown to a small model by its imports', () => {
  it('Python: shebang, a docstring over several lines, __future__ and imports; not the parametrize table', () => {
    const content = '#!/usr/bin/env python\n\n"""Tests for\nfilesize humanizing."""\n\nfrom __future__ import annotations\n\nimport pytest\n\nimport humanize\n\n\n@pytest.mark.parametrize(\n    "test_args, expected",\n    [([300], "300 Bytes")],\n)\ndef test_naturalsize(test_args, expected):\n    assert humanize.naturalsize(*test_args) == expected\n';
    expect(filePreamble(file(content))).toEqual({
      path: 't',
      content: '#!/usr/bin/env python\n\n"""Tests for\nfilesize humanizing."""\n\nfrom __future__ import annotations\n\nimport pytest\n\nimport humanize',
      truncated: true,
    });
  });

  it('JavaScript: ES imports, not the fixture object after them', () => {
    const content = "import * as vm from 'vm';\nimport * as assert from 'uvu/assert';\nimport { uneval, stringify } from '../index.js';\n\nclass Custom {\n\tconstructor(value) {}\n}\n\nconst fixtures = {\n\tbasics: [],\n};\n";
    expect(filePreamble(file(content)).content).toBe("import * as vm from 'vm';\nimport * as assert from 'uvu/assert';\nimport { uneval, stringify } from '../index.js';");
  });

  it('CommonJS requires, destructured, with use strict', () => {
    const content = "'use strict';\n\nconst assert = require('assert');\nconst { parse } = require('../');\n\ndescribe('parse', () => {});\n";
    expect(filePreamble(file(content)).content).toBe("'use strict';\n\nconst assert = require('assert');\nconst { parse } = require('../');");
  });

  it("Go: the package clause and a bracketed import block's lines", () => {
    const content = 'package semver\n\nimport (\n\t"reflect"\n\t"testing"\n)\n\nfunc TestNewConstraint(t *testing.T) {\n}\n';
    expect(filePreamble(file(content)).content).toBe('package semver\n\nimport (\n\t"reflect"\n\t"testing"\n)');
  });

  it('Java and PHP: package, namespace and use lines', () => {
    expect(filePreamble(file('package org.json.junit;\n\nimport static org.junit.Assert.*;\nimport org.junit.Test;\n\npublic class CDLTest {\n}\n')).content).toBe('package org.json.junit;\n\nimport static org.junit.Assert.*;\nimport org.junit.Test;');
    expect(filePreamble(file('<?php\n\nnamespace Composer\\Semver;\n\nuse PHPUnit\\Framework\\TestCase;\n\nclass CompilingMatcherTest extends TestCase\n{\n}\n')).content).toBe('<?php\n\nnamespace Composer\\Semver;\n\nuse PHPUnit\\Framework\\TestCase;');
  });

  it('Ruby: require and require_relative', () => {
    expect(filePreamble(file("require 'spec_helper'\nrequire_relative '../lib/paint'\n\ndescribe Paint do\nend\n")).content).toBe("require 'spec_helper'\nrequire_relative '../lib/paint'");
  });

  it('a file that is all imports is shown whole; one that opens with code shows nothing', () => {
    const whole = file('import pytest\nimport humanize\n');
    expect(filePreamble(whole)).toBe(whole);
    expect(filePreamble(file('test("a", () => {});\n'))).toEqual({ path: 't', content: '', truncated: true });
  });

  it('at most `max` lines', () => {
    const content = Array.from({ length: 40 }, (_, i) => `import m${i}`).join('\n') + '\nx = 1\n';
    expect(filePreamble(file(content), 5).content.split('\n')).toHaveLength(5);
  });
});
