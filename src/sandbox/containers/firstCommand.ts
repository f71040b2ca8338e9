import { randomBytes } from 'node:crypto';

/**
 * A kept container's first command on the stdin of the container's own waiting process, not
 * through `docker exec`: an exec's process starts 55–80 ms after it is asked for, a line on an
 * attached stdin reaches a waiting shell in ~5 ms (`npm run bench:exec`). The process reads the
 * run's script and command as counted lines (then the overlay's archive follows on the same
 * stdin), runs them, says it is done with a marker on stderr and on stdout (the exit status
 * after it), then only waits, for the run's reruns, which are execs.
 */

/** The container's process: waits for one script and command; with none (stdin closed), it only waits. */
export const WAITING_PROCESS = [
  'sh',
  '-c',
  [
    // dash, bash and busybox read a pipe a byte at a time: the archive after the lines stays unread.
    'g() { v=; k=$1; while [ "$k" -gt 0 ]; do IFS= read -r l || return 1; v="$v$l',
    '"; k=$((k-1)); done; }',
    'if read -r n m t && g "$n" && s=$v && g "$m"; then',
    '  sh -c "$s" swt-run "${v%?}"; r=$?',
    '  printf \'swt-done-%s\\n\' "$t" >&2; printf \'swt-done-%s %s\\n\' "$t" "$r"',
    'fi',
    'exec sleep infinity',
  ].join('\n'),
];

/** Past this, the shell's line reading (a byte a time, quadratic in what it holds) costs more than an exec: the run uses one. */
export const FIRST_COMMAND_MAX_BYTES = 16 * 1024;

/** What goes on the waiting process's stdin before the archive; undefined when too large (then an exec). */
export function firstCommandInput(script: string, command: string, tag: string): Buffer | undefined {
  const s = script.split('\n');
  const c = command.split('\n');
  const text = `${s.length} ${c.length} ${tag}\n${script}\n${command}\n`;
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= FIRST_COMMAND_MAX_BYTES ? bytes : undefined;
}

/** A run's marker tag: unlikely to occur in a test's output by chance. */
export function doneTag(): string {
  return randomBytes(9).toString('hex');
}

/**
 * Watches both streams for the process's done markers. The command's own output and a background
 * child's may come before, after or between them; each stream keeps its order, the two do not,
 * so the run is over only once both are seen. A command may print the markers itself (it can
 * read the tag): it could as well exit with the files it wants, so that gives it nothing.
 */
export class DoneWatch {
  readonly done: Promise<void>;
  /** The exit status the process printed; null before. */
  code: number | null = null;
  private readonly marker: string;
  private outTail = '';
  private errTail = '';
  private seenOut = false;
  private seenErr = false;
  private resolve!: () => void;

  constructor(tag: string) {
    this.marker = `swt-done-${tag}`;
    this.done = new Promise((r) => (this.resolve = r));
  }

  /** The marker's bytes, for cutting it (and what follows) out of each stream's capture. */
  get markerBytes(): Buffer {
    return Buffer.from(this.marker, 'latin1');
  }

  /** Looks at the next stdout bytes; true once its marker (and the status) is seen. */
  stdout(b: Buffer): boolean {
    if (this.seenOut) return true;
    this.outTail = (this.outTail + b.toString('latin1')).slice(-(this.marker.length + 16));
    const m = new RegExp(`${this.marker} (\\d+)\\n`).exec(this.outTail);
    if (m) {
      this.code = Number(m[1]);
      this.seenOut = true;
      this.settle();
    }
    return this.seenOut;
  }

  /** Looks at the next stderr bytes; true once its marker is seen. */
  stderr(b: Buffer): boolean {
    if (this.seenErr) return true;
    const seen = this.errTail + b.toString('latin1');
    if (seen.includes(`${this.marker}\n`)) {
      this.seenErr = true;
      this.settle();
    } else this.errTail = seen.slice(-this.marker.length);
    return this.seenErr;
  }

  private settle(): void {
    if (this.seenOut && this.seenErr) this.resolve();
  }
}
