// Deposit addresses and their QR codes are made off the request thread. One costs about 120 µs of
// CPU (derivation about 45, the QR code and its PNG about 75), as much as the request thread spends on
// a create; on a thread of its own it runs beside the HTTP and database work, so creates use a second
// core (bench:server has the figures). The address pool (pool.ts) asks it ahead of the creates.
import { Worker } from 'node:worker_threads';
import type { Network } from '../shared/network.js';

export interface IssuedAddress {
  address: string;
  qr: string;
}

/** What the thread is asked: the addresses of a batch of indexes. */
export type AddressRequest = [id: number, indexes: [network: Network, index: number][]];
/** The last message the thread reads: it lets go of its port and ends when its turn is over. */
export const STOP = 'stop';
/** What it answers for each: the address and its QR code, or why the index has none. */
export type AddressReply = [id: number, issued: (IssuedAddress | string)[]];

// From the TypeScript sources (tests, benches) the thread needs tsx to load its module; the built
// platform runs the compiled thread-entry.js with plain node.
const fromSources = import.meta.url.endsWith('.ts');
const ENTRY = new URL(fromSources ? './thread-entry.ts' : './thread-entry.js', import.meta.url);

type Waiting = Map<number, { resolve: (issued: (IssuedAddress | Error)[]) => void; reject: (error: Error) => void }>;

export class AddressThread {
  private thread: { handle: Worker; waiting: Waiting } | undefined;
  private nextId = 0;

  constructor(private readonly xpubs: Record<Network, string>) {}

  private start(): { handle: Worker; waiting: Waiting } {
    const workerData = this.xpubs;
    // Node calls a thread's handle a Worker; here it is the address thread, nothing else.
    const handle = fromSources
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(ENTRY.href)}); })`, { eval: true, workerData })
      : new Worker(ENTRY, { workerData });
    const thread = { handle, waiting: new Map() as Waiting };
    handle.on('message', ([id, issued]: AddressReply) => {
      thread.waiting.get(id)?.resolve(issued.map((one) => (typeof one === 'string' ? new RangeError(one) : one)));
      thread.waiting.delete(id);
      // Idle, it lets the process end; once close() has let go of it, it keeps the process until it exits.
      if (thread.waiting.size === 0 && this.thread === thread) handle.unref();
    });
    // A thread that dies fails what it was asked; the next request starts a new one.
    const fail = (error: Error) => {
      if (this.thread === thread) this.thread = undefined;
      for (const { reject } of thread.waiting.values()) reject(error);
      thread.waiting.clear();
    };
    handle.on('error', fail);
    handle.on('exit', (code) => fail(new Error(`the address thread exited with code ${code}`)));
    // An idle thread does not keep the process alive; one with requests waiting does (see issue).
    handle.unref();
    return thread;
  }

  /** The address of each index and its QR code (or the error of an index that has none): one message each way. */
  issue(indexes: readonly (readonly [Network, number])[]): Promise<(IssuedAddress | Error)[]> {
    const { handle, waiting } = (this.thread ??= this.start());
    const id = this.nextId++;
    if (waiting.size === 0) handle.ref();
    handle.postMessage([id, indexes]);
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }

  /**
   * Stops the thread once it has answered everything it was asked (the stop is queued behind it). It
   * is never terminated: a thread stopped inside node:zlib's deflateSync aborts the whole process
   * (Node 20 and 24, `Assertion failed: init_done_ && "close before init"`).
   */
  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    if (!thread) return;
    // Gone either way: ended after its work, or died on it (that error went to 'error' above).
    const exited = new Promise((resolve) => thread.handle.once('exit', resolve));
    thread.handle.ref(); // the process waits for it
    thread.handle.postMessage(STOP);
    await exited;
  }
}
