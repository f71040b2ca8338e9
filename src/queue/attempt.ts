import { errorLine } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { backoffMs, isPermanent, type JobContext, type JobHandler, type JobState } from './queue.js';

/** What becomes of a job after one attempt, in every engine. */
export interface AttemptOutcome {
  state: JobState;
  error?: string;
  /** When a retry is due (state `queued`). */
  retryAt?: number;
}

/**
 * Runs one attempt: done; cancelled when its group superseded it meanwhile; failed for good when
 * the error is permanent or no attempt is left; else queued again after the backoff.
 */
export async function runAttempt(
  handler: JobHandler<unknown>,
  ctx: JobContext<unknown>,
  backoff: { baseMs?: number; maxMs?: number } | undefined,
  log: Pick<Logger, 'warn'> | undefined,
): Promise<AttemptOutcome> {
  try {
    await handler(ctx);
    return ctx.signal.aborted ? { state: 'cancelled', error: 'superseded' } : { state: 'done' };
  } catch (e) {
    const message = errorLine(e, 1000);
    let outcome: AttemptOutcome;
    if (ctx.signal.aborted) outcome = { state: 'cancelled', error: 'superseded' };
    else if (isPermanent(e) || ctx.lastAttempt) outcome = { state: 'failed', error: message };
    else outcome = { state: 'queued', error: message, retryAt: Date.now() + backoffMs(ctx.attempt, backoff) };
    log?.warn({ attempt: ctx.attempt, err: message, next: outcome.state }, 'job attempt failed');
    return outcome;
  }
}
