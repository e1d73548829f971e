/**
 * Background threads (src/threads.ts): a real worker thread started from a .ts entry (through
 * tsx's loader, as in every test run), request/response calls, errors crossing with their class
 * name and fields, log lines handed to the owner, and a thread that dies failing its calls.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Thread, ThreadCallError } from '../../src/threads.js';
import { niceOf } from '../support/scheduling.js';

const entry = new URL('../support/threads/echo-thread.js', import.meta.url);

describe('threads', () => {
  const started: Thread[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((t) => t.stop()));
  });
  const start = (data: unknown, events: ConstructorParameters<typeof Thread>[2] = {}) => {
    const thread = new Thread(entry, data, events);
    started.push(thread);
    return thread;
  };

  it('answers calls with what the handler returned, in any order of completion', async () => {
    const thread = start({ greeting: 'hi' });
    await thread.start();
    const slow = thread.call<number>('slow', 60);
    const fast = thread.call<{ greeting: string; value: unknown }>('echo', { n: [1, 2] });
    expect(await fast).toEqual({ greeting: 'hi', value: { n: [1, 2] } });
    expect(await slow).toBe(60);
  });

  it('rejects with the remote error class name, message and fields', async () => {
    const thread = start({ greeting: 'hi' });
    const error = await thread.call('conflict').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThreadCallError);
    expect((error as ThreadCallError).remote).toMatchObject({ name: 'ConflictError', message: 'already taken', fields: { code: 'name_taken' } });
    await expect(thread.call('nope')).rejects.toThrow(/unknown thread method nope/);
  });

  it('reports a failed init from start() and from every call', async () => {
    const thread = start({ greeting: 'hi', failInit: true });
    await expect(thread.start()).rejects.toThrow('init refused');
    await expect(thread.call('echo', 1)).rejects.toThrow('init refused');
  });

  it("hands the thread's log records to the owner, redacted", async () => {
    const records: Array<Record<string, unknown>> = [];
    const thread = start({ greeting: 'hi' }, { onLog: (r) => records.push(r) });
    await thread.call('log', 'from the thread');
    await expect.poll(() => records.length).toBe(1);
    expect(records[0]).toMatchObject({ msg: 'from the thread', detail: 42, level: 40, user: { password: '[redacted]' } });
  });

  it.skipIf(process.platform !== 'linux')('lowers the priority of the calling thread alone, and never raises it', async () => {
    const serving = niceOf(process.pid);
    const thread = start({ greeting: 'hi' });
    const lowered = await thread.call<{ tid: number; nice: number }>('lower', 5);
    expect(lowered).toEqual({ tid: expect.any(Number), nice: 5 });
    expect(lowered.tid).not.toBe(process.pid);
    expect(niceOf(lowered.tid)).toBe(5);
    expect(await thread.call('lower', 3)).toEqual({ tid: lowered.tid, nice: 5 }); // not raised (that needs privileges)
    expect(await thread.call('lower', 0)).toBeNull();
    expect(niceOf(process.pid)).toBe(serving);
  });

  it('fails calls in flight and later ones when the thread exits, and says so once', async () => {
    const exits: Error[] = [];
    const thread = start({ greeting: 'hi' }, { onExit: (e) => exits.push(e) });
    await thread.start();
    const inFlight = thread.call('slow', 5_000);
    await expect(thread.call('exit')).rejects.toThrow(/exited \(code 3\)/);
    await expect(inFlight).rejects.toThrow(/exited/);
    await expect(thread.call('echo', 1)).rejects.toThrow(/exited/);
    expect(thread.alive).toBe(false);
    expect(exits).toHaveLength(1);
  });
});
