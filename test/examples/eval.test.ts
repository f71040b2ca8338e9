import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePredictions } from '../../src/eval/instances.js';
import { resolveRepoPath } from '../../src/eval/repos.js';
import { runEval } from '../../src/eval/runEval.js';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { examplesDir, loadExampleInstances } from '../helpers/examples.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

/** Tests that check only unrelated behaviour that already works, one per example repository. */
const UNRELATED: Record<string, { path: string; body: string }> = {
  'andialbrecht/sqlparse': {
    path: 'tests/test_swt_unrelated.py',
    body: "import sqlparse\n\n\ndef test_keywords_upper():\n    assert sqlparse.format('select 1', keyword_case='upper') == 'SELECT 1'\n",
  },
  'jshttp/cookie': {
    path: 'src/swt-unrelated.spec.ts',
    body: "import { describe, expect, it } from 'vitest';\nimport { parseCookie } from './index';\n\ndescribe('unrelated', () => {\n  it('parses a simple pair', () => {\n    expect(parseCookie('a=b').a).toBe('b');\n  });\n});\n",
  },
  'pillarjs/send': {
    path: 'test/swt-unrelated.js',
    body: "var assert = require('assert')\nvar send = require('..')\n\ndescribe('unrelated', function () {\n  it('exports a function', function () {\n    assert.strictEqual(typeof send, 'function')\n  })\n})\n",
  },
  'pillarjs/path-to-regexp': {
    path: 'src/swt-unrelated.spec.ts',
    body: "import { pathToRegexp } from './index';\n\ndescribe('unrelated', () => {\n  it('matches a static path', () => {\n    expect(pathToRegexp('/foo').test('/foo')).toBe(true);\n  });\n});\n",
  },
};

function newFilePatch(path: string, body: string): string {
  const lines = body.replace(/\n$/, '').split('\n');
  return [`diff --git a/${path} b/${path}`, 'new file mode 100644', '--- /dev/null', `+++ b/${path}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`), ''].join('\n');
}


describe('swt eval on the real example instances (real containers)', () => {
  const instances = loadExampleInstances();
  const repos = join(examplesDir(), 'repos');
  let out: string;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'swt-examples-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('gold tests: S = 100 and F2P = 100 on every instance', async () => {
    const sandbox = await createDockerSandbox();
    const { results, report } = await runEval(sandbox, { instances, source: { kind: 'gold' }, repos, out: join(out, 'gold'), concurrency: 2 });
    for (const r of results) {
      expect({ id: r.instance_id, error: r.error, success: r.success }).toEqual({ id: r.instance_id, error: undefined, success: true });
      const f2p = r.tests.filter((t) => t.transition === 'F2P').map((t) => t.id);
      const expected = instances.find((i) => i.instance_id === r.instance_id)!.FAIL_TO_PASS;
      expect(f2p.length).toBeGreaterThanOrEqual(expected.length);
    }
    expect(report).toMatchObject({ instances: instances.length, errors: 0, W: 100, S: 100, F2X: 100, F2P: 100 });
    const written = JSON.parse(await readFile(join(out, 'gold', 'report.json'), 'utf8'));
    expect(written).toEqual(report);
    const rows = (await readFile(join(out, 'gold', 'results.jsonl'), 'utf8')).trim().split('\n');
    expect(rows).toHaveLength(instances.length);
  });

  it('empty predictions: S = 0', async () => {
    const sandbox = await createDockerSandbox();
    const { report } = await runEval(sandbox, { instances, source: { kind: 'empty' }, repos, out: join(out, 'empty') });
    expect(report).toMatchObject({ instances: instances.length, errors: 0, W: 0, S: 0, F2X: 0, F2P: 0, P2P: 0, dC: null });
  });

  it('tests of unrelated, already-working behaviour come out P2P, not success', async () => {
    const lines = instances.map((i) => {
      const t = UNRELATED[i.repo];
      return JSON.stringify({ instance_id: i.instance_id, model_patch: newFilePatch(t.path, t.body), model_name_or_path: 'unrelated' });
    });
    const sandbox = await createDockerSandbox();
    const { results, report } = await runEval(sandbox, {
      instances,
      source: { kind: 'file', predictions: parsePredictions(lines.join('\n')) },
      repos,
      out: join(out, 'unrelated'),
      concurrency: 2,
    });
    for (const r of results) {
      expect({ id: r.instance_id, error: r.error, success: r.success }).toEqual({ id: r.instance_id, error: undefined, success: false });
      expect(r.tests.length).toBeGreaterThan(0);
      expect(r.tests.every((t) => t.transition === 'P2P')).toBe(true);
    }
    expect(report).toMatchObject({ W: 100, S: 0, F2X: 0, F2P: 0, P2P: 100 });
  });

  it('fix filter: the incorrect patch of every instance is not judged likely correct, the gold one is', async () => {
    const sandbox = await createDockerSandbox();
    for (const inst of instances.filter((i) => i.incorrect_patch)) {
      const repo = await resolveRepoPath(repos, inst.repo);
      const common = { repo, base: inst.base_commit, testPatch: inst.test_patch, image: inst.image, install: inst.install, testCmd: inst.test_cmd };
      const wrong = await validate(sandbox, { ...common, fixPatch: inst.incorrect_patch! });
      expect({ id: inst.instance_id, likelyCorrect: wrong.likelyCorrect, success: wrong.success }).toEqual({
        id: inst.instance_id,
        likelyCorrect: false,
        success: false,
      });
      const right = await validate(sandbox, { ...common, fixPatch: inst.patch });
      expect(right.likelyCorrect).toBe(true);
    }
  });
});
