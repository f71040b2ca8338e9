/**
 * pytest before 3.0 (a 2015 commit pins 2.8) has neither `--continue-on-collection-errors` nor
 * `-o/--override-ini`, which every run passes, and refuses the whole command for them. A plugin
 * the command writes to /tmp and enables through PYTEST_ADDOPTS (read by pytest since 2.7) takes
 * them on those versions and does without: such a pytest stops at a collection error, as it always
 * did, and has one JUnit format. From 3.0 on it does nothing. Pure.
 */
import { writeLines } from '../command.js';

export const OLD_PYTEST_DIR = '/tmp/swt-pytest';
export const OLD_PYTEST_PLUGIN = 'swt_old_pytest';

/** One line per item (printf writes it); Python 2 and 3 alike. */
export const OLD_PYTEST_SOURCE = `# swt-bot: the options swt-bot passes that this pytest (before 3.0) does not have, taken and left unused.
import pytest


def pytest_addoption(parser):
    if int(pytest.__version__.split(".")[0]) >= 3:
        return
    group = parser.getgroup("swt-bot")
    # _addoption: a plugin's lowercase short option (-o) is refused by the public addoption.
    group._addoption("--continue-on-collection-errors", action="store_true", dest="swt_continue_on_collection_errors")
    group._addoption("-o", "--override-ini", action="append", dest="swt_override_ini")`.split('\n');

/** Shell that writes the plugin and enables it once per shell; a /tmp that refuses leaves the run as it was. */
export function oldPytestPrepare(): string {
  const enable = `-p ${OLD_PYTEST_PLUGIN}`;
  return (
    ` mkdir -p ${OLD_PYTEST_DIR} && ${writeLines(`${OLD_PYTEST_DIR}/${OLD_PYTEST_PLUGIN}.py`, OLD_PYTEST_SOURCE)} && ` +
    `case " \${PYTEST_ADDOPTS:-} " in *" ${enable} "*) ;; *) export PYTHONPATH="${OLD_PYTEST_DIR}\${PYTHONPATH:+:\$PYTHONPATH}" PYTEST_ADDOPTS="\${PYTEST_ADDOPTS:+\$PYTEST_ADDOPTS }${enable}";; esac;`
  );
}
