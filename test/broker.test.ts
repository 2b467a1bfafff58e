/**
 * The federation's two brokers, the embedded one (aedes) and mosquitto, under
 * the same accounts and access list, each exercised by real mqtt.js clients.
 * Where they differ in how they refuse (within MQTT 3.1.1), the harness says so.
 *
 * "Nothing was delivered" is checked with a fence: a message the receiver may
 * get, sent after the forbidden one; once the fence is in, the forbidden one
 * would have been too.
 */
import { existsSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import mqtt from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import { startBroker, type RunningBroker } from '../ts/federated/transport/broker.js';
import { BrokerError } from '../ts/errors.js';
import { startMosquitto, type RunningMosquitto } from '../ts/federated/transport/mosquitto.js';
import { federationTopics, OFFLINE, ONLINE, type BrokerAccount } from '../ts/federated/transport/topics.js';

// a broker that fails to answer fails the test in seconds, not at the suite's 120 s
vi.setConfig({ testTimeout: 10_000, hookTimeout: 15_000 });

const FEDERATION = 'fed-1';
const topics = federationTopics(FEDERATION);
const CLIENTS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'kim', 'lee'] as const;
const users: BrokerAccount[] = [
  { username: 'coordinator', password: 'server-secret', role: 'server' },
  ...CLIENTS.map((c) => ({ username: c, password: `${c}-secret`, role: 'client' as const })),
];
const password = (username: string): string => users.find((u) => u.username === username)!.password;

interface Harness {
  name: string;
  start(): Promise<RunningBroker>;
  /** CONNACK return code for a wrong password, an unknown user, no credentials */
  refusedConnack: number;
  /** aedes answers a refused subscription with 128; mosquitto's acl_file grants it and delivers nothing */
  refusesSubscriptions: boolean;
  /** aedes closes the connection of a refused publish; mosquitto acknowledges and drops it */
  closesOnRefusedPublish: boolean;
  /** the embedded broker's offline queues, capped small here (OFFLINE_CAP), and what it logged */
  offline?: { log: string[] };
}

/** Small offline queues for the embedded broker of this file: every other test's persistent sessions fit them. */
const OFFLINE_CAP = { maxOfflineMessages: 3, maxOfflineBytes: 2048 };
const embeddedLog: string[] = [];

const harnesses: Harness[] = [
  {
    name: 'embedded broker (aedes)',
    start: () => startBroker({ federation: FEDERATION, users, webSocketPort: 0, limits: OFFLINE_CAP, log: (m) => embeddedLog.push(m) }),
    refusedConnack: 4,
    refusesSubscriptions: true,
    closesOnRefusedPublish: true,
    offline: { log: embeddedLog },
  },
  {
    name: 'mosquitto',
    start: () => startMosquitto({ federation: FEDERATION, users, webSocketPort: 0 }),
    refusedConnack: 5,
    refusesSubscriptions: false,
    closesOnRefusedPublish: false,
  },
];

interface Received {
  topic: string;
  payload: string;
}

/** A connected mqtt.js client and everything it has received. */
interface Peer {
  client: mqtt.MqttClient;
  received: Received[];
  sessionPresent: boolean;
  /** resolves with the first message (already received or to come) that `match` accepts */
  next(match: (m: Received) => boolean, ms?: number): Promise<Received>;
}

const open = new Set<mqtt.MqttClient>();

/** Connects without automatic reconnection; rejects with mqtt.js' error (its `code` is the CONNACK code). */
function connectPeer(url: string, options: mqtt.IClientOptions): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...options });
    open.add(client);
    const received: Received[] = [];
    const waiting = new Set<(m: Received) => void>();
    // listening from the start: a persistent session's queue arrives right after CONNACK
    client.on('message', (topic, payload) => {
      const m = { topic, payload: payload.toString() };
      received.push(m);
      for (const w of waiting) w(m);
    });
    const next = (match: (m: Received) => boolean, ms = 5000): Promise<Received> => {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((res, rej) => {
        const timer = setTimeout(() => {
          waiting.delete(w);
          rej(new Error(`no matching message within ${ms} ms; received ${JSON.stringify(received)}`));
        }, ms);
        const w = (m: Received): void => {
          if (!match(m)) return;
          clearTimeout(timer);
          waiting.delete(w);
          res(m);
        };
        waiting.add(w);
      });
    };
    client.once('connect', (connack) => resolve({ client, received, sessionPresent: connack.sessionPresent, next }));
    client.once('error', (e) => {
      client.end(true);
      reject(e);
    });
  });
}

function asUser(username: string, extra: mqtt.IClientOptions = {}): mqtt.IClientOptions {
  return { username, password: password(username), ...extra };
}

/**
 * The SUBACK's granted values for `filters` at QoS 1. mqtt.js rejects a SUBACK
 * holding a failure (128), with the packet attached; its values are what counts here.
 */
async function subscribe(peer: Peer, filters: string | string[]): Promise<number[]> {
  try {
    return (await peer.client.subscribeAsync(filters, { qos: 1 })).map((g) => g.qos);
  } catch (e) {
    const granted = (e as { packet?: { granted?: number[] } }).packet?.granted;
    if (!granted) throw e;
    return granted;
  }
}

const on = (topic: string, payload?: string) => (m: Received) => m.topic === topic && (payload === undefined || m.payload === payload);

/** Ends a client with DISCONNECT (no last will). */
const end = (peer: Peer): Promise<void> => peer.client.endAsync();

afterEach(async () => {
  await Promise.all([...open].map((c) => c.endAsync(true)));
  open.clear();
});

describe.each(harnesses)('$name', (h) => {
  let broker: RunningBroker;
  /** the server, subscribed to every client's replies and status */
  let server: Peer;
  beforeAll(async () => {
    broker = await h.start();
  });
  afterAll(async () => {
    await broker?.close();
  });
  const startServer = async (): Promise<Peer> => {
    server = await connectPeer(broker.url, asUser('coordinator'));
    expect(await subscribe(server, [topics.allUp, topics.allStatus])).toEqual([1, 1]);
    return server;
  };

  test('the server and a client with the right passwords connect', async () => {
    const s = await connectPeer(broker.url, asUser('coordinator'));
    const c = await connectPeer(broker.url, asUser('alice'));
    expect(s.client.connected && c.client.connected).toBe(true);
  });

  test(`a wrong password, an unknown user and no credentials are refused with CONNACK ${h.refusedConnack}`, async () => {
    for (const options of [
      { username: 'alice', password: 'bob-secret' },
      { username: 'alice', password: '' },
      { username: 'mallory', password: 'alice-secret' },
      {},
    ]) {
      await expect(connectPeer(broker.url, options), JSON.stringify(options)).rejects.toMatchObject({ code: h.refusedConnack });
    }
  });

  test("a client's reply on its up topic reaches the server", async () => {
    await startServer();
    const alice = await connectPeer(broker.url, asUser('alice'));
    await alice.client.publishAsync(topics.up('alice'), 'reply 1', { qos: 1 });
    expect(await server.next(on(topics.up('alice')))).toEqual({ topic: topics.up('alice'), payload: 'reply 1' });
  });

  test("a client cannot subscribe to another client's requests, to wildcards or to another federation", async () => {
    await startServer();
    const bob = await connectPeer(broker.url, asUser('bob'));
    expect(await subscribe(bob, topics.down('bob'))).toEqual([1]);
    const alice = await connectPeer(broker.url, asUser('alice'));
    expect(await subscribe(alice, topics.down('alice'))).toEqual([1]);
    const forbidden = [topics.down('bob'), topics.allDown, `fedmix/${FEDERATION}/clients/bob/#`, `fedmix/${FEDERATION}/#`, 'fedmix/#', '#', 'fedmix/other/broadcast'];
    for (const filter of forbidden) {
      expect(await subscribe(alice, filter), filter).toEqual([h.refusesSubscriptions ? 128 : 1]);
    }
    await server.client.publishAsync(topics.down('bob'), 'for bob only', { qos: 1 });
    await bob.next(on(topics.down('bob'), 'for bob only'));
    await server.client.publishAsync(topics.down('alice'), 'fence', { qos: 1 });
    await alice.next(on(topics.down('alice'), 'fence'));
    expect(alice.received).toEqual([{ topic: topics.down('alice'), payload: 'fence' }]);
  });

  test("a client's publish to another client's topics is not delivered", async () => {
    await startServer();
    const alice = await connectPeer(broker.url, asUser('alice'));
    const closed = new Promise<void>((resolve) => alice.client.once('close', () => resolve()));
    const forged = new Promise<string>((resolve) => {
      alice.client.publish(topics.up('bob'), 'forged', { qos: 1 }, (e) => resolve(e ? 'failed' : 'acknowledged'));
    });
    if (h.closesOnRefusedPublish) {
      await closed;
    } else {
      expect(await forged).toBe('acknowledged');
      expect(alice.client.connected).toBe(true);
    }
    const bob = await connectPeer(broker.url, asUser('bob'));
    await bob.client.publishAsync(topics.up('bob'), 'fence', { qos: 1 });
    await server.next(on(topics.up('bob'), 'fence'));
    expect(server.received).toEqual([{ topic: topics.up('bob'), payload: 'fence' }]);
  });

  test('QoS 1 reaches a client that was offline when it was sent, through its persistent session', async () => {
    await startServer();
    const first = await connectPeer(broker.url, asUser('dave', { clientId: 'dave', clean: false }));
    await first.client.subscribeAsync(topics.down('dave'), { qos: 1 });
    await end(first);
    await server.client.publishAsync(topics.down('dave'), 'request while offline', { qos: 1 });
    const back = await connectPeer(broker.url, asUser('dave', { clientId: 'dave', clean: false }));
    expect(back.sessionPresent).toBe(true);
    expect(await back.next(on(topics.down('dave')))).toEqual({ topic: topics.down('dave'), payload: 'request while offline' });
  });

  if (h.offline) {
    const logged = h.offline.log;
    test('the queue of a client away is capped (messages, then bytes): newer messages are dropped, counted and logged; it gets the rest when back', async () => {
      await startServer();
      const heidi = { clientId: 'heidi', clean: false };
      const first = await connectPeer(broker.url, asUser('heidi', heidi));
      await first.client.subscribeAsync(topics.down('heidi'), { qos: 1 });
      await end(first);
      for (const i of [1, 2, 3, 4, 5]) await server.client.publishAsync(topics.down('heidi'), `request ${i}`, { qos: 1 });
      expect(broker.droppedOffline!()).toEqual({ heidi: 2 });
      expect(logged.filter((m) => m.includes('offline queue of heidi is full'))).toHaveLength(1);
      let back = await connectPeer(broker.url, asUser('heidi', heidi));
      // back, it is sent the three kept; once it has acknowledged them, the fence
      // has room and arrives after them, and nothing dropped comes
      await back.next(on(topics.down('heidi'), 'request 3'));
      await vi.waitFor(() => expect(broker.queued!().heidi).toBeUndefined());
      await server.client.publishAsync(topics.down('heidi'), 'fence', { qos: 1 });
      await back.next(on(topics.down('heidi'), 'fence'));
      expect(back.received.map((m) => m.payload)).toEqual(['request 1', 'request 2', 'request 3', 'fence']);
      expect(logged.at(-1)).toBe('heidi is back: 2 messages were dropped for it while it was away (its offline queue was full)');
      // its queue emptied as it acknowledged: away again, 2048 bytes hold one 1500-byte message, not two
      await end(back);
      const big = (c: string) => c.repeat(1500);
      await server.client.publishAsync(topics.down('heidi'), big('a'), { qos: 1 });
      await server.client.publishAsync(topics.down('heidi'), big('b'), { qos: 1 });
      expect(broker.droppedOffline!()).toEqual({ heidi: 3 });
      back = await connectPeer(broker.url, asUser('heidi', heidi));
      await server.client.publishAsync(topics.down('heidi'), 'fence 2', { qos: 1 });
      await back.next(on(topics.down('heidi'), 'fence 2'));
      expect(back.received.map((m) => m.payload)).toEqual([big('a'), 'fence 2']);
      expect(logged.filter((m) => m.includes('offline queue of heidi is full'))).toHaveLength(2);
    });

    /**
     * A client connected with a persistent session that never acknowledges
     * (mqtt.js sends PUBACK once handleMessage calls back without an error: an
     * error withholds it and goes on to the next packet) and the ids it was sent.
     */
    const withholding = async (id: string): Promise<{ peer: Peer; withheld: number[] }> => {
      const peer = await connectPeer(broker.url, asUser(id, { clientId: id, clean: false }));
      const withheld: number[] = [];
      peer.client.handleMessage = (packet, callback) => {
        if (packet.qos > 0) withheld.push(packet.messageId!);
        callback(packet.qos > 0 ? new Error('no PUBACK') : undefined);
      };
      await peer.client.subscribeAsync(topics.down(id), { qos: 1 });
      return { peer, withheld };
    };
    /** PUBACK (MQTT 3.1.1 §3.4), written by hand for the ids mqtt.js was told not to acknowledge */
    const puback = (peer: Peer, ids: number[]): void => {
      for (const id of ids) peer.client.stream.write(Buffer.from([0x40, 2, id >> 8, id & 0xff]));
    };
    /** What a message costs the queue: payload and topic. */
    const cost = (topic: string, payload: string) => Buffer.byteLength(topic) + Buffer.byteLength(payload);
    /**
     * QoS 0 is never queued: sent after the QoS 1 messages, once it is in, any
     * of them not dropped would have been too.
     */
    const fence = async (peer: Peer, id: string, text: string) => {
      await server.client.publishAsync(topics.down(id), text, { qos: 0 });
      await peer.next(on(topics.down(id), text));
    };

    test('a connected client that never acknowledges is sent at most the limit; the rest is dropped, counted and logged, until it acknowledges', async () => {
      await startServer();
      const { peer: ivan, withheld } = await withholding('ivan');
      const limit = OFFLINE_CAP.maxOfflineMessages;
      const sent = Array.from({ length: limit + 50 }, (_, i) => `request ${i + 1}`);
      for (const m of sent) await server.client.publishAsync(topics.down('ivan'), m, { qos: 1 });
      await fence(ivan, 'ivan', 'fence');
      expect(ivan.received.map((m) => m.payload)).toEqual([...sent.slice(0, limit), 'fence']);
      expect(withheld).toHaveLength(limit);
      expect(broker.droppedOffline!().ivan).toBe(50);
      // the broker holds what it sent, and nothing more
      const held = { messages: limit, bytes: sent.slice(0, limit).reduce((n, m) => n + cost(topics.down('ivan'), m), 0) };
      expect(broker.queued!().ivan).toEqual(held);
      const full = `ivan does not acknowledge its messages: its queue is full (${limit} messages, ${held.bytes} bytes; limits ${limit} messages, 2048 bytes): new messages for it are dropped until it acknowledges`;
      expect(logged.filter((m) => m.startsWith('ivan '))).toEqual([full]);
      // it acknowledges: its queue empties, the episode ends, and new messages flow again (acknowledged as they come)
      puback(ivan, withheld);
      await vi.waitFor(() => expect(broker.queued!().ivan).toBeUndefined());
      expect(logged.filter((m) => m.startsWith('ivan '))).toEqual([full, 'ivan acknowledges again: 50 messages were dropped for it while its queue was full']);
      delete (ivan.client as Partial<mqtt.MqttClient>).handleMessage;
      // one at a time, as the server sends requests: more than the limit in all
      for (const m of ['again 1', 'again 2', 'again 3', 'again 4', 'again 5']) {
        await server.client.publishAsync(topics.down('ivan'), m, { qos: 1 });
        await ivan.next(on(topics.down('ivan'), m));
      }
      expect(ivan.received.slice(limit + 1).map((m) => m.payload)).toEqual(['again 1', 'again 2', 'again 3', 'again 4', 'again 5']);
      await vi.waitFor(() => expect(broker.queued!().ivan).toBeUndefined());
      expect(broker.droppedOffline!().ivan).toBe(50);
    });

    test('the bytes limit holds for a connected client too; one that reconnects and acknowledges is sent new messages again', async () => {
      await startServer();
      const { peer: judy } = await withholding('judy');
      const big = (c: string) => c.repeat(1500);
      // 2048 bytes: the first 1500-byte message always goes (an empty queue), the next two do not fit, a small one does
      for (const m of [big('a'), big('b'), big('c'), 'small']) await server.client.publishAsync(topics.down('judy'), m, { qos: 1 });
      await fence(judy, 'judy', 'fence');
      expect(judy.received.map((m) => m.payload)).toEqual([big('a'), 'small', 'fence']);
      expect(broker.droppedOffline!().judy).toBe(2);
      const down = topics.down('judy');
      expect(broker.queued!().judy).toEqual({ messages: 2, bytes: cost(down, big('a')) + cost(down, 'small') });
      // away, it is still full: dropped
      await end(judy);
      await server.client.publishAsync(down, big('d'), { qos: 1 });
      expect(broker.droppedOffline!().judy).toBe(3);
      // back with an mqtt.js client that acknowledges: the two it held come again, then new messages flow
      const back = await connectPeer(broker.url, asUser('judy', { clientId: 'judy', clean: false }));
      await back.next(on(down, 'small'));
      await vi.waitFor(() => expect(broker.queued!().judy).toBeUndefined());
      await server.client.publishAsync(down, big('e'), { qos: 1 });
      await back.next(on(down, big('e')));
      expect(back.received.map((m) => m.payload)).toEqual([big('a'), 'small', big('e')]);
      expect(broker.droppedOffline!().judy).toBe(3);
      expect(logged.filter((m) => m.startsWith('judy ')).at(-1)).toBe('judy acknowledges again: 3 messages were dropped for it while its queue was full');
    });

    test('of messages sent together, those beyond the limit are dropped and the one kept still goes out, to a client that stays connected', async () => {
      // aedes clears a dropped message by a packet without an id: left to aedes-persistence, that would
      // clear the kept one, still on its way, and its delivery would fail and close the client
      await startServer();
      const { peer: lee } = await withholding('lee');
      const down = topics.down('lee');
      for (const m of ['one', 'two']) await server.client.publishAsync(down, m, { qos: 1 });
      await Promise.all(['three', 'four', 'five'].map((m) => server.client.publishAsync(down, m, { qos: 1 })));
      await fence(lee, 'lee', 'fence');
      expect(lee.received.map((m) => m.payload)).toEqual(['one', 'two', 'three', 'fence']);
      expect(lee.client.connected).toBe(true);
      expect(broker.droppedOffline!().lee).toBe(2);
      expect(broker.queued!().lee).toEqual({ messages: 3, bytes: ['one', 'two', 'three'].reduce((n, m) => n + cost(down, m), 0) });
    });

    test('an honest client, answering each request as the federation does, is never capped', async () => {
      // many more requests than the limit, each sent once the last is answered: its PUBACK goes before its reply
      await startServer();
      const kim = await connectPeer(broker.url, asUser('kim', { clientId: 'kim', clean: false }));
      kim.client.on('message', (_topic, payload) => void kim.client.publishAsync(topics.up('kim'), `reply to ${payload.toString()}`, { qos: 1 }));
      await kim.client.subscribeAsync(topics.down('kim'), { qos: 1 });
      const requests = Array.from({ length: 10 * OFFLINE_CAP.maxOfflineMessages }, (_, i) => `request ${i + 1}`);
      for (const r of requests) {
        await server.client.publishAsync(topics.down('kim'), r, { qos: 1 });
        await server.next(on(topics.up('kim'), `reply to ${r}`));
      }
      expect(kim.received.map((m) => m.payload)).toEqual(requests);
      expect(broker.droppedOffline!().kim).toBeUndefined();
      expect(logged.filter((m) => m.includes('kim'))).toEqual([]);
    });
  }

  test('a refused subscription of a persistent session receives nothing when the client returns', async () => {
    // aedes stores every topic of a SUBSCRIBE packet in the session, the refused
    // one too, and queues its messages: the forward check must stop them
    await startServer();
    const first = await connectPeer(broker.url, asUser('frank', { clientId: 'frank', clean: false }));
    expect(await subscribe(first, [topics.down('frank'), topics.down('grace')])).toEqual([1, h.refusesSubscriptions ? 128 : 1]);
    await end(first);
    await server.client.publishAsync(topics.down('grace'), 'for grace only', { qos: 1 });
    await server.client.publishAsync(topics.down('frank'), 'fence', { qos: 1 });
    const back = await connectPeer(broker.url, asUser('frank', { clientId: 'frank', clean: false }));
    await back.next(on(topics.down('frank'), 'fence'));
    expect(back.received).toEqual([{ topic: topics.down('frank'), payload: 'fence' }]);
  });

  test("a client killed without DISCONNECT is announced by its last will on its status topic", async () => {
    await startServer();
    const will = { topic: topics.status('erin'), payload: Buffer.from(OFFLINE), qos: 1 as const, retain: false };
    const erin = await connectPeer(broker.url, asUser('erin', { will }));
    await erin.client.publishAsync(topics.status('erin'), ONLINE, { qos: 1 });
    await server.next(on(topics.status('erin'), ONLINE));
    erin.client.stream.destroy(); // the socket dies: no DISCONNECT reaches the broker
    await server.next(on(topics.status('erin'), OFFLINE));
  });

  test("the server's retained status reaches clients that subscribe later, and its last will retains OFFLINE", async () => {
    const will = { topic: topics.serverStatus, payload: Buffer.from(OFFLINE), qos: 1 as const, retain: true };
    const coordinator = await connectPeer(broker.url, asUser('coordinator', { will }));
    await coordinator.client.publishAsync(topics.serverStatus, ONLINE, { qos: 1, retain: true });
    const alice = await connectPeer(broker.url, asUser('alice'));
    expect(await subscribe(alice, topics.serverStatus)).toEqual([1]);
    await alice.next(on(topics.serverStatus, ONLINE));
    coordinator.client.stream.destroy();
    await alice.next(on(topics.serverStatus, OFFLINE));
    const bob = await connectPeer(broker.url, asUser('bob'));
    expect(await subscribe(bob, topics.serverStatus)).toEqual([1]);
    await bob.next(on(topics.serverStatus, OFFLINE));
    expect(bob.received).toEqual([{ topic: topics.serverStatus, payload: OFFLINE }]);
  });

  test("the username is the client id: another user's client id does not take over its session", async () => {
    const bob = await connectPeer(broker.url, asUser('bob', { clientId: 'bob' }));
    const bobClosed = new Promise<string>((resolve) => bob.client.once('close', () => resolve('bob was disconnected')));
    const alice = await connectPeer(broker.url, asUser('alice', { clientId: 'bob' }));
    expect(await subscribe(alice, topics.down('alice'))).toEqual([1]);
    // a round trip of bob's after alice's CONNACK: a takeover would have closed bob by then
    expect(await Promise.race([subscribe(bob, topics.down('bob')), bobClosed])).toEqual([1]);
  });

  test('a browser-style client over WebSockets exchanges messages with the server', async () => {
    expect(broker.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/mqtt$/);
    await startServer();
    const carol = await connectPeer(broker.wsUrl!, asUser('carol'));
    await carol.client.subscribeAsync(topics.down('carol'), { qos: 1 });
    await carol.client.publishAsync(topics.up('carol'), 'reply over ws', { qos: 1 });
    expect(await server.next(on(topics.up('carol')))).toEqual({ topic: topics.up('carol'), payload: 'reply over ws' });
    await server.client.publishAsync(topics.down('carol'), 'request over ws', { qos: 1 });
    expect(await carol.next(on(topics.down('carol')))).toEqual({ topic: topics.down('carol'), payload: 'request over ws' });
  });

  test('close() disconnects clients and frees the ports', async () => {
    const own = await h.start();
    const alice = await connectPeer(own.url, asUser('alice'));
    const closed = new Promise<void>((resolve) => alice.client.once('close', () => resolve()));
    await own.close();
    await closed;
    for (const port of [own.port, own.wsPort!]) expect(await accepts(port)).toBe(false);
    if ('pid' in own) {
      const m = own as RunningMosquitto;
      expect(() => process.kill(m.pid, 0)).toThrow(/ESRCH/);
      expect(existsSync(m.dir)).toBe(false);
    }
  });
});

describe('start-up errors', () => {
  test('a port in use is a BrokerError; so is a mosquitto that cannot run', async () => {
    const taken = await startBroker({ federation: FEDERATION, users });
    try {
      await expect(startBroker({ federation: FEDERATION, users, port: taken.port })).rejects.toThrow(BrokerError);
      await expect(startMosquitto({ federation: FEDERATION, users, port: taken.port })).rejects.toThrow(/mosquitto exited .*Address already in use/s);
    } finally {
      await taken.close();
    }
    await expect(startMosquitto({ federation: FEDERATION, users, mosquitto: '/nonexistent/mosquitto' })).rejects.toThrow(BrokerError);
  });

  test('bad options are InvalidParameterErrors', async () => {
    await expect(startBroker({ federation: 'a/b', users })).rejects.toThrow(InvalidParameterError);
    await expect(startBroker({ federation: FEDERATION, users: [] })).rejects.toThrow(InvalidParameterError);
    await expect(startBroker({ federation: FEDERATION, users, port: 70000 })).rejects.toThrow(InvalidParameterError);
    // mosquitto_passwd -U would cut this password at ':'
    const colon = [{ username: 'alice', password: 'a:b', role: 'client' as const }];
    await expect(startMosquitto({ federation: FEDERATION, users: colon })).rejects.toThrow(InvalidParameterError);
  });
});

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
