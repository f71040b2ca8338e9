import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';

// Issue 39: a Django project runs its tests with `manage.py test` (settings, a test database);
// pytest there stops at "settings are not configured", and Django's `tests.py` is no test file to
// pytest. Real Django 4.2.16 from PyPI through the egress proxy, real containers. Ground truth from
// a plain `docker run` of the same project (swt-base/python:3.11, pip install -r requirements.txt,
// `python3 manage.py test --verbosity 2 polls.tests`): base `test_share_of_no_votes ... ERROR`
// (ZeroDivisionError), head `... ok`, `test_share ... ok` on both.

const MANAGE = `#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
`;
const SETTINGS = `SECRET_KEY = "not-a-secret"
INSTALLED_APPS = ["django.contrib.contenttypes", "polls"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
`;
const MODELS = (fixed: boolean) => `from django.db import models


class Question(models.Model):
    text = models.CharField(max_length=200)
    votes = models.IntegerField(default=0)

    def share(self, total):
        """This question's share of \`total\` votes, in percent."""
        return round(100 * self.votes / total)${fixed ? ' if total else 0' : ''}
`;
const TESTS = `from django.test import TestCase

from .models import Question


class QuestionTests(TestCase):
    def test_share(self):
        q = Question.objects.create(text="tea?", votes=1)
        self.assertEqual(q.share(4), 25)
`;
const TEST_PATCH = [
  'diff --git a/polls/tests.py b/polls/tests.py',
  '--- a/polls/tests.py',
  '+++ b/polls/tests.py',
  '@@ -7,3 +7,7 @@ class QuestionTests(TestCase):',
  '     def test_share(self):',
  '         q = Question.objects.create(text="tea?", votes=1)',
  '         self.assertEqual(q.share(4), 25)',
  '+',
  '+    def test_share_of_no_votes(self):',
  '+        q = Question.objects.create(text="coffee?")',
  '+        self.assertEqual(q.share(0), 0)',
  '',
].join('\n');

afterAll(cleanUpEcosystemRuns);

describe("Django's runner (real containers, Django from PyPI)", () => {
  it('a Django project with manage.py: `manage.py test` with the touched module as its label, ids as Django prints them, the new test F→P', async () => {
    const repo = createGitRepo({
      'manage.py': MANAGE,
      'requirements.txt': 'Django==4.2.16\n',
      'mysite/__init__.py': '',
      'mysite/settings.py': SETTINGS,
      'polls/__init__.py': '',
      'polls/models.py': MODELS(false),
      'polls/tests.py': TESTS,
    });
    const base = repo.sha;
    const head = repo.commit({ 'polls/models.py': MODELS(true) }, 'a question with no votes has no share');
    const out = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(out.runner).toBe('django');
    expect(transitions(out)).toEqual([
      ['test_share (polls.tests.QuestionTests.test_share)', 'P2P'],
      ['test_share_of_no_votes (polls.tests.QuestionTests.test_share_of_no_votes)', 'F2P'],
    ]);
    expect(out.success).toBe(true);
    // Confirmation reran the moving test alone, by its label.
    expect(out.confirmation?.tests).toEqual(['test_share_of_no_votes (polls.tests.QuestionTests.test_share_of_no_votes)']);
    expect(JSON.stringify(out.runs)).toContain('ZeroDivisionError: division by zero');
  }, 900_000);
});
