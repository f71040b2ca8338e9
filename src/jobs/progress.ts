import { errorLine } from '../util/errors.js';
import { renderCheckProgress } from '../github/render.js';
import type { GitHubPort, RepoRef } from '../github/types.js';
import type { Progress } from '../pipeline/progress.js';
import type { Logger } from '../util/logger.js';

/** Check-run progress; closed before the result is posted, so no late update overwrites it. */
export type CheckProgress = Progress & { close(): Promise<void> };

/**
 * Live progress on the check run: at most one update per interval, the latest step wins, and
 * nothing is sent after close() (so a late update can never overwrite the result).
 */
export function checkProgress(gh: GitHubPort, r: RepoRef, id: number, issues: number[], intervalMs: number, log: Logger): CheckProgress {
  let last = 0;
  let pending: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let inflight: Promise<void> = Promise.resolve();
  const send = (message: string) => {
    last = Date.now();
    inflight = inflight.then(async () => {
      if (closed) return;
      await gh.updateCheckRun(r, id, { status: 'in_progress', output: renderCheckProgress(message, issues) }).catch((e) => log.warn({ err: errorLine(e) }, 'progress update failed'));
    });
  };
  return {
    step(message) {
      if (closed) return;
      const wait = intervalMs - (Date.now() - last);
      if (wait <= 0) {
        pending = undefined;
        send(message);
        return;
      }
      pending = message;
      timer ??= setTimeout(() => {
        timer = undefined;
        if (pending !== undefined && !closed) {
          const m = pending;
          pending = undefined;
          send(m);
        }
      }, wait);
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await inflight;
    },
  };
}
