import { spawn } from 'node:child_process';
import { DoneWatch, doneTag, FILL_FAILED, firstCommandInput, FIRST_COMMAND_MAX_BYTES, WAITING_PROCESS } from '../../src/sandbox/containers/firstCommand.js';
import { TailBuffer } from '../../src/sandbox/containers/containerIo.js';

// A kept container's first command on its waiting process's stdin: the lines it reads, the
// markers that say it is over, and the host's own shells running the waiting process for real.

const tag = 'a1b2c3';

describe('firstCommandInput', () => {
  it("says the payload's size and the tag, then the command as $1, the script, and the tag last", () => {
    const input = firstCommandInput('a\nb', "it's\n", tag)!.toString();
    const payload = "set -- 'it'\\''s\n'\na\nb\n#a1b2c3";
    expect(input).toBe(`${payload.length} a1b2c3\n${payload}`);
  });

  it('is undefined past the bound (the run takes an exec then)', () => {
    expect(firstCommandInput('s', 'x'.repeat(FIRST_COMMAND_MAX_BYTES), tag)).toBeUndefined();
    expect(firstCommandInput('s', 'x'.repeat(FIRST_COMMAND_MAX_BYTES - 30), tag)).toBeDefined();
  });

  it('gives each run a tag of its own', () => {
    expect(doneTag()).toMatch(/^[0-9a-f]{18}$/);
    expect(doneTag()).not.toBe(doneTag());
  });
});

describe('DoneWatch', () => {
  const byte = (w: DoneWatch, text: string, stream: 'stdout' | 'stderr') => [...Buffer.from(text)].map((b) => w[stream](Buffer.from([b]))).pop();

  it('is done only once both markers are seen, in either order, and reads the status after the stdout one', async () => {
    const w = new DoneWatch(tag);
    let done = false;
    void w.done.then(() => (done = true));
    expect(w.stdout(Buffer.from('tar bytes\0\0swt-done-a1b2c3 3\n'))).toBe(true);
    await Promise.resolve();
    expect([done, w.code]).toEqual([false, 3]);
    expect(w.stderr(Buffer.from('output\nswt-done-a1b2c3\nlater'))).toBe(true);
    await w.done;
    expect(w.code).toBe(3);
  });

  it('finds markers cut across chunks at every byte', async () => {
    const w = new DoneWatch(tag);
    expect(byte(w, 'xswt-done-a1b2c3\n', 'stderr')).toBe(true);
    expect(byte(w, 'swt-done-a1b2c3 137\n', 'stdout')).toBe(true);
    await w.done;
    expect(w.code).toBe(137);
  });

  it("takes no other run's tag, no marker without its line end, and no status before its line ends", () => {
    const w = new DoneWatch(tag);
    expect(w.stderr(Buffer.from('swt-done-ffffff\nswt-done-a1b2c3'))).toBe(false);
    expect(w.stdout(Buffer.from('swt-done-a1b2c3 1'))).toBe(false);
    expect(w.code).toBeNull();
    expect(w.stdout(Buffer.from('2\n'))).toBe(true);
    expect(w.code).toBe(12);
  });
});

describe('TailBuffer.cutAt', () => {
  it('drops the last marker and what came after it', () => {
    const t = new TailBuffer(100);
    t.push(Buffer.from('out'));
    t.push(Buffer.from('put swt-done-a1b2c3\nlate'));
    expect(t.cutAt(Buffer.from('swt-done-a1b2c3'))).toBe(true);
    expect(t.toString()).toBe('output ');
    expect(t.cutAt(Buffer.from('swt-done-a1b2c3'))).toBe(false);
  });
});

/** The waiting process under `shell`, given `input`; its stdout and stderr once both markers are out (then it is killed: it only waits). */
function waitingProcess(shell: string, input: Buffer): Promise<{ out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(shell, WAITING_PROCESS.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const w = new DoneWatch(tag);
    p.stdout.on('data', (b: Buffer) => ((out += b.toString()), w.stdout(b)));
    p.stderr.on('data', (b: Buffer) => ((err += b.toString()), w.stderr(b)));
    p.on('error', reject);
    p.on('exit', (code) => reject(new Error(`the waiting process ended (${code}): ${err}`)));
    void w.done.then(() => {
      p.removeAllListeners('exit');
      p.kill('SIGKILL');
      resolve({ out, err });
    });
    p.stdin.end(input);
  });
}

describe.each(['dash', 'bash'])('the waiting process under %s', (shell) => {
  // The script gets the command as $1 and reads what follows the payload on stdin, as tar reads the overlay.
  const script = 'printf "[%s]" "$1" >&2\ncat\nexit 7';
  const command = "  lead\\back $HOME `x` \"q\" 'r'\n\ttab\n\n\\\n";

  it('runs the script with the command byte for byte, leaves what follows the payload unread, and says its status', async () => {
    const input = Buffer.concat([firstCommandInput(script, command, tag)!, Buffer.from('ARCHIVE\0bytes')]);
    const { out, err } = await waitingProcess(shell, input);
    expect(err).toBe(`[${command}]swt-done-${tag}\n`);
    expect(out).toBe(`ARCHIVE\0bytesswt-done-${tag} 7\n`);
  });

  it('a payload it cannot read whole runs nothing: FILL_FAILED, status 97', async () => {
    const whole = firstCommandInput(script, command, tag)!;
    const { out, err } = await waitingProcess(shell, whole.subarray(0, whole.length - 3));
    expect(err).toBe(`swt-done-${tag}\n`);
    expect(out).toBe(`${FILL_FAILED}\nswt-done-${tag} 97\n`);
  });
});
