import { randomBytes } from 'node:crypto';

/**
 * A kept container's first command on the stdin of the container's own waiting process, not
 * through `docker exec`: an exec's process starts 55–80 ms after it is asked for, a line on an
 * attached stdin reaches a waiting shell in ~5 ms (`npm run bench:exec`). The process reads a
 * line with the payload's size and the run's tag, then the payload (the command set as $1, the
 * run's script, the tag last) in one `dd`, exactly, so the overlay's archive after it on the same
 * stdin stays unread for the script's tar. It runs the script, says it is done with a marker on
 * stderr and on stdout (the exit status after it), then only waits, for the run's reruns, which
 * are execs. A payload it cannot read whole (no dd, or one that cannot read a full block) is
 * FILL_FAILED, as a failed tar is: nothing ran, and the run goes as an exec.
 */

/** What stdout says when the overlay could not go in (no tar, or it failed) or the payload not be read: nothing else ran. */
export const FILL_FAILED = 'swt-fill-failed';

/** The container's process: waits for one payload; with none (stdin closed), it only waits. */
export const WAITING_PROCESS = [
  'sh',
  '-c',
  [
    'if read -r n t; then',
    '  if s=$(dd bs="$n" count=1 iflag=fullblock 2>/dev/null) && [ "${s##*',
    '}" = "#$t" ]; then sh -c "$s" swt-run; r=$?',
    `  else echo ${FILL_FAILED}; cat >/dev/null 2>&1; r=97; fi`,
    '  printf \'swt-done-%s\\n\' "$t" >&2; printf \'swt-done-%s %s\\n\' "$t" "$r"',
    'fi',
    'exec sleep infinity',
  ].join('\n'),
];

/** One argument of a shell's command line, single-quoted. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Past this, the payload is one argument too long for `sh -c` (the kernel's 128 KiB each): the run uses an exec. */
export const FIRST_COMMAND_MAX_BYTES = 96 * 1024;

/** What goes on the waiting process's stdin before the archive; undefined when too large (then an exec). */
export function firstCommandInput(script: string, command: string, tag: string): Buffer | undefined {
  const payload = Buffer.from(`set -- ${shellQuote(command)}\n${script}\n#${tag}`, 'utf8');
  if (payload.length > FIRST_COMMAND_MAX_BYTES) return undefined;
  return Buffer.concat([Buffer.from(`${payload.length} ${tag}\n`), payload]);
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
  private readonly status: RegExp;
  private outTail = '';
  private errTail = '';
  private seenOut = false;
  private seenErr = false;
  private resolve!: () => void;

  constructor(tag: string) {
    this.marker = `swt-done-${tag}`;
    this.status = new RegExp(`${this.marker} (\\d+)\\n`);
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
    const m = this.status.exec(this.outTail);
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
