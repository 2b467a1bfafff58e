/**
 * `fedmix server --broker mqtts://... --tls-ca FILE` (serve()'s `broker.ca`):
 * the server trusts a private CA for a broker it does not host. A real
 * mosquitto listens on TLS with a certificate signed by a CA made here with
 * openssl:
 * - the server with --tls-ca and three `fedmix client --tls-ca` processes run
 *   a distributed EM federation to its end (exit status 0, the model written);
 *   serve() with `broker.ca` gives the in-process model;
 * - without it (the system's CAs) or with another CA, the server is refused
 *   at once with an UntrustedBrokerError naming the OpenSSL code (exit status
 *   2), without waiting for clients;
 * - an unreadable --tls-ca, one that is not PEM, --tls-ca without --broker and
 *   a bad `broker.ca` are InvalidParameterErrors before anything connects.
 *
 * Needs `bash scripts/setup.sh` first (dist/cli.cjs, mosquitto, openssl).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, copyFileSync, appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runServerCommand } from '../ts/cli/federation.js';
import { DemClient, DemServer, init, InvalidParameterError, join as joinFederation, Matrix, runFederationSync, UntrustedBrokerError, type GaussianMixture } from '../ts/index.js';
import { serve, SERVER_USER } from '../ts/federated/serve.js';
import { MOSQUITTO, writeMosquittoConfig } from '../ts/federated/transport/mosquitto.js';
import { freePort } from '../ts/federated/transport/ports.js';
import { blobs } from './helpers.js';

const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const FED = 'tlsca';
const IDS = ['c0', 'c1', 'c2'];
const ROWS = IDS.map((_, i) => blobs(90, 2, 2, 70 + i, 4).toRows());
const DEM = { nComponents: 2, nFeatures: 2, covarianceType: 'full' as const, init: 'kfed' as const, seed: 0, maxRounds: 3 };
const dir = mkdtempSync(join(tmpdir(), 'fedmix-tls-ca-'));
const processes: ChildProcess[] = [];
let broker: { url: string; close(): Promise<void>; log(): string } | undefined;

const file = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** A CA, a broker certificate it signs (for localhost and 127.0.0.1), and an unrelated CA. */
function makeCertificates(): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=fedmix test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  openssl('req', ...ec, '-keyout', file('broker.key'), '-out', file('broker.csr'), '-subj', '/CN=localhost');
  writeFileSync(file('broker.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  openssl('x509', '-req', '-in', file('broker.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('broker.pem'), '-days', '2', '-extfile', file('broker.ext'));
  openssl('req', '-x509', ...ec, '-keyout', file('other.key'), '-out', file('other.pem'), '-days', '2', '-subj', '/CN=another CA', '-addext', 'basicConstraints=critical,CA:TRUE');
}

/**
 * mosquitto with writeMosquittoConfig's accounts and access list, and a
 * second listener on TLS with the CA-signed certificate (writeMosquittoConfig
 * writes plain listeners only). Run as root it drops to the mosquitto account,
 * which must read the key: the files are given to it, as writeMosquittoConfig does.
 */
async function startTlsMosquitto(): Promise<{ url: string; close(): Promise<void>; log(): string }> {
  const home = mkdtempSync(join(tmpdir(), 'fedmix-tls-mosquitto-'));
  const root = process.getuid?.() === 0;
  const uid = root ? Number(execFileSync('id', ['-u', 'mosquitto'], { encoding: 'utf8' })) : -1;
  const gid = root ? Number(execFileSync('id', ['-g', 'mosquitto'], { encoding: 'utf8' })) : -1;
  if (root) {
    chownSync(home, 0, gid);
    chmodSync(home, 0o710);
  }
  const users = [{ username: SERVER_USER, password: 'server-pw', role: 'server' as const }, ...IDS.map((id) => ({ username: id, password: `pw-${id}`, role: 'client' as const }))];
  const [plain, tls] = [await freePort(), await freePort()];
  const files = await writeMosquittoConfig(home, { federation: FED, users, port: plain });
  for (const name of ['broker.pem', 'broker.key']) {
    copyFileSync(file(name), join(home, name));
    chmodSync(join(home, name), 0o600);
    if (root) chownSync(join(home, name), uid, gid);
  }
  appendFileSync(files.config, ['', `listener ${tls} 127.0.0.1`, 'protocol mqtt', 'use_username_as_clientid true', `certfile ${join(home, 'broker.pem')}`, `keyfile ${join(home, 'broker.key')}`, ''].join('\n'));
  const child = spawn(MOSQUITTO, ['-c', files.config], { stdio: ['ignore', 'ignore', 'pipe'] });
  processes.push(child);
  let logged = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (logged += d));
  const exited = once(child, 'exit');
  while (!/mosquitto version \S+ running/.test(logged)) {
    const first = await Promise.race([once(child.stderr!, 'data').then(() => 'data'), exited.then(() => 'exit')]);
    if (first === 'exit') throw new Error(`mosquitto exited while starting: ${logged}`);
  }
  return {
    url: `mqtts://localhost:${tls}`,
    log: () => logged,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}

beforeAll(async () => {
  await init();
  makeCertificates();
  writeFileSync(file('clients.txt'), IDS.join('\n') + '\n');
  IDS.forEach((id, i) => writeFileSync(file(`${id}.csv`), 'x,y\n' + ROWS[i]!.map((r) => r.join(',')).join('\n') + '\n'));
  writeFileSync(file('not-pem.txt'), 'a certificate, honestly\n');
  broker = await startTlsMosquitto();
}, 30_000);

afterAll(async () => {
  for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await broker?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `fedmix ...` as a process: its exit status and stderr. */
function run(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; stderr: string; seconds: number }> } {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  processes.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return { child, done: once(child, 'exit').then(([code]) => ({ code: code as number | null, stderr, seconds: (performance.now() - t0) / 1000 })) };
}

const serverArgs = (...extra: string[]) => [
  'server', '--algorithm', 'dem', '--federation', FED, '--broker', broker!.url, '--username', SERVER_USER, '--password', 'server-pw',
  '--clients', file('clients.txt'), '--features', '2', '--components', '2', '--max-rounds', '3', '--round-timeout', '20', '--join-timeout', '30', ...extra,
];

describe('fedmix server --tls-ca over a mosquitto with a private CA', () => {
  test('with --tls-ca the server and its clients run the federation to its end', async () => {
    const server = run(serverArgs('--tls-ca', file('ca.pem'), '--out', file('model.json')));
    const clients = IDS.map((id) => run(['client', '--algorithm', 'dem', '--federation', FED, '--broker', broker!.url, '--id', id, '--password', `pw-${id}`, '--data', file(`${id}.csv`), '--tls-ca', file('ca.pem')]));
    const s = await server.done;
    expect(s.code, s.stderr + broker!.log()).toBe(0);
    for (const c of clients) expect((await c.done).code).toBe(0);
    const model = JSON.parse(readFileSync(file('model.json'), 'utf8'));
    expect(model.algorithm).toBe('dem');
    expect(s.stderr).not.toMatch(/excluded|not trusted/);
    // eslint-disable-next-line no-console
    console.log(`server-tls-ca: a 3-round run over mqtts:// in ${s.seconds.toFixed(1)} s`);
  }, 60_000);

  test('without --tls-ca, or with another CA, the server is refused at once: UntrustedBrokerError, exit status 2', async () => {
    for (const extra of [[], ['--tls-ca', file('other.pem')]]) {
      const s = await run(serverArgs(...extra)).done;
      expect(s.code, s.stderr).toBe(2);
      // the OpenSSL code of a chain that no trusted CA signed, and what to do about it
      expect(s.stderr).toMatch(/fedmix server: the MQTT broker at mqtts:\/\/localhost:\d+ is not trusted \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY):.*--tls-ca\)/);
      // eslint-disable-next-line no-console
      console.log(`server-tls-ca: refused${extra.length ? ' (another CA)' : ''} after ${s.seconds.toFixed(1)} s`);
    }
  }, 60_000);

  test('serve() with broker.ca gives the in-process model; with another CA it is an UntrustedBrokerError', async () => {
    const roles = IDS.map((id, i) => new DemClient(id, Matrix.fromRows(ROWS[i]!)));
    const reference = IDS.map((id, i) => new DemClient(id, Matrix.fromRows(ROWS[i]!)));
    try {
      const inProcess = runFederationSync(new DemServer(DEM), reference);
      const expected = (inProcess.model as GaussianMixture).means.slice();
      inProcess.model.dispose();
      const options = { algorithm: 'dem', options: DEM, federation: FED, clients: IDS.map((id) => ({ id })), minClients: 3, roundTimeout: 20 };
      const account = { url: broker!.url, username: SERVER_USER, password: 'server-pw' };
      await expect(serve({ ...options, broker: { ...account, ca: readFileSync(file('other.pem'), 'utf8') } })).rejects.toThrow(UntrustedBrokerError);
      const served = serve({ ...options, broker: { ...account, ca: readFileSync(file('ca.pem')) } });
      const joins = roles.map((client, i) => joinFederation({ url: broker!.url, federation: FED, client, password: `pw-${IDS[i]}`, ca: readFileSync(file('ca.pem'), 'utf8') }));
      const result = await served;
      for (const r of await Promise.all(joins)) expect(r.ok).toBe(true);
      expect((result.model as GaussianMixture).means).toEqual(expected);
      (result.model as GaussianMixture).dispose();
    } finally {
      for (const c of [...roles, ...reference]) c.dispose();
    }
  }, 60_000);

  test('a --tls-ca that cannot be read or is not PEM, --tls-ca without --broker, and a bad broker.ca: typed errors before anything connects', async () => {
    const o = { algorithm: 'dem', federation: FED, clients: file('clients.txt'), features: 2, components: 2, broker: 'mqtts://127.0.0.1:1', username: SERVER_USER, password: 'x' };
    await expect(runServerCommand({ ...o, 'tls-ca': file('missing.pem') })).rejects.toThrow(new RegExp(`--tls-ca ${file('missing.pem')} cannot be read`));
    await expect(runServerCommand({ ...o, 'tls-ca': file('not-pem.txt') })).rejects.toThrow(/--tls-ca .*not-pem\.txt is not a PEM file/);
    await expect(runServerCommand({ ...o, broker: undefined, 'tls-ca': file('ca.pem') })).rejects.toThrow(/--tls-ca is for --broker/);
    for (const ca of ['not a certificate', [], new Uint8Array(0), 42]) {
      await expect(serve({ algorithm: 'dem', options: DEM, federation: FED, clients: [{ id: 'c0' }], broker: { url: 'mqtts://127.0.0.1:1', ca: ca as string } })).rejects.toThrow(InvalidParameterError);
    }
    await expect(serve({ algorithm: 'dem', options: DEM, federation: FED, clients: [{ id: 'c0' }], broker: { url: 'mqtts://127.0.0.1:1', ca: 'x' } })).rejects.toThrow(/broker\.ca must be a PEM certificate/);
  });
});
