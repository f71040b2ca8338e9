/** What the `swt` commands share: reading inputs, the option definitions several take, printing JSON. */
import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseTechniques, TECHNIQUES_HELP } from '../generation/techniques.js';
import { STRATEGIES } from '../generation/index.js';
import type { ResourceLimits } from '../sandbox/types.js';
import { SwtError } from '../util/errors.js';

function wholeNumber(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a whole number`);
    return n;
  };
}

/** A file's text, or stdin's for `-`; one that cannot be read is the user's mistake (BAD_INPUT). */
export async function readText(path: string, what: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (e) {
    throw new SwtError('BAD_INPUT', `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The limit options (addLimitOptions) in the sandbox's units. */
export function limitsFrom(opts: { timeout?: number; memory?: number; pids?: number; cpus?: number; disk?: number }): Partial<ResourceLimits> {
  const out: Partial<ResourceLimits> = {};
  if (opts.timeout !== undefined) out.timeoutMs = opts.timeout * 1000;
  if (opts.memory !== undefined) out.memoryBytes = opts.memory * 1024 ** 2;
  if (opts.pids !== undefined) out.pids = opts.pids;
  if (opts.cpus !== undefined) out.cpus = opts.cpus;
  if (opts.disk !== undefined) out.diskBytes = opts.disk * 1024 ** 2;
  return out;
}

/** An option whose value is a whole number (0 or more); a bad one is refused with the option's name. */
export function countOption(flags: string, description: string): Option {
  return new Option(flags, description).argParser(wholeNumber(flags.split(' ')[0]!));
}

export function addLimitOptions(cmd: Command): Command {
  return cmd
    .addOption(countOption('--timeout <seconds>', 'wall-clock limit per test run'))
    .addOption(countOption('--memory <MiB>', 'memory limit per test run'))
    .addOption(countOption('--pids <n>', 'process limit per test run'))
    .addOption(new Option('--cpus <n>', 'CPU limit per test run').argParser(Number))
    .addOption(countOption('--disk <MiB>', 'disk a test run may write'));
}

/** JSON goes on the last line of stdout, so scripts can take `tail -n1`. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function techniquesOption(): Option {
  return new Option('--techniques <list>', `techniques on top of the strategy: ${TECHNIQUES_HELP}`).argParser((v: string) => parseTechniques(v));
}

export function strategyOption(): Option {
  return new Option('--strategy <name>', 'test-writing strategy (default: ensemble with an LLM endpoint, else snippet)').choices([...STRATEGIES]);
}

/** The options that were given: an option left out stays out of the input, for its default to apply. */
export function given<T extends Record<string, unknown>>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
