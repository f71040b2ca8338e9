import cliProgress from 'cli-progress';
import type { Progress } from '../pipeline/progress.js';

/**
 * Progress on stderr: a bar on a terminal, plain timestamped lines elsewhere (CI logs),
 * nothing with --quiet. stdout stays clean for tables and --json.
 */
export function terminalProgress(opts: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  if (opts.quiet) return { step() {} };
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  if (!stream.isTTY) {
    let done = 0;
    let total = 0;
    let begun = Date.now();
    return {
      step: (m) => stream.write(`[swt ${elapsed()}] ${m}\n`),
      begin: (n, label) => {
        total = n;
        done = 0;
        begun = Date.now();
        stream.write(`[swt ${elapsed()}] ${label}: 0/${n}\n`);
      },
      advance: (label) => {
        done++;
        stream.write(`[swt ${elapsed()}] ${done}/${total} ${label}${done < total ? ` (ETA ${etaText(Date.now() - begun, done, total)})` : ''}\n`);
      },
      end() {},
    };
  }
  let bar: cliProgress.SingleBar | undefined;
  return {
    step(m) {
      if (bar) bar.update({ step: m.slice(0, 60) });
      else stream.write(`\r\x1b[2K${elapsed()} ${m.slice(0, (stream.columns ?? 100) - 10)}`);
    },
    begin(n, label) {
      stream.write('\r\x1b[2K');
      bar = new cliProgress.SingleBar(
        { stream, format: `${label} [{bar}] {value}/{total} | {duration_formatted} | ETA {eta_formatted} | {step}`, hideCursor: true, clearOnComplete: false, etaBuffer: 4 },
        cliProgress.Presets.shades_classic,
      );
      bar.start(n, 0, { step: '' });
    },
    advance(label) {
      bar?.increment(1, { step: label.slice(0, 60) });
    },
    end() {
      bar?.stop();
      bar = undefined;
      stream.write('\r\x1b[2K');
    },
  };
}

/** Time left at the pace so far, e.g. `3m 20s`. Pure. */
export function etaText(elapsedMs: number, done: number, total: number): string {
  if (done <= 0) return '?';
  const left = Math.round(((elapsedMs / done) * (total - done)) / 1000);
  return left >= 60 ? `${Math.floor(left / 60)}m ${String(left % 60).padStart(2, '0')}s` : `${left}s`;
}
