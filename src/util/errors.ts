/** Every failure a user can cause or fix gets one of these codes and a one-line message. */
import { redact } from './secrets.js';

export type SwtErrorCode =
  | 'NOT_A_REPO'
  | 'UNKNOWN_REVISION'
  | 'PATCH_DOES_NOT_APPLY'
  | 'PATCH_MALFORMED'
  | 'UNSAFE_PATH'
  | 'PATCH_TOO_LARGE'
  | 'DOCKER_UNREACHABLE'
  | 'IMAGE_UNAVAILABLE'
  | 'INSTALL_FAILED'
  | 'TEST_COMMAND_NOT_FOUND'
  | 'COVERAGE_FAILED'
  | 'COVERAGE_UNSUPPORTED'
  | 'NO_TEST_FILES'
  | 'BAD_CONFIG'
  | 'BAD_INPUT'
  | 'LLM_ERROR'
  | 'LLM_TIMEOUT'
  /** A local model file is missing or damaged (`swt model pull` fetches it). */
  | 'MODEL_UNAVAILABLE'
  | 'BUDGET_EXHAUSTED'
  | 'INTERRUPTED'
  /** A head whose own install nobody with write access approved: nothing is installed from it. */
  | 'NOT_APPROVED'
  /** A repository state whose files do not fit the run's disk or file limit, or not in its time: refused before (or while) it is copied in. */
  | 'STATE_TOO_LARGE'
  /** The caller gave up on the work (a newer push supersedes a check): not a failure, nothing to retry. */
  | 'CANCELLED';

export class SwtError extends Error {
  readonly code: SwtErrorCode;
  /** What the user can do about it, e.g. how to start Docker. */
  readonly hint?: string;
  constructor(code: SwtErrorCode, message: string, opts: { hint?: string; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'SwtError';
    this.code = code;
    this.hint = opts.hint;
  }
  /** One line, for the CLI. */
  oneLine(): string {
    const msg = this.message.replace(/\s*\n\s*/g, ' ');
    return this.hint ? `${msg} (${this.hint})` : msg;
  }
}

/**
 * An error as one line, for a log, a job, a check, a comment or the CLI: a SwtError's message with
 * its hint, any other error's first line (or the thrown value as text); secrets always removed
 * (before the cut, so no part of one survives it), then cut at `max` characters.
 */
export function errorLine(e: unknown, max = 500, secrets?: readonly string[]): string {
  const message = (e as { message?: unknown } | null)?.message;
  const text = isSwtError(e) ? e.oneLine() : typeof message === 'string' ? message : String(e);
  return redact(text.trim(), secrets).split('\n')[0]!.trim().slice(0, max);
}

export function isSwtError(e: unknown, code?: SwtErrorCode): e is SwtError {
  return e instanceof SwtError && (code === undefined || e.code === code);
}
