/**
 * Which config a run uses: the one its caller read (the App reads `.github/swt.yml` of the default
 * branch through `context.config`, with an organisation's `_extends` merged), or else the file at
 * the base commit (the CLI). Real git repository, real environment image.
 */
import { prepareContext } from '../../src/pipeline/context.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { isSwtError } from '../../src/util/errors.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo } from '../helpers/gitRepo.js';

let sandbox: Sandbox;

beforeAll(() => {
  sandbox = createDockerSandbox();
});

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  expectNothingLeftBehind();
});

describe('the config of a run', () => {
  it("is the caller's when given (the base's own file is not read again); else the file at base", async () => {
    // At base, a file that only says where the rest comes from (as with `_extends`), broken besides.
    const repo = createGitRepo({ '.github/swt.yml': '_extends: .github\nimage: [node\n', 'test_x.py': 'def test_x():\n    assert True\n' });
    const given = { image: 'python:3.11', install: '', test_command: 'python -m pytest -q {files}', limits: { timeout_seconds: 30 } };
    const ctx = await prepareContext(sandbox, { repo: repo.path, base: repo.sha, config: given });
    expect(ctx.config).toEqual(given);
    expect(ctx.baseImage).toBe('python:3.11');
    expect(ctx.runner.kind).toBe('pytest');

    const e = await prepareContext(sandbox, { repo: repo.path, base: repo.sha }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isSwtError(e, 'BAD_CONFIG')).toBe(true);
    expect((e as Error).message).toMatch(/^\.github\/swt\.yml:\d+: not valid YAML/);
  }, 300_000);
});
