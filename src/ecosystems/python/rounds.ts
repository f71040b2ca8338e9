/**
 * pytest's confirmation rounds inside the first run (RunnerDef.roundsInProcess): a plugin the
 * command writes to /tmp and enables through PYTEST_ADDOPTS, so the project's own command stays
 * as it is. Pure.
 */
import { ROUNDS_HOOK_DIR, ROUNDS_PLAN_FILE, roundReport, writeRoundsHook } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

export const ROUNDS_PLUGIN = 'swt_rounds';

/** The plugin, one line per item (commands are single lines: printf writes it). */
export const ROUNDS_PLUGIN_SOURCE = `# swt-bot: confirmation rounds of the tests a test patch adds or changes. Once collection is done
# and before any test ran, a copy of this process is forked and waits; after the run it forks one
# child per round but the last, which it runs itself. Each round starts from the state a new
# pytest process would have, without paying the interpreter's start, the plugins and the
# collection again; it runs after the run, as a rerun would, so the run itself is what it was
# without the rounds.
import bisect, json, os, select, signal, sys, time

import pytest

_STASH = getattr(pytest, "StashKey", None)
_round = _STASH() if _STASH else None
_waiting = _STASH() if _STASH else None


def _last_line(code):
    # Where the last statement of code, or of a function nested in it, ends (3.11+; before, starts).
    import dis
    positions = getattr(code, "co_positions", None)
    ends = [p[1] for p in positions()] if positions else [n for _, n in dis.findlinestarts(code)]
    last = max([n for n in ends if n] or [code.co_firstlineno])
    for c in code.co_consts:
        if hasattr(c, "co_firstlineno"):
            last = max(last, _last_line(c))
    return last


def _code(item, same):
    # A test's code, when it is in the item's own file (an inherited test's lines are another file's).
    try:
        import inspect
        code = inspect.unwrap(getattr(item, "function", None) or item.obj).__code__
        key = (code.co_filename, str(item.path))
        if key not in same:
            same[key] = os.path.samefile(*key)
        return code if same[key] else None
    except Exception:
        return None


def _chosen(session, plan):
    # A test of a patched file whose lines (its decorators' first to its body's last) hold an added
    # one, or whose id holds a literal of one (a parameter). A file's tests do not overlap, so an
    # added line can only be in those that start last before it: only their ends are looked for.
    root = str(session.config.rootpath)
    names = plan.get("names") or []
    wanted = {}
    same = {}
    items = []
    for item in session.items:
        path = str(item.path)
        if path not in wanted:
            wanted[path] = plan["lines"].get(os.path.relpath(path, root))
        if wanted[path]:
            items.append((item, _code(item, same)))
    starts = {}
    for item, code in items:
        if code is not None:
            starts.setdefault(str(item.path), {}).setdefault(code.co_firstlineno, set()).add(code)
    hit = set()
    ends = {}
    for path, by_first in starts.items():
        firsts = sorted(by_first)
        for n in wanted[path]:
            i = bisect.bisect_right(firsts, n)
            for code in by_first[firsts[i - 1]] if i else ():
                if code not in ends:
                    ends[code] = _last_line(code)
                if n <= ends[code]:
                    hit.add(code)
    return [item for item, code in items if code in hit or any(n in item.nodeid for n in names)]


def _done(fd, pid, *limits):
    # A process is done once it says so on its pipe ("d": its reports written), not once the kernel has
    # torn it down; one that hangs (say a lock held by a thread the fork did not copy) is killed after
    # its limit. "r" (the copy's own round begins) moves on to the next limit.
    said = b""
    try:
        for limit in limits:
            said = os.read(fd, 1) if select.select([fd], [], [], limit)[0] else b""
            if said != b"r":
                break
    except OSError:
        said = b""
    finally:
        os.close(fd)
    if said != b"d":
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return said == b"d"


def _tell(fd, what=b"d"):
    try:
        os.write(fd, what)
    except OSError:
        pass


def _limit(took):
    # A round runs some of the run's tests: one that takes twice the whole run (10 s at least) hangs.
    return max(10.0, 2 * took)


def _reseed():
    # A new process seeds its generators from the system: a fork would repeat the parent's numbers.
    import random
    random.seed()
    np = sys.modules.get("numpy")
    try:
        np and np.random.seed()
    except Exception:
        pass


def _warm():
    # What every round's report compiles at its first use, compiled once before the copy exists: pytest's
    # junitxml escapes with a regex of all of Unicode's illegal characters (3-5 ms a round). The run's
    # first report would compile it anyway.
    try:
        from _pytest import junitxml
        junitxml.bin_xml_escape("")
        junitxml.mangle_test_address("a.py::b")
    except Exception:
        pass


def _quiet(config):
    # A round's result is its junit file; pytest's terminal writes to a copy of the first stdout.
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        config.pluginmanager.unregister(reporter)
    # Every descriptor of the run's stdout and stderr (pytest's capture keeps copies) goes to
    # /dev/null: the run's output ends when the run does, not when this copy is gone.
    streams = set()
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
            streams.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = [1, 2]
    for fd in fds:
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if fd != null and (fd in (1, 2) or (st.st_dev, st.st_ino) in streams):
            os.dup2(null, fd)


def pytest_runtestloop(session):
    plan_file = os.environ.pop("SWT_ROUNDS", None)
    config = session.config
    if _STASH is None or not plan_file or session.testsfailed or config.option.collectonly or config.pluginmanager.hasplugin("dsession"):
        return None
    # A thread started at import would be missing from every fork: such a run gets no rounds.
    import threading
    if threading.active_count() > 1:
        return None
    try:
        from _pytest.junitxml import xml_key
        with open(plan_file) as f:
            plan = json.load(f)
        xml = config.stash.get(xml_key, None)
    except Exception:
        return None
    if xml is None:
        return None
    # Chosen before the copy exists: read only, and a run with no test to run again forks nothing.
    try:
        chosen = _chosen(session, plan)
    except Exception:
        chosen = []
    if not chosen:
        return None
    _warm()
    go_read, go_write = os.pipe()
    back_read, back_write = os.pipe()
    copy = os.fork()
    if copy:
        os.close(go_read)
        os.close(back_write)
        config.stash[_waiting] = (copy, go_write, back_read, plan["rounds"], time.monotonic())
        return None
    os.close(go_write)
    os.close(back_read)
    _quiet(config)
    # The run's end (or its death: end of file) releases this copy.
    go = os.read(go_read, 64)
    if not go.startswith(b"g"):
        os._exit(0)
    limit = _limit(float(go[1:] or 0))
    children = []
    for r in range(1, plan["rounds"]):
        done_read, done_write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(done_read)
            return _begin_round(session, xml, chosen, r, done_write, [])
        os.close(done_write)
        children.append(child)
        # The next round starts once this one's report is written, while the kernel still tears it down.
        if not _done(done_read, child, limit):
            _tell(back_write)
            for child in children:
                os.waitpid(child, 0)
            os._exit(0)
    # The last round is this copy itself: it says when it begins and when its report is written on
    # the run's pipe, and reaps the other rounds after that.
    _tell(back_write, b"r")
    return _begin_round(session, xml, chosen, plan["rounds"], back_write, children)


class _RoundEnd:
    # A round's report is written at the session's finish; it leaves at the first unconfigure hook.
    # The others would tidy up a process about to vanish, or undo what belongs to the run (a
    # project's hook stopping a server the run started), and pytest's since 8.4 collects garbage
    # (five times over in 8.4, once in 9), as long as a round's tests or longer.
    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self, config):
        done, reap = config.stash[_round]
        # Without the interpreter's shutdown either, which costs more than the round's tests.
        _tell(done)
        for child in reap:
            os.waitpid(child, 0)
        os._exit(0)


def _begin_round(session, xml, chosen, r, done, reap):
    # This process runs round r of the chosen tests from here on; the first unconfigure hook ends it.
    _reseed()
    config = session.config
    config.stash[_round] = (done, reap)
    config.pluginmanager.register(_RoundEnd(), "swt_round_end")
    # A round's report needs a failure's message, not its source: a native traceback skips pytest's parse of the test file.
    config.option.tbstyle = "native"
    # The run's own name: every round's process sets it once, from the copy's untouched one.
    xml.logfile = "%s.round%d" % (xml.logfile, r)
    session.items[:] = chosen
    return None


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _STASH is None:
        return
    waiting = config.stash.get(_waiting, None)
    if waiting:
        copy, go_write, back_read, rounds, started = waiting
        took = time.monotonic() - started
        try:
            os.write(go_write, b"g%.3f" % took)
        except OSError:
            pass  # the copy is gone
        os.close(go_write)
        # The copy's own round, the last, has a round's limit from when it says it begins; it leaves on its own.
        _done(back_read, copy, _limit(took) * (rounds - 1) + 5, _limit(took))


def _pytest_is_the_program():
    # The hook's callers: pluggy, pytest's main called by its console entry (the pytest script,
    # python -m pytest), called by the program's top level (through runpy or not). Nothing of a
    # caller's follows main's return then, but the exit.
    f = sys._getframe(2)
    while f is not None and str(f.f_globals.get("__name__")).startswith("pluggy"):
        f = f.f_back
    console = False
    while f is not None and f.f_globals.get("__name__") == "_pytest.config" and f.f_code.co_name in ("main", "_main", "console_main", "_console_main"):
        console = console or f.f_code.co_name.endswith("console_main")
        f = f.f_back
    if not console or f is None or f.f_code.co_name != "<module>" or f.f_globals.get("__name__") != "__main__":
        return False
    f = f.f_back
    while f is not None and f.f_globals.get("__name__") == "runpy":
        f = f.f_back
    return f is None


@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config):
    outcome = yield
    # pytest is done: its unconfigure hooks and cleanups ran. What is left is the interpreter's
    # shutdown, which frees every module and object (60-130 ms of a run here, more than a round):
    # the exit's own work (atexit: logging, coverage, temporary directories; the streams' flush) is
    # done here and the process leaves. Not while a thread the shutdown would wait for runs.
    import threading
    if outcome.excinfo is not None or not _pytest_is_the_program():
        return
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        return
    try:
        ret = outcome.get_result()
        code = 0 if ret is None else int(ret)
        _flush()
    except BaseException:
        return
    import atexit
    try:
        atexit._run_exitfuncs()
        _flush()
    finally:
        os._exit(code & 0xFF)


def _flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()`.split('\n');

/** The assignments that load pytest plugin `name` from `dir`: the directory on PYTHONPATH, `-p name` after the PYTEST_ADDOPTS there were. */
export function pytestPluginVariables(dir: string, name: string): string {
  return `PYTHONPATH="${dir}\${PYTHONPATH:+:\$PYTHONPATH}" PYTEST_ADDOPTS="\${PYTEST_ADDOPTS:+\$PYTEST_ADDOPTS }-p ${name}"`;
}

export const pytestRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare(_out: string, plan: RoundPlan): string {
    const write = writeRoundsHook(`${ROUNDS_HOOK_DIR}/${ROUNDS_PLUGIN}.py`, ROUNDS_PLUGIN_SOURCE, plan);
    const enable = `export ${pytestPluginVariables(ROUNDS_HOOK_DIR, ROUNDS_PLUGIN)} SWT_ROUNDS=${ROUNDS_PLAN_FILE}`;
    return ` ${write} && ${enable};`;
  },
  report: roundReport,
  // `-p swt_rounds` that cannot import (a command that sets its own PYTHONPATH) stops pytest before it runs.
  hookFailed: new RegExp(ROUNDS_PLUGIN),
  freshProcess: true,
};
