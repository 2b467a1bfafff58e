/**
 * The brokers bounded, fast and private (issue 25, items 5, 6 and 9):
 * - a sender announcing a huge packet and streaming megabytes of its body is
 *   closed at the header, by `fedmix server`'s embedded broker (a process of its
 *   own, whose RSS is read) and by mosquitto as writeMosquittoConfig sets it up,
 *   before logging in and after; a connection that never logs in is closed;
 * - the largest honest message (the codec's 64 MiB limit) still passes both;
 * - mosquitto runs as the unprivileged `mosquitto` account, not root;
 * - every socket of the embedded broker and of the clients has TCP no-delay;
 * - TLS: a federation over mqtts:// and wss:// gives the in-process model, and
 *   a client that does not trust the certificate is an UntrustedBrokerError.
 *
 * Needs `bash scripts/setup.sh` first (dist/, mosquitto).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { DemClient, DemServer, init, join, Matrix, MqttTransport, runFederationSync, UntrustedBrokerError, type GaussianMixture } from '../ts/index.js';
import { runServerCommand } from '../ts/cli/federation.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../ts/federated/messages/codec.js';
import { serve, SERVER_USER } from '../ts/federated/serve.js';
import { startBroker } from '../ts/federated/transport/broker.js';
import { startMosquitto, type RunningMosquitto } from '../ts/federated/transport/mosquitto.js';
import { federationTopics } from '../ts/federated/transport/topics.js';
import { blobs } from './helpers.js';

const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const FED = 'limits';
const MiB = 2 ** 20;
const dir = mkdtempSync(pathJoin(tmpdir(), 'fedmix-limits-'));
const processes: ChildProcess[] = [];

beforeAll(async () => {
  await init();
});

afterAll(() => {
  for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A process's resident memory, in bytes (Linux: /proc). */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(kb![1]) * 1024;
}

/** MQTT's remaining length (§2.2.3). */
function remainingLength(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

const utf8 = (s: string) => {
  const b = Buffer.from(s, 'utf8');
  return [b.length >> 8, b.length & 0xff, ...b];
};

/** An MQTT 3.1.1 CONNECT with username (also the client id) and password. */
function connectPacket(username: string, password: string): Buffer {
  const body = [...utf8('MQTT'), 4, 0xc2, 0, 60, ...utf8(username), ...utf8(username), ...utf8(password)];
  return Buffer.from([0x10, ...remainingLength(body.length), ...body]);
}

/**
 * A hostile sender: (optionally logs in, then) sends the fixed header of a
 * packet announcing `announce` bytes and streams `body` bytes of it, 1 MiB at
 * a time, until they are sent or the broker closes the socket.
 */
async function flood(port: number, o: { type: number; announce: number; body: number; login?: [string, string] }): Promise<{ sent: number; closed: boolean }> {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  // the broker closing the socket is what is expected: its errors (EPIPE, ECONNRESET) end the sending, no more
  socket.on('error', () => {});
  let closed = false;
  const gone = new Promise<void>((resolve) => socket.once('close', () => resolve(void (closed = true))));
  const event = (name: string) => Promise.race([new Promise<unknown>((resolve) => socket.once(name, resolve)), gone]);
  await once(socket, 'connect');
  if (o.login) {
    socket.write(connectPacket(...o.login));
    const ack = (await event('data')) as Buffer;
    expect([...ack.subarray(0, 4)]).toEqual([0x20, 2, 0, 0]); // CONNACK, accepted
  }
  socket.write(Buffer.from([o.type, ...remainingLength(o.announce)]));
  const chunk = Buffer.alloc(MiB, 7);
  let sent = 0;
  while (sent < o.body && !closed) {
    const more = socket.write(chunk);
    sent += chunk.length;
    if (!more) await event('drain');
  }
  const wasClosed = closed;
  socket.destroy();
  return { sent, closed: wasClosed };
}

/** A logged-in raw MQTT connection: read(n) resolves with the next n bytes (undefined once the broker closed it first). */
async function session(port: number, username: string, password: string): Promise<{ socket: Socket; read(n: number): Promise<Buffer | undefined> }> {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  const chunks: Buffer[] = [];
  let have = 0;
  let check = () => {};
  let closed = false;
  socket.on('data', (d: Buffer) => {
    chunks.push(d);
    have += d.length;
    check();
  });
  socket.once('close', () => ((closed = true), check()));
  const read = (n: number) =>
    new Promise<Buffer | undefined>((resolve) => {
      check = () => {
        if (have >= n) {
          const all = Buffer.concat(chunks.splice(0));
          chunks.push(all.subarray(n));
          have -= n;
          resolve(all.subarray(0, n));
        } else if (closed) resolve(undefined);
      };
      check();
    });
  await once(socket, 'connect');
  socket.write(connectPacket(username, password));
  expect([...(await read(4))!]).toEqual([0x20, 2, 0, 0]); // CONNACK, accepted
  return { socket, read };
}

const UP = federationTopics(FED).up('c0');
/** A QoS 0 PUBLISH's bytes around its payload on UP, for payloads of 2 MiB or less (3 bytes of remaining length). */
const PUBLISH_HEADER_BYTES = 1 + 3 + 2 + Buffer.byteLength(UP);

/**
 * The server subscribes to c0's replies, c0 publishes `size` bytes there (raw
 * sockets: mqtt.js takes seconds per 64 MiB); whether the server got it all.
 */
async function relay(port: number, size: number): Promise<'delivered' | 'sender closed'> {
  const server = await session(port, SERVER_USER, 'server-pw');
  const client = await session(port, 'c0', 'pw-c0');
  try {
    const filter = [0, 1, ...utf8(UP), 0];
    server.socket.write(Buffer.from([0x82, ...remainingLength(filter.length), ...filter]));
    expect([...(await server.read(5))!]).toEqual([0x90, 3, 0, 1, 0]); // SUBACK, QoS 0 granted
    const head = Buffer.from([0x30, ...remainingLength(2 + Buffer.byteLength(UP) + size), ...utf8(UP)]);
    const payload = Buffer.alloc(size, 5);
    client.socket.write(head);
    client.socket.write(payload);
    // the sender is closed (a PINGREQ answered would say it is not), or the server receives the packet
    const closedOrPong = (async () => {
      client.socket.write(Buffer.from([0xc0, 0]));
      return (await client.read(2)) === undefined ? 'sender closed' : 'ponged';
    })();
    const received = server.read(head.length + size).then((got) => (got && got.subarray(head.length).equals(payload) ? 'delivered' : 'lost'));
    const first = await Promise.race([closedOrPong, received]);
    return first === 'ponged' ? ((await received) as 'delivered') : (first as 'delivered' | 'sender closed');
  } finally {
    client.socket.destroy();
    server.socket.destroy();
  }
}

/** Six sockets announcing a 256 MB CONNECT, each streaming up to 24 MiB of it. */
const CONNECT_FLOOD = { type: 0x10, announce: 268_435_455, body: 24 * MiB };

describe('bounded brokers', () => {
  test('fedmix server: unauthenticated and logged-in senders of huge packets are closed at the header; its RSS stays flat', async () => {
    writeFileSync(pathJoin(dir, 'clients.txt'), 'c0:pw-c0\nc1:pw-c1\n');
    const server = spawn(process.execPath, [CLI, 'server', '--algorithm', 'dem', '--clients', pathJoin(dir, 'clients.txt'), '--features', '2', '--components', '2', '--port', '0', '--federation', FED], { stdio: ['ignore', 'pipe', 'pipe'] });
    processes.push(server);
    let said = '';
    server.stdout!.on('data', (d) => (said += d));
    server.stderr!.on('data', (d) => (said += d));
    while (!/listening on mqtt:\/\/127\.0\.0\.1:(\d+)/.test(said)) await once(server.stderr!, 'data');
    const port = Number(/listening on mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(said)![1]);
    try {
      // the baseline once the server is up (its own connection made, its status retained), not while it still starts
      const c0 = await connectAsync(`mqtt://127.0.0.1:${port}`, { clientId: 'c0', username: 'c0', password: 'pw-c0', reconnectPeriod: 0 });
      const online = new Promise<void>((resolve) => c0.on('message', (_t, payload) => /"online"/.test(String(payload)) && resolve()));
      await c0.subscribeAsync(federationTopics(FED).serverStatus, { qos: 1 });
      await online;
      await c0.endAsync(true);
      const before = rss(server.pid!);
      const floods = await Promise.all(Array.from({ length: 6 }, () => flood(port, CONNECT_FLOOD)));
      // a logged-in client's 100 MB publish: above the 64 MiB message limit, refused at its header too
      floods.push(await flood(port, { type: 0x30, announce: 100_000_000, body: 24 * MiB, login: ['c0', 'pw-c0'] }));
      const growth = rss(server.pid!) - before;
      for (const f of floods) {
        expect(f.closed).toBe(true);
        expect(f.sent).toBeLessThan(24 * MiB);
      }
      // unbounded, the broker would hold 6 x 24 MiB of CONNECT bodies and 24 MiB of the publish
      expect(growth).toBeLessThan(16 * MiB);
      expect(server.exitCode).toBe(null);
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);

  test('mosquitto from writeMosquittoConfig: the same senders are closed, and it runs as the mosquitto account', async () => {
    const broker = await startMosquitto({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }, { username: 'c0', password: 'pw-c0', role: 'client' }] });
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${broker.pid}/status`, 'utf8'))![1]);
      expect(uid).toBe(Number(execFileSync('id', ['-u', 'mosquitto'], { encoding: 'utf8' }).trim()));
      expect(uid).not.toBe(0);
      const before = rss(broker.pid);
      const floods = await Promise.all(Array.from({ length: 6 }, () => flood(broker.port, CONNECT_FLOOD)));
      floods.push(await flood(broker.port, { type: 0x30, announce: 100_000_000, body: 24 * MiB, login: ['c0', 'pw-c0'] }));
      const growth = rss(broker.pid) - before;
      for (const f of floods) {
        expect(f.closed).toBe(true);
        expect(f.sent).toBeLessThan(24 * MiB);
      }
      expect(growth).toBeLessThan(16 * MiB);
    } finally {
      await broker.close();
    }
  }, 60_000);

  test('the largest honest message (the 64 MiB message limit) passes; both brokers count a packet alike (to 3 bytes), so the same limit carries it', async () => {
    const users = [
      { username: SERVER_USER, password: 'server-pw', role: 'server' as const },
      { username: 'c0', password: 'pw-c0', role: 'client' as const },
    ];
    const aedes = await startBroker({ federation: FED, users });
    try {
      expect(await relay(aedes.port, DEFAULT_MAX_MESSAGE_BYTES)).toBe('delivered');
    } finally {
      await aedes.close();
    }
    // at a limit of 1 MiB: a packet of exactly 1 MiB, its headers included, passes; a larger one closes the sender
    const limits = { maxPacketBytes: MiB };
    const small = await startBroker({ federation: FED, users, limits });
    let mosquitto: RunningMosquitto | undefined;
    try {
      mosquitto = await startMosquitto({ federation: FED, users, limits });
      for (const port of [small.port, mosquitto.port]) {
        expect(await relay(port, MiB - PUBLISH_HEADER_BYTES)).toBe('delivered');
        // mosquitto 2.0 leaves the remaining length's bytes (3 here) out of its count: past them it refuses too
        expect(await relay(port, MiB - PUBLISH_HEADER_BYTES + (port === small.port ? 1 : 4))).toBe('sender closed');
      }
    } finally {
      await small.close();
      await mosquitto?.close();
    }
  }, 60_000);

  test('the embedded broker closes a connection that does not log in in time, and a WebSocket frame above the login limit', async () => {
    const logged: string[] = [];
    const broker = await startBroker({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }], webSocketPort: 0, limits: { connectTimeout: 0.5 }, log: (m) => logged.push(m) });
    try {
      // nothing sent; half a CONNECT sent: both closed by the broker
      const idle = tcpConnect({ host: '127.0.0.1', port: broker.port });
      const half = tcpConnect({ host: '127.0.0.1', port: broker.port });
      for (const s of [idle, half]) s.on('error', () => {});
      await once(half, 'connect');
      half.write(connectPacket(SERVER_USER, 'server-pw').subarray(0, 10));
      await Promise.all([once(idle, 'close'), once(half, 'close')]);
      // over WebSockets, one 1 MiB frame before the login: ws refuses it at its header (1009: too big)
      const ws = new WebSocket(broker.wsUrl!, 'mqtt');
      await once(ws, 'open');
      ws.send(Buffer.alloc(MiB));
      const [code] = (await once(ws, 'close')) as [number];
      expect(code).toBe(1009);
    } finally {
      await broker.close();
    }
    // and an honest login over WebSockets, then a packet above the login limit, passes
    const ok = await startBroker({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }], webSocketPort: 0 });
    try {
      const c = await connectAsync(ok.wsUrl!, { clientId: SERVER_USER, username: SERVER_USER, password: 'server-pw', reconnectPeriod: 0 });
      await c.publishAsync(federationTopics(FED).serverStatus, Buffer.alloc(MiB), { qos: 1 });
      expect(c.connected).toBe(true);
      await c.endAsync(true);
    } finally {
      await ok.close();
    }
  }, 30_000);

  test('limits are checked: a typed error names the wrong one', async () => {
    const users = [{ username: SERVER_USER, password: 'server-pw', role: 'server' as const }];
    await expect(startBroker({ federation: FED, users, limits: { maxPacketBytes: 0 } })).rejects.toThrow(/limits\.maxPacketBytes/);
    await expect(startBroker({ federation: FED, users, limits: { maxConnectBytes: 2 ** 40 } })).rejects.toThrow(/limits\.maxConnectBytes/);
    await expect(startBroker({ federation: FED, users, limits: { connectTimeout: -1 } })).rejects.toThrow(/limits\.connectTimeout/);
    await expect(startBroker({ federation: FED, users, limits: { queue: 3 } as never })).rejects.toThrow(/queue/);
    await expect(startBroker({ federation: FED, users, tls: { cert: 'x', key: 'y' } })).rejects.toThrow(/tls\.cert/);
  });
});

describe('TCP no-delay', () => {
  test('the embedded broker and the clients set it on every socket', async () => {
    const calls: { socket: Socket; on: boolean }[] = [];
    const original = Socket.prototype.setNoDelay;
    Socket.prototype.setNoDelay = function (this: Socket, on?: boolean) {
      calls.push({ socket: this, on: on !== false });
      return original.call(this, on);
    };
    const broker = await startBroker({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }, { username: 'c0', password: 'pw-c0', role: 'client' }] });
    const client = new DemClient('c0', Matrix.fromRows([[0, 0], [1, 1]]));
    try {
      const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: ['c0'] });
      const leave = new AbortController();
      const joined = join({ url: broker.url, federation: FED, client, password: 'pw-c0', signal: leave.signal }).catch(() => undefined);
      await transport.available(1, 10_000);
      const brokerSide = calls.filter((c) => c.on && c.socket.localPort === broker.port);
      const clientSide = calls.filter((c) => c.on && c.socket.remotePort === broker.port);
      // the server's and the client's connections, from both ends
      expect(new Set(brokerSide.map((c) => c.socket)).size).toBe(2);
      expect(new Set(clientSide.map((c) => c.socket)).size).toBe(2);
      leave.abort();
      await joined;
      await transport.finish({ ok: true }, 100);
    } finally {
      Socket.prototype.setNoDelay = original;
      client.dispose();
      await broker.close();
    }
  }, 30_000);

  test("mosquitto's configuration sets it", async () => {
    const broker = await startMosquitto({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }] });
    try {
      const config = readFileSync(pathJoin(broker.dir, 'mosquitto.conf'), 'utf8');
      expect(config).toMatch(/^set_tcp_nodelay true$/m);
      expect(config).toMatch(/^max_packet_size 67174400$/m);
      expect(config).toMatch(/^user mosquitto$/m);
    } finally {
      await broker.close();
    }
  }, 30_000);
});

describe('TLS on the embedded broker', () => {
  const DEM = { nComponents: 2, nFeatures: 2, covarianceType: 'diag' as const, init: 'kfed' as const, seed: 3, maxRounds: 4 };
  const ROWS = [0, 1, 2].map((c) => blobs(80, 2, 2, 60 + c, 4).toRows());
  const IDS = ['tcp-0', 'tcp-1', 'wss-0'];
  const modelOf = (m: GaussianMixture) => ({ weights: Array.from(m.weights), means: Array.from(m.means), covariances: Array.from(m.covariances) });

  /** A self-signed certificate for localhost and 127.0.0.1, made now. */
  function selfSigned(): { cert: string; key: string } {
    const keyFile = pathJoin(dir, 'key.pem');
    const certFile = pathJoin(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  }

  test('fedmix server --tls-cert/--tls-key and fedmix client --tls-ca: a run over mqtts:// ends well; the flags are checked', async () => {
    selfSigned(); // cert.pem and key.pem in dir
    writeFileSync(pathJoin(dir, 'tls-clients.txt'), 'c0:pw-c0\n');
    writeFileSync(pathJoin(dir, 'c0.csv'), 'x,y\n' + ROWS[0]!.map((r) => r.join(',')).join('\n') + '\n');
    const common = ['--algorithm', 'dem', '--federation', FED];
    const server = spawn(process.execPath, [CLI, 'server', ...common, '--clients', pathJoin(dir, 'tls-clients.txt'), '--features', '2', '--components', '2', '--max-rounds', '3', '--port', '0', '--tls-cert', pathJoin(dir, 'cert.pem'), '--tls-key', pathJoin(dir, 'key.pem'), '--out', pathJoin(dir, 'tls-model.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
    processes.push(server);
    let said = '';
    server.stderr!.on('data', (d) => (said += d));
    const listening = /listening on (mqtts:\/\/127\.0\.0\.1:\d+)/;
    while (!listening.test(said)) await once(server.stderr!, 'data');
    const client = spawn(process.execPath, [CLI, 'client', ...common, '--broker', listening.exec(said)![1]!, '--id', 'c0', '--password', 'pw-c0', '--data', pathJoin(dir, 'c0.csv'), '--tls-ca', pathJoin(dir, 'cert.pem')], { stdio: 'ignore' });
    processes.push(client);
    const [[serverCode], [clientCode]] = await Promise.all([once(server, 'exit'), once(client, 'exit')]);
    expect(serverCode, said).toBe(0);
    expect(clientCode).toBe(0);
    expect(JSON.parse(readFileSync(pathJoin(dir, 'tls-model.json'), 'utf8'))).toBeTruthy();
    // a key without its certificate, and TLS for a broker the server does not host: refused before anything listens
    const server2 = { algorithm: 'dem', federation: FED, clients: pathJoin(dir, 'tls-clients.txt'), features: 2, components: 2 };
    await expect(runServerCommand({ ...server2, 'tls-key': pathJoin(dir, 'key.pem') })).rejects.toThrow(/--tls-cert and --tls-key go together/);
    await expect(runServerCommand({ ...server2, broker: 'mqtt://127.0.0.1:1', 'tls-cert': pathJoin(dir, 'cert.pem'), 'tls-key': pathJoin(dir, 'key.pem') })).rejects.toThrow(/are for the embedded broker/);
  }, 60_000);

  test('serve() over mqtts:// and wss:// gives the in-process model; an untrusting client is an UntrustedBrokerError', async () => {
    const tls = selfSigned();
    const roles = IDS.map((id, i) => new DemClient(id, Matrix.fromRows(ROWS[i]!)));
    const reference = IDS.map((id, i) => new DemClient(id, Matrix.fromRows(ROWS[i]!)));
    try {
      const inProcess = runFederationSync(new DemServer(DEM), reference);
      const expected = modelOf(inProcess.model);
      inProcess.model.dispose();
      let urls: { url: string; wsUrl?: string } | undefined;
      let listening: () => void = () => {};
      const ready = new Promise<void>((resolve) => (listening = resolve));
      const run = serve({
        algorithm: 'dem',
        options: DEM,
        federation: FED,
        clients: IDS.map((id) => ({ id, password: `pw-${id}` })),
        listen: { port: 0, webSocketPort: 0, tls },
        minClients: 3,
        roundTimeout: 30,
        onListening: (u) => ((urls = u), listening()),
      });
      await ready;
      expect(urls!.url).toMatch(/^mqtts:\/\/127\.0\.0\.1:\d+$/);
      expect(urls!.wsUrl).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/mqtt$/);
      // no CA given: the system's do not vouch for a self-signed certificate, over either listener
      for (const url of [urls!.url, urls!.wsUrl!]) {
        await expect(join({ url, federation: FED, client: roles[0]!, password: 'pw-tcp-0', waitForBroker: 5 })).rejects.toThrow(UntrustedBrokerError);
      }
      // a certificate pinned by another fingerprint is refused as untrusted too, even with its CA given
      const other = Array.from({ length: 32 }, () => 'AB').join(':');
      await expect(MqttTransport.connect({ url: urls!.url, federation: FED, username: 'x', password: 'y', ca: tls.cert, certificateFingerprint: other })).rejects.toThrow(UntrustedBrokerError);
      const joins = roles.map((client, i) => join({ url: i < 2 ? urls!.url : urls!.wsUrl!, federation: FED, client, password: `pw-${IDS[i]}`, ca: tls.cert }));
      const result = await run;
      for (const r of await Promise.all(joins)) expect(r.ok).toBe(true);
      expect(modelOf(result.model as GaussianMixture)).toEqual(expected);
      (result.model as GaussianMixture).dispose();
    } finally {
      for (const c of [...roles, ...reference]) c.dispose();
    }
  }, 60_000);
});
