import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';

/**
 * git's processes started by a small helper process instead of this one. Node starts a child by
 * fork(), whose cost grows with this process's memory (its page tables are copied): ~2.5 ms from a
 * fresh process, 8–12 ms at a worker's 100–300 MB, tens of ms past that, each on the event loop. A
 * validation starts about eight. The helper stays small, so its forks stay cheap, and they are off
 * this process's event loop. Until the helper says it is ready (or after it failed) git is started
 * here, as before. A helper with nothing to do goes after IDLE_MS: a process (or a test file, in
 * jest's module registry of its own) leaves none behind for long.
 */

/** What runGit and catFileObjects use of a git child (node's ChildProcess has it all). */
export interface GitChild extends EventEmitter {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exitCode: number | null;
  kill(signal?: NodeJS.Signals): boolean;
}

export interface GitSpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A helper with no git child for this long goes: started again on the next call (git started here meanwhile). */
const IDLE_MS = 10_000;

/** Bytes of a child's stdout the helper sends ahead of what this side has read (then it pauses git). */
const AHEAD_BYTES = 1024 * 1024;

/**
 * The helper: one git child per request, stdio relayed as messages; stdout paused while more than
 * AHEAD_BYTES were sent and not yet acknowledged as read. When this process goes (the channel
 * closes), its children are killed and it exits.
 */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
const AHEAD = ${AHEAD_BYTES};
const kids = new Map();
const send = (m) => { if (process.connected) process.send(m); };
process.on('message', (m) => {
  const [op, id] = m;
  if (op === 'spawn') {
    let child;
    try {
      child = spawn('git', m[2], { cwd: m[3], env: m[4], stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      send(['error', id, String(e && e.message), e && e.code]);
      send(['close', id, null, null]);
      return;
    }
    const k = { child, ahead: 0, paused: false };
    kids.set(id, k);
    child.stdin.on('error', () => {});
    child.stdout.on('data', (b) => {
      send(['out', id, b]);
      k.ahead += b.length;
      if (k.ahead > AHEAD && !k.paused) { k.paused = true; child.stdout.pause(); }
    });
    child.stderr.on('data', (b) => send(['err', id, b]));
    child.on('error', (e) => {
      send(['error', id, String(e && e.message), e && e.code]);
      // Never started (no git on PATH): no 'close' may follow.
      if (child.pid === undefined && kids.delete(id)) send(['close', id, null, null]);
    });
    child.on('close', (code, signal) => { if (kids.delete(id)) send(['close', id, code, signal]); });
    return;
  }
  const k = kids.get(id);
  if (!k) return;
  if (op === 'in') k.child.stdin.write(m[2]);
  else if (op === 'end') k.child.stdin.end();
  else if (op === 'ack') {
    k.ahead -= m[2];
    if (k.paused && k.ahead <= AHEAD / 2) { k.paused = false; k.child.stdout.resume(); }
  } else if (op === 'kill') k.child.kill(m[2]);
});
// A terminal's Ctrl-C or a supervisor's SIGTERM is for the process that started this one, which
// decides what to finish (git itself still gets a terminal's signal, as before); this one goes
// when that one does.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
process.on('disconnect', () => {
  for (const k of kids.values()) k.child.kill('SIGKILL');
  process.exit(0);
});
send(['ready']);
`;

type FromHelper =
  | ['ready']
  | ['out' | 'err', number, Uint8Array]
  | ['error', number, string, string | undefined]
  | ['close', number, number | null, NodeJS.Signals | null];

/** A git child the helper started, as this side sees it. */
class RelayedChild extends EventEmitter implements GitChild {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  exitCode: number | null = null;
  #unacked = 0;
  #closed = false;
  private readonly helper: Helper;
  private readonly id: number;
  constructor(helper: Helper, id: number) {
    super();
    this.helper = helper;
    this.id = id;
    this.stdin = new Writable({
      write: (chunk: Buffer, _enc, cb) => helper.send(['in', id, chunk], cb),
      final: (cb) => helper.send(['end', id], cb),
    });
    // Read: what was handed on since the last acknowledgement is acknowledged, so the helper sends on.
    this.stdout = new Readable({
      read: () => {
        if (this.#unacked === 0 || this.#closed) return;
        const n = this.#unacked;
        this.#unacked = 0;
        helper.send(['ack', id, n]);
      },
    });
    this.stderr = new Readable({ read: () => undefined });
  }
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#closed) return false;
    this.helper.send(['kill', this.id, signal]);
    return true;
  }
  /** A message of the helper about this child. */
  receive(m: FromHelper): void {
    if (m[0] === 'out') {
      const b = Buffer.from(m[2].buffer, m[2].byteOffset, m[2].byteLength);
      this.#unacked += b.length;
      this.stdout.push(b);
    } else if (m[0] === 'err') {
      this.stderr.push(Buffer.from(m[2].buffer, m[2].byteOffset, m[2].byteLength));
    } else if (m[0] === 'error') {
      this.emit('error', Object.assign(new Error(m[2]), m[3] ? { code: m[3] } : {}));
    } else if (m[0] === 'close') {
      this.end(m[2], m[3]);
    }
  }
  /** Ends the child as node's would: stdout and stderr end, then 'exit' and 'close'. */
  end(code: number | null, signal: NodeJS.Signals | null, why?: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.exitCode = code;
    if (why) this.stderr.push(Buffer.from(why));
    this.stdout.push(null);
    this.stderr.push(null);
    // After what a reader in flowing mode still has to take: node's 'close' comes after its streams.
    // A stream read by pull (an async iterator) keeps what it holds for its reader.
    const flowing = [this.stdout, this.stderr].filter((s) => s.readableFlowing === true && !s.readableEnded);
    void Promise.all(flowing.map((s) => new Promise((r) => s.once('end', r)))).then(() => {
      this.emit('exit', code, signal);
      this.emit('close', code, signal);
    });
  }
}

interface Helper {
  send(m: unknown[], cb?: (e?: Error | null) => void): void;
}

/** The helper process and the children it runs for this one. */
class Spawner implements Helper {
  ready = false;
  #proc: ChildProcess | undefined;
  #children = new Map<number, RelayedChild>();
  #next = 1;
  #failures = 0;
  #idle: NodeJS.Timeout | undefined;
  readonly #idleMs: number;

  constructor(idleMs = IDLE_MS) {
    this.#idleMs = idleMs;
    this.#start();
  }

  /** Starts a helper when none runs (one went idle, or died), unless it failed three times in a row. */
  wake(): void {
    if (!this.#proc && this.#failures < 3) this.#start();
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  #start(): void {
    // No variables of this process: git gets its environment with each request.
    const proc = spawn(process.execPath, ['-e', HELPER_SOURCE], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', env: {} });
    this.#proc = proc;
    let stderr = '';
    proc.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-2000)));
    proc.on('message', (m: FromHelper) => {
      if (m[0] === 'ready') {
        this.ready = true;
        this.#failures = 0;
        return;
      }
      this.#children.get(m[1])?.receive(m);
      if (m[0] === 'close') {
        this.#children.delete(m[1]);
        this.#hold();
      }
    });
    proc.on('error', () => undefined);
    proc.on('exit', (code, signal) => {
      if (this.#proc !== proc) return;
      this.#proc = undefined;
      this.ready = false;
      this.#failures++;
      const why = `\nthe process that starts git stopped (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.trim()}` : ''}\n`;
      for (const c of this.#children.values()) c.end(null, null, why);
      this.#children.clear();
      // Started again for the next request; after a few failures in a row git is started here.
      if (this.#failures < 3) this.#start();
    });
    this.#hold();
  }

  /** Keeps this process alive while a child runs, and only then; an idle helper goes after a while. */
  #hold(): void {
    const proc = this.#proc;
    if (!proc) return;
    const busy = this.#children.size > 0;
    for (const h of [proc, proc.channel, proc.stderr] as Array<{ ref?: () => void; unref?: () => void } | null | undefined>) (busy ? h?.ref : h?.unref)?.call(h);
    clearTimeout(this.#idle);
    this.#idle = undefined;
    if (busy) return;
    this.#idle = setTimeout(() => {
      if (this.#proc !== proc || this.#children.size > 0) return;
      // Its exit is then no failure: the next call starts another.
      this.#proc = undefined;
      this.ready = false;
      proc.disconnect();
    }, this.#idleMs);
    this.#idle.unref();
  }

  send(m: unknown[], cb?: (e?: Error | null) => void): void {
    const proc = this.#proc;
    if (!proc?.connected) {
      cb?.(new Error('the process that starts git stopped'));
      return;
    }
    proc.send(m, undefined, {}, (e) => cb?.(e));
  }

  spawn(args: string[], opts: GitSpawnOptions): GitChild {
    const id = this.#next++;
    const child = new RelayedChild(this, id);
    this.#children.set(id, child);
    this.#hold();
    this.send(['spawn', id, args, opts.cwd, opts.env]);
    return child;
  }
}

let spawner: Spawner | undefined;

/**
 * Whether git now goes through the helper (started if it was not); waits up to `ms` for it.
 * `idleMs`: how long an idle helper stays, for a helper started by this call (tests).
 */
export async function spawnerReady(ms = 5_000, idleMs?: number): Promise<boolean> {
  spawner ??= new Spawner(idleMs);
  spawner.wake();
  for (const end = Date.now() + ms; !spawner.ready && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return spawner.ready;
}

/** The helper's pid, while it runs. */
export function spawnerPid(): number | undefined {
  return spawner?.pid;
}

/**
 * Starts `git <args>` (stdin, stdout and stderr piped): through the helper once it is ready, here
 * until then. `direct`: always here (the old way; benches compare the two).
 */
export function spawnGit(args: string[], opts: GitSpawnOptions, direct = false): GitChild {
  if (!direct) {
    spawner ??= new Spawner();
    if (spawner.ready) return spawner.spawn(args, opts);
    spawner.wake();
  }
  return spawn('git', args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
}
