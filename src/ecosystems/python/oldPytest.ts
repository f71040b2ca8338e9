/**
 * pytest before 3.0 (a 2015 commit pins 2.8) has neither `--continue-on-collection-errors` nor
 * `-o/--override-ini`, which every run passes, and refuses the whole command for them; on Python
 * 3.9 and later (all an offline build has for old code) it cannot start at all. Where such a pytest
 * is installed, a plugin the command writes to /tmp and enables through PYTEST_ADDOPTS (read by
 * pytest since 2.7) takes the options and does without (such a pytest stops at a collection
 * error, as it always did, and has one JUnit format), and lets it start; before 3.0.7, it lets it
 * collect a unittest class on Python 3.7+. Pure.
 */
import { writeLines } from '../command.js';
import { pytestPluginVariables } from './rounds.js';

export const OLD_PYTEST_DIR = '/tmp/swt-pytest';
export const OLD_PYTEST_PLUGIN = 'swt_old_pytest';

/** One line per item (printf writes it); Python 2 and 3 alike. */
export const OLD_PYTEST_SOURCE = `# swt-bot: what an old pytest lacks to run as swt-bot runs it, on a Python newer than it knew.
import sys

import pytest

_OLD = int(pytest.__version__.split(".")[0]) < 3


def pytest_addoption(parser):
    if not _OLD:
        return
    # The options every run passes, taken and left unused. _addoption: a plugin's lowercase short
    # option (-o) is refused by the public addoption.
    group = parser.getgroup("swt-bot")
    group._addoption("--continue-on-collection-errors", action="store_true", dest="swt_continue_on_collection_errors")
    group._addoption("-o", "--override-ini", action="append", dest="swt_override_ini")


if _OLD and sys.version_info >= (3, 9):
    # Python 3.9's assert raises the builtin AssertionError itself, where these versions put a
    # subclass in its name, then check that assert works by catching that name: it never does, and
    # every run ends at that check. The check goes, and the name is the builtin again once set.
    import _pytest.assertion
    _BUILTIN = AssertionError
    _pytest.assertion.warn_about_missing_assertion = lambda mode: None

    def pytest_configure(config):
        import builtins
        builtins.AssertionError = _BUILTIN

    pytest_configure.trylast = True


if sys.version_info >= (3, 7):
    # Before 3.0.7 a hook wrapper ends with raise StopIteration (collecting a unittest class), which
    # Python 3.7 turns into a RuntimeError in the pluggy these versions carry: it ends as before.
    try:
        from _pytest.vendored_packages import pluggy as _pluggy
    except ImportError:
        _pluggy = None
    if all(hasattr(_pluggy, n) for n in ("_wrapped_call", "_CallOutcome", "_raise_wrapfail")):
        def _wrapped_call(wrap_controller, func):
            try:
                next(wrap_controller)
            except StopIteration:
                _pluggy._raise_wrapfail(wrap_controller, "did not yield")
            call_outcome = _pluggy._CallOutcome(func)
            try:
                wrap_controller.send(call_outcome)
                _pluggy._raise_wrapfail(wrap_controller, "has second yield")
            except StopIteration:
                pass
            except RuntimeError as e:
                if not isinstance(e.__cause__, StopIteration):
                    raise
            return call_outcome.get_result()

        _pluggy._wrapped_call = _wrapped_call`.split('\n');

/**
 * Where an installed pytest before 3.0.7 would be (its dist-info or egg-info): the user site, the
 * system's, Debian's, a virtualenv in the checkout. Only then is the plugin enabled, so a current
 * pytest, and a command that sets its own PYTHONPATH (which would hide the plugin), run as they are.
 */
const OLD_PYTEST_GLOBS = ['"$HOME"/.local/lib/python3*/site-packages', '/usr/local/lib/python3*/site-packages', '/usr/lib/python3/dist-packages', '.venv/lib/python3*/site-packages', 'venv/lib/python3*/site-packages']
  .flatMap((d) => [`${d}/pytest-[0-2].*`, `${d}/pytest-3.0.[0-6][.-]*`])
  .join(' ');

/** Shell that, where an old pytest is installed, writes the plugin and enables it once per shell; a /tmp that refuses leaves the run as it was. */
export function oldPytestPrepare(): string {
  const enable = `-p ${OLD_PYTEST_PLUGIN}`;
  return (
    ` swt_old=; for f in ${OLD_PYTEST_GLOBS}; do [ -e "$f" ] && swt_old=1 && break; done; if [ -n "$swt_old" ]; then mkdir -p ${OLD_PYTEST_DIR} && ${writeLines(`${OLD_PYTEST_DIR}/${OLD_PYTEST_PLUGIN}.py`, OLD_PYTEST_SOURCE)} && ` +
    `case " \${PYTEST_ADDOPTS:-} " in *" ${enable} "*) ;; *) export ${pytestPluginVariables(OLD_PYTEST_DIR, OLD_PYTEST_PLUGIN)};; esac; fi;`
  );
}
