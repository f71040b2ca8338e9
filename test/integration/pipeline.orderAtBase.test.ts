/**
 * A reproduction that fails at base only after the test before it, every time, as SWE-bench's
 * sphinx-8721 does (`make html epub`: viewcode's epub test fails after the html one has left its
 * modules behind, and passes alone). The confirmation rounds run it alone and see it pass; its
 * file then runs again in order on base, fails it again, and the test is F→P, with why. A failure
 * in order that does not come back stays flaky. Real pytest in a container.
 */
import { validate } from '../../src/pipeline/validate.js';
import { renderText } from '../../src/harness/render.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

// Pages of the modules read so far: the epub builder must make none unless asked (the issue).
const PAGES = (fixed: boolean) => `_modules = {}


def read(builder, epub=False):
    if builder == "epub" and not epub:
        return
    _modules["spam"] = "source"


def pages(builder, epub=False):
${fixed ? '    if builder == "epub" and not epub:\n        return []\n' : ''}    return sorted(_modules)
`;
const OLD_TESTS = `from viewpages import pages, read


def test_html():
    read("html")
    assert pages("html") == ["spam"]
`;
const NEW_TEST = `

def test_epub_default():
    read("epub")
    assert pages("epub") == []
`;
// The same, but the module state that fails it at base is there only in one run of three.
const CHANCE = (fixed: boolean) => PAGES(fixed).replace('_modules["spam"] = "source"', 'import os\n    if not os.path.exists("/tmp/once"):\n        open("/tmp/once", "w").close()\n        _modules["spam"] = "source"');

function project(code: (fixed: boolean) => string) {
  const repo = createGitRepo({ 'viewpages.py': code(false), 'tests/test_viewpages.py': OLD_TESTS });
  const base = repo.sha;
  const head = repo.commit({ 'viewpages.py': code(true) }, 'no module pages for epub');
  repo.git('checkout', '-q', base);
  const withTests = repo.commit({ 'tests/test_viewpages.py': OLD_TESTS + NEW_TEST }, 'test');
  return { repo: repo.path, base, head, testPatch: repo.git('diff', base, withTests) };
}

const RUN = { image: 'python:3.11', install: '', testCmd: 'python3 -m pytest -p no:cacheprovider {files}' };
const NEW = 'tests/test_viewpages.py::test_epub_default';

afterAll(() => {
  cleanupGitRepos();
  expect(containersOfOursOnceRetired()).toBe('');
});

describe('a failure at base that only its file order brings (real pytest)', () => {
  it('fails in order every time, passes alone: F→P, S, and the verdict says why', async () => {
    const v = await validate(createDockerSandbox(), { ...project(PAGES), ...RUN });
    expect(v.tests.find((t) => t.id === NEW)).toMatchObject({
      transition: 'F2P',
      flaky: false,
      orderDependent: 'at base, fails only after tests/test_viewpages.py::test_html',
      runs: { base: { runs: 5, failed: 3 }, head: { runs: 3, failed: 0 } },
    });
    expect(v).toMatchObject({ success: true, likelyCorrect: true });
    expect(renderText(v)).toContain("at base, fails only after tests/test_viewpages.py::test_html, in its file's order every run (alone it passes)");
  }, 600_000);

  it('a failure in order that the file does not bring again: flaky, not a reproduction', async () => {
    const v = await validate(createDockerSandbox(), { ...project(CHANCE), ...RUN });
    expect(v.tests.find((t) => t.id === NEW)).toMatchObject({ flaky: true, baseFlaky: true });
    expect(v.tests.find((t) => t.id === NEW)?.orderDependent).toBeUndefined();
    expect(v.success).toBe(false);
  }, 600_000);
});
