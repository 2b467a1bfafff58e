/** Shared by the test files: fixture loading, tolerance checks, bad-input aftermath. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { encodeMessage, FedmixError, GaussianMixture, InvalidParameterError, Matrix, message, type ClientRole, type Message, type ServerRole } from '../ts/index.js';
import { withPrivacy, type PrivacyStep } from '../ts/federated/messages/envelope.js';
import { wasm } from '../ts/wasm/loader.js';
import { Network, type NetworkSpec } from '../ts/models/network.js';

export function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), 'utf8')) as T;
}

/** A matrix from numpy's row-major ravel() of an (n, d) array. */
export function fromRowMajor(values: ArrayLike<number>, n: number, d: number): Matrix {
  const m = Matrix.zeros(n, d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) m.data[j * n + i] = values[i * d + j]!;
  return m;
}

/** Largest |a - b| / max(|b|, floor) over the arrays. */
export function maxRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>, floor = 0): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const err = a === e ? 0 : Math.abs(a - e) / Math.max(Math.abs(e), floor);
    if (!(err <= worst)) worst = err; // NaN also lands here
  }
  return worst;
}

export function maxAbsoluteError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i]! - expected[i]!);
    if (!(err <= worst)) worst = err;
  }
  return worst;
}

import { xorshift32 } from './support/xorshift.mjs';

export { xorshift32 };

/** n rows around `center` with spread s, from a fixed xorshift stream (Box-Muller). */
export function blob(n: number, center: number[], s: number, seed: number): Matrix {
  const next = xorshift32(seed);
  const u = () => (next() + 0.5) / 2 ** 32;
  const g = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  return Matrix.fromRows(Array.from({ length: n }, () => center.map((c) => c + s * g())));
}

/** Seeded data for tests that need some rows: k shifted Gaussian blobs. */
export function blobs(n: number, d: number, k: number, seed: number, spread = 4): Matrix {
  const next = xorshift32(seed);
  const uniform = () => (next() + 0.5) / 2 ** 32;
  const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  const m = Matrix.zeros(n, d);
  for (let i = 0; i < n; i++) {
    const c = i % k;
    for (let j = 0; j < d; j++) m.data[j * n + i] = normal() + spread * (((c + j) % k) - k / 2);
  }
  return m;
}

/** What `fn` throws; the test fails when it throws nothing. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

/** What a check refuses with (an InvalidParameterError's message), or undefined when it takes the value. */
export function refusal(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidParameterError);
    return (e as Error).message;
  }
}

/**
 * Runs `fn`, expects a `type` error (a FedmixError) with a message matching
 * `hint`, and checks the aftermath: the WASM heap is back to what it was and
 * the instance still works.
 */
export function expectClean(fn: () => unknown, type: new (...a: never[]) => FedmixError, hint: RegExp): void {
  const before = wasm().fm_heap_in_use();
  const e = thrown(fn);
  expect(e).toBeInstanceOf(type);
  expect(e).toBeInstanceOf(FedmixError);
  expect(e.message).toMatch(hint);
  expect(wasm().fm_heap_in_use(), 'WASM heap after the error').toBe(before);
  const gm = new GaussianMixture({ nComponents: 2, seed: 0 }).fit(blobs(200, 3, 2, 1));
  expect(gm.converged).toBe(true);
  gm.dispose();
  expect(wasm().fm_heap_in_use()).toBe(before);
}

/**
 * A client role that records what it receives and sends; `edit` may change
 * its replies on their way out (a faulty or hostile client). For clients that
 * answer synchronously.
 */
export class Recording<C extends ClientRole = ClientRole> implements ClientRole {
  readonly received: Message[] = [];
  readonly sent: Message[] = [];
  constructor(
    readonly inner: C,
    private readonly edit?: (reply: Message) => Message,
  ) {}
  get id(): string {
    return this.inner.id;
  }
  get protocol(): ClientRole['protocol'] {
    return this.inner.protocol;
  }
  get users(): number | undefined {
    return this.inner.users;
  }
  respond(m: Message): Message | undefined {
    this.received.push(m);
    let r = this.inner.respond(m) as Message | undefined;
    if (r && this.edit) r = this.edit(r);
    if (r) this.sent.push(r);
    return r;
  }
}

/** An `edit` for Recording that changes a reply's payload as plain JSON values (what a hand-written message would hold). */
export function editPayload(fn: (payload: any) => void): (reply: Message) => Message {
  return (r) => {
    const p = JSON.parse(encodeMessage(r)).payload;
    fn(p);
    return message(r.kind, r.from, r.round, p, r.users);
  };
}

/** Rows around a few 2-D centers, as CSV text (a, b, label) with full-precision numbers: a client parses exactly these. */
export function csvOf(n: number, centers: number[][], seed: number): string {
  const next = xorshift32(seed);
  const u = () => (next() + 0.5) / 2 ** 32;
  const lines = ['a,b,label'];
  for (let i = 0; i < n; i++) {
    const c = i % centers.length;
    const g = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
    lines.push(`${centers[c]![0]! + 0.5 * g()},${centers[c]![1]! + 0.5 * g()},${c}`);
  }
  return lines.join('\n') + '\n';
}

/** `server` with every request that expects a reply declaring `step` (a server adding noise declares it so; clients' ledgers account it). */
export function stamping<A, R>(server: ServerRole<A, R>, step: PrivacyStep): ServerRole<A, R> {
  // the server's accept() takes the request its configure() made
  const made = new WeakMap<Message, Message>();
  const stamp = (m: Message) => {
    if (!server.protocol.exchanges.get(m.kind)?.reply) return m;
    const stamped = withPrivacy(m, step);
    made.set(stamped, m);
    return stamped;
  };
  return {
    get protocol() {
      return server.protocol;
    },
    get done() {
      return server.done;
    },
    configure: (ctx) => new Map([...server.configure(ctx)].map(([id, m]) => [id, stamp(m)])),
    accept: (reply, request, ctx) => server.accept(reply, made.get(request) ?? request, ctx),
    discard: (a) => server.discard?.(a),
    aggregate: (ctx, accepted, failures) => server.aggregate(ctx, accepted, failures),
    result: () => server.result(),
    dispose: () => server.dispose?.(),
  };
}

/** Runs a node script (the built CLI, a hostile client) as a process: its exit status and output once it exits. */
export function runNode(file: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

/** The JSON lines of a --log-format json output (other lines left out). */
export const jsonLines = (text: string) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

/** A classifier's test accuracy: the share of rows whose largest output is at their label, for `parameters` of a network of `spec`. */
export function accuracyOf(spec: NetworkSpec, parameters: Float32Array, X: Matrix, labels: ArrayLike<number>): number {
  const net = new Network(spec);
  try {
    net.setParameters(parameters);
    const p = net.predict(X);
    let hit = 0;
    for (let i = 0; i < p.nRows; i++) {
      let best = 0;
      for (let k = 1; k < p.nCols; k++) if (p.get(i, k) > p.get(i, best)) best = k;
      if (best === labels[i]) hit++;
    }
    return hit / p.nRows;
  } finally {
    net.dispose();
  }
}
