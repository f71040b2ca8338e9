/**
 * Python line counts through the standard `trace` module, as SWT-bench counts them: a
 * `sitecustomize` put first on PYTHONPATH starts a trace.Trace in every Python process the test
 * command starts, limited to the target files, and each process writes its counts as JSON under
 * the out dir. Pure: scripts, command and parsing.
 */
import { z } from 'zod';
import type { LineCounts } from './types.js';

export const PY_COUNTS_PREFIX = 'pycov-';

/** Runs at interpreter start; every other module is ignored by trace, so untraced code runs at full speed. */
export const SITECUSTOMIZE = String.raw`# swt-bot change coverage: count the target files' lines with the standard trace module.
def _swt_start():
    import atexit, json, os, sys, threading, trace
    out = os.environ.get("SWT_COV_OUT")
    root = os.environ.get("SWT_COV_ROOT", "/testbed")
    try:
        targets = json.loads(os.environ.get("SWT_COV_TARGETS", "[]"))
    except ValueError:
        return
    if not out or not targets:
        return
    wanted = {os.path.realpath(os.path.join(root, t)): t for t in targets}
    known = {}

    def target_of(filename):
        if filename not in known:
            known[filename] = wanted.get(os.path.realpath(filename)) if filename else None
        return known[filename]

    class OnlyTargets:
        def names(self, filename, modulename):
            return target_of(filename) is None

    tracer = trace.Trace(count=1, trace=0)
    tracer.ignore = OnlyTargets()
    pid = os.getpid()

    def dump():
        if os.getpid() != pid:
            return
        sys.settrace(None)
        counts = {}
        for (filename, line), n in tracer.counts.items():
            t = target_of(filename)
            if t is not None:
                per = counts.setdefault(t, {})
                per[str(line)] = per.get(str(line), 0) + n
        try:
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "${PY_COUNTS_PREFIX}%d.json" % pid), "w") as f:
                json.dump(counts, f)
        except OSError:
            pass

    inner = tracer.globaltrace

    def globaltrace(frame, why, arg):
        # trace asks for every call in every module; answering "not a target" from a cache is what keeps pytest fast.
        if why == "call" and target_of(frame.f_code.co_filename) is None:
            return None
        return inner(frame, why, arg)

    atexit.register(dump)
    threading.settrace(globaltrace)
    sys.settrace(globaltrace)


_swt_start()
del _swt_start
`;

const countsFile = z.record(z.string(), z.record(z.string().regex(/^\d+$/), z.number().int().nonnegative()));

/** Sums the per-process files; a file that is not what the tracer writes is ignored (the run is untrusted). */
export function parsePythonCounts(files: Record<string, string>, dir: string, targets: readonly string[]): LineCounts {
  const out: LineCounts = {};
  const allowed = new Set(targets);
  for (const [name, text] of Object.entries(files)) {
    if (!name.startsWith(`${dir}/${PY_COUNTS_PREFIX}`)) continue;
    let parsed;
    try {
      parsed = countsFile.safeParse(JSON.parse(text));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    for (const [file, lines] of Object.entries(parsed.data)) {
      if (!allowed.has(file)) continue;
      const into = (out[file] ??= {});
      for (const [line, n] of Object.entries(lines)) into[Number(line)] = (into[Number(line)] ?? 0) + n;
    }
  }
  return out;
}
