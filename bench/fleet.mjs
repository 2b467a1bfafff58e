// A federation of many MQTT clients spread over a few processes, for the
// scale figures of bench/federation.mjs, the 500-connection test and
// scripts/mosquitto-bridge.mjs. Each role is a child process of this file:
//
//   node bench/fleet.mjs broker  '<json>'   the embedded broker (aedes) alone, so its RSS is its own
//   node bench/fleet.mjs clients '<json>'   `count` join() clients in one process, connecting in bounded batches
//   node bench/fleet.mjs server  '<json>'   the federation's server: distributed EM for `rounds` rounds
//
// Each prints one JSON line per event on stdout ({event: 'listening' | 'done', ...}).
// The algorithm is distributed EM on a few rows per client (2 features, 3
// components), so what a round costs is the transport's work, not the maths.
// FEDMIX_BENCH_NODELAY=1 forces TCP no-delay on every socket of the process
// (bench/no-delay.mjs), whatever the library sets; FEDMIX_FLEET_PROFILE=<role> writes a
// CPU profile of that role's processes (node --cpu-prof) into the working directory.
import { watchSockets } from './no-delay.mjs';
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DemClient, DemServer, init, join, Matrix, MqttTransport, Rng, runFederation } from '../dist/index.js';
import { SERVER_USER, startBroker, writeMosquittoConfig, MOSQUITTO } from '../dist/node.js';

const SELF = fileURLToPath(import.meta.url);

/** The ids of a fleet of n clients. */
export const fleetIds = (n) => Array.from({ length: n }, (_, i) => `c${i}`);
/** Accounts for the server and n clients (passwords the bench's own). */
export const fleetUsers = (n) => [{ username: SERVER_USER, password: 'server-pw', role: 'server' }, ...fleetIds(n).map((id) => ({ username: id, password: `pw-${id}`, role: 'client' }))];
/** Distributed EM settings of every fleet run: a fixed number of rounds, no convergence stop. */
const demOptions = (rounds) => ({ nComponents: 3, nFeatures: 2, covarianceType: 'diag', init: 'separated', featureRange: [-20, 20], maxRounds: rounds, tol: 0, seed: 1 });

const CENTERS = [[-6, 0], [0, 6], [6, 0]];
/** Client i's rows: 12 points around three fixed centers (unit noise, seeded by i), well inside the declared range. */
function fleetData(i) {
  const rng = new Rng(1 + i);
  const noise = rng.normal(24);
  rng.dispose();
  const m = Matrix.zeros(12, 2);
  for (let r = 0; r < 12; r++) for (let j = 0; j < 2; j++) m.data[j * 12 + r] = CENTERS[r % 3][j] + noise[j * 12 + r];
  return m;
}

/** Resident set now and at its peak (kB) of a process, from /proc (Linux). */
export function procRss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: kb('VmRSS'), peakKb: kb('VmHWM') };
}

/** Starts a child role of this file; resolves with it and a reader of its next event. */
export function startRole(role, config, { noDelay = false } = {}) {
  const child = spawn(process.execPath, [...(process.env.FEDMIX_FLEET_PROFILE === role ? ['--cpu-prof'] : []), SELF, role, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FEDMIX_BENCH_NODELAY: noDelay ? '1' : '0' },
  });
  const events = [];
  const waiters = [];
  let err = '';
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    for (let i; (i = buffered.indexOf('\n')) >= 0; ) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      if (!line.startsWith('{')) continue;
      events.push(JSON.parse(line));
      waiters.shift()?.();
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => (err = (err + chunk).slice(-8000)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  /** the next event of the role (rejects if it exits first) */
  const next = async () => {
    while (events.length === 0) {
      const exit = await Promise.race([new Promise((resolve) => waiters.push(resolve)).then(() => undefined), exited]);
      if (exit && events.length === 0) throw new Error(`fleet ${role} exited (${exit.signal ?? exit.code}) before its next event: ${err.trim().slice(-2000)}`);
    }
    return events.shift();
  };
  return { child, next, exited, stderr: () => err };
}

/**
 * Starts mosquitto as startMosquitto does (writeMosquittoConfig in a fresh
 * directory, then `mosquitto -c`), with `extra` lines appended to its
 * configuration and `extraAcl` to its access list: set_tcp_nodelay, bridges.
 */
export async function startMosquittoWith({ federation, users, port, extra = [], extraAcl = [] }) {
  const dir = await mkdtemp(joinPath(tmpdir(), 'fedmix-bench-mosquitto-'));
  // mosquitto drops root to the account writeMosquittoConfig gives its files to: it must enter the folder
  chmodSync(dir, 0o711);
  const files = await writeMosquittoConfig(dir, { federation, users, port });
  if (extra.length) appendFileSync(files.config, `\n${extra.join('\n')}\n`);
  if (extraAcl.length) appendFileSync(files.aclFile, `\n${extraAcl.join('\n')}\n`);
  const child = spawn(MOSQUITTO, ['-c', files.config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8');
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mosquitto did not start: ${log}`)), 10_000);
    child.stderr.on('data', (chunk) => {
      log = (log + chunk).slice(-16_000);
      if (/mosquitto version \S+ running/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`mosquitto exited (${code}) while starting: ${log}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url: `mqtt://127.0.0.1:${port}`,
    pid: child.pid,
    log: () => log,
    async close() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One federation of `nClients` MQTT clients in `processes` child processes,
 * with its server in another, over `broker` ({url, pid} of a running broker),
 * for `rounds` rounds of distributed EM. Resolves with the per-round
 * milliseconds (the runtime's own record), the server's and each client
 * process's peak RSS and the broker's RSS at the end of the rounds.
 */
export async function fleetRun({ broker, federation, nClients, processes, rounds, noDelay = false, serverUrl = broker.url, batch = 50 }) {
  const server = startRole('server', { url: serverUrl, federation, nClients, rounds }, { noDelay });
  const clientHosts = [];
  try {
    if ((await server.next()).event !== 'connected') throw new Error('the fleet server did not connect');
    const per = Math.ceil(nClients / processes);
    for (let p = 0; p * per < nClients; p++) {
      clientHosts.push(startRole('clients', { url: broker.url, federation, from: p * per, count: Math.min(per, nClients - p * per), batch }, { noDelay }));
    }
    const online = await server.next();
    if (online.event !== 'online') throw new Error(`the fleet server said ${JSON.stringify(online)}`);
    const brokerAtRounds = procRss(broker.pid);
    const done = await server.next();
    if (done.event !== 'done') throw new Error(`the fleet server said ${JSON.stringify(done)}`);
    const brokerAfter = procRss(broker.pid);
    const clients = [];
    for (const h of clientHosts) clients.push(await h.next());
    // each role exits by itself once done (a profile, if asked for, is written then)
    await Promise.race([Promise.all([server, ...clientHosts].map((h) => h.exited)), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    return {
      roundMs: done.roundMs,
      breakdown: done.breakdown,
      connectMs: online.ms,
      accepted: done.accepted,
      failures: done.failures,
      serverPeakKb: done.peakKb,
      brokerRssKb: Math.max(brokerAtRounds.rssKb, brokerAfter.rssKb),
      brokerPeakKb: brokerAfter.peakKb,
      clientPeakKb: clients.map((c) => c.peakKb),
      answered: clients.reduce((s, c) => s + c.answered, 0),
      /** connections of the clients that closed during the run, by reason */
      closed: clients.map((c) => c.closed),
    };
  } finally {
    for (const h of [server, ...clientHosts]) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL');
  }
}

// --- the roles, when run as a child -------------------------------------------------------

const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const peakKb = () => procRss(process.pid).peakKb;

async function brokerRole({ federation, nClients }) {
  const broker = await startBroker({ federation, users: fleetUsers(nClients) });
  say({ event: 'listening', url: broker.url, pid: process.pid });
  process.once('SIGTERM', () => void broker.close().then(() => process.exit(0)));
}

async function clientsRole({ url, federation, from, count, batch }) {
  await init();
  // connections that closed before the end, and why (a client that drops out of a round says so)
  // (while connecting: attempts that timed out and were retried; once the rounds began: connections lost)
  const closed = { connecting: 0, rounds: 0, reasons: {} };
  let rounds = false;
  let ending = false;
  watchSockets((socket) => {
    let error;
    socket.on('error', (e) => (error = e.code ?? e.message));
    socket.on('close', () => {
      if (ending) return;
      closed[rounds ? 'rounds' : 'connecting'] += 1;
      if (rounds) closed.reasons[error ?? 'closed'] = (closed.reasons[error ?? 'closed'] ?? 0) + 1;
    });
  });
  const roles = Array.from({ length: count }, (_, k) => new DemClient(`c${from + k}`, fleetData(from + k)));
  const joins = [];
  // a bounded burst: `batch` connections at a time, a pause between batches
  for (let k = 0; k < count; k += batch) {
    for (const role of roles.slice(k, k + batch)) joins.push(join({ url, federation, client: role, password: `pw-${role.id}`, waitForBroker: 60, onRequest: () => (rounds = true) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const results = await Promise.allSettled(joins);
  ending = true;
  const failed = results.filter((r) => r.status === 'rejected' || !r.value.ok);
  // a client that finished closed its connection once at the end: not a loss
  closed.rounds -= count - failed.length;
  if (failed.length) process.stderr.write(`${failed.length} joins failed: ${String(failed[0].reason ?? failed[0].value.reason)}\n`);
  say({ event: 'done', answered: results.reduce((s, r) => s + (r.status === 'fulfilled' ? r.value.answered : 0), 0), failed: failed.length, closed, peakKb: peakKb() });
  for (const r of roles) r.dispose();
  process.exit(failed.length ? 1 : 0);
}

async function serverRole({ url, federation, nClients, rounds }) {
  await init();
  const ids = fleetIds(nClients);
  const transport = await MqttTransport.connect({ url, federation, username: SERVER_USER, password: 'server-pw', clients: ids, connectTimeout: 30 });
  say({ event: 'connected' });
  const t0 = performance.now();
  const there = await transport.available(nClients, 300_000);
  if (there.length < nClients) throw new Error(`only ${there.length} of ${nClients} clients came online`);
  say({ event: 'online', ms: Math.round(performance.now() - t0) });
  const r = await runFederation(new DemServer(demOptions(rounds)), transport, { roundTimeout: 120, minClients: nClients });
  const em = r.history.filter((h) => h.replies);
  say({
    event: 'done',
    roundMs: em.map((h) => h.ms.configure + h.ms.exchange + h.ms.accept + h.ms.aggregate),
    breakdown: em.map((h) => h.ms),
    accepted: Math.min(...em.map((h) => h.accepted)),
    failures: r.failures.slice(0, 5).map((f) => `${f.client} round ${f.round}: ${f.kind} ${f.reason}`),
    peakKb: peakKb(),
  });
  r.model.dispose();
  process.exit(0);
}

if (process.argv[1] === SELF) {
  const [role, config] = process.argv.slice(2);
  const roles = { broker: brokerRole, clients: clientsRole, server: serverRole };
  if (!roles[role]) throw new Error(`no fleet role ${role}: ${Object.keys(roles).join(', ')}`);
  roles[role](JSON.parse(config)).catch((e) => {
    process.stderr.write(`${e?.stack ?? e}\n`);
    process.exit(1);
  });
}
