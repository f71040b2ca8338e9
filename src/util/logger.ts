import { pino, type Logger } from 'pino';
import { logLevel } from '../settings/index.js';
import { secretValues, redact } from './secrets.js';

/** pino JSON logs on stderr (stdout is the CLI's), with secrets (values and shapes) scrubbed from every line. */
export function createLogger(opts: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const secrets = secretValues();
  const dest = opts.destination ?? process.stderr;
  const stream = {
    write(line: string) {
      dest.write(redact(line, secrets));
    },
  };
  return pino({ level: opts.level ?? logLevel() ?? 'info', base: { name: 'swt' } }, stream);
}

export const logger: Logger = createLogger();
export type { Logger };
