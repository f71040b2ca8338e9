/**
 * Where an evaluation's time goes, per instance: a Sandbox wrapper that books every environment
 * build (image build, then the install) and every container run (judged test runs, coverage runs,
 * runs made while generating) to the instance on whose behalf it happened (AsyncLocalStorage).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { COVERAGE_MARKER } from '../coverage/instrument.js';
import type { Environment, Sandbox } from '../sandbox/types.js';

/** Milliseconds per phase. Runs on both sides go side by side, so run phases add container time. */
export interface PhaseTimes {
  imageBuildMs: number;
  installMs: number;
  testRunsMs: number;
  generationMs: number;
  coverageMs: number;
}

export const PHASES: ReadonlyArray<keyof PhaseTimes> = ['imageBuildMs', 'installMs', 'testRunsMs', 'generationMs', 'coverageMs'];

export function noTime(): PhaseTimes {
  return { imageBuildMs: 0, installMs: 0, testRunsMs: 0, generationMs: 0, coverageMs: 0 };
}

interface Book {
  times: PhaseTimes;
  generating: boolean;
  /** The first environment this instance used, and whether getting it built a new image. */
  environment?: { image: string; built: boolean };
}

/** The sandbox's own progress line when an environment build starts its install command. */
const INSTALL_STARTS = /^installing dependencies/;

export class PhaseClock {
  private readonly als = new AsyncLocalStorage<Book>();
  readonly sandbox: Sandbox;

  /** The clock (injectable so that the booking is tested without waiting). */
  private readonly now: () => number;

  constructor(inner: Sandbox, now: () => number = Date.now) {
    this.now = now;
    const book = () => this.als.getStore();
    this.sandbox = {
      ensureEnvironment: async (spec, onProgress) => {
        const started = this.now();
        let installStarted: number | undefined;
        const env: Environment = await inner.ensureEnvironment(spec, (m) => {
          if (installStarted === undefined && INSTALL_STARTS.test(m)) installStarted = this.now();
          onProgress?.(m);
        });
        const b = book();
        if (b) {
          const ended = this.now();
          const split = env.cached || installStarted === undefined ? ended : installStarted;
          b.times.imageBuildMs += split - started;
          b.times.installMs += ended - split;
          if (b.generating) b.times.generationMs -= ended - started;
          b.environment ??= { image: env.image, built: !env.cached };
        }
        return env;
      },
      run: async (req) => {
        const started = this.now();
        try {
          return await inner.run(req);
        } finally {
          const b = book();
          if (b) {
            const ms = this.now() - started;
            if (req.command.includes(COVERAGE_MARKER)) b.times.coverageMs += ms;
            else if (!b.generating) b.times.testRunsMs += ms;
          }
        }
      },
      openSession: (req) => inner.openSession(req),
    };
  }

  /** Runs `fn` as one instance's work; its times and environment come back with the result. */
  async instance<T>(fn: () => Promise<T>): Promise<{ value: T; times: PhaseTimes; environment?: { image: string; built: boolean } }> {
    const b: Book = { times: noTime(), generating: false };
    const value = await this.als.run(b, fn);
    return { value, times: b.times, environment: b.environment };
  }

  /** Runs `fn` as generation: its wall time, less environment builds, is booked to generationMs. */
  async generation<T>(fn: () => Promise<T>): Promise<T> {
    const b = this.als.getStore();
    if (!b) return fn();
    const started = this.now();
    b.generating = true;
    try {
      return await fn();
    } finally {
      b.generating = false;
      b.times.generationMs += this.now() - started;
    }
  }
}
