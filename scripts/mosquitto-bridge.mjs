// A federation across two bridged mosquitto brokers: the server connects to
// one (the "server broker"), the clients to the other (the "edge broker"),
// and the edge broker bridges the federation's topics to the server broker,
// as an operator does when the clients outgrow one broker or sit in another
// network (docs/scaling.md). Both brokers are configured by
// writeMosquittoConfig; the edge broker's configuration gets a bridge
// section, the server broker's access list an account for the bridge.
//
//   node scripts/mosquitto-bridge.mjs [clients=200] [processes=2] [rounds=6]
//
// runs distributed EM with the clients in child processes (bench/fleet.mjs),
// once over the bridge and once over one mosquitto, and prints the round
// latencies and the brokers' RSS. Needs `bash scripts/setup.sh` (dist/, mosquitto).
import { fileURLToPath } from 'node:url';
import { freePort } from '../dist/node.js';
import { fleetRun, fleetUsers, procRss, startMosquittoWith } from '../bench/fleet.mjs';

export const BRIDGE_USER = 'fedmix-bridge';

/**
 * The bridge section of the edge broker's mosquitto.conf: one persistent
 * (cleansession false) MQTT 3.1.1 connection to the server broker, carrying
 * the clients' replies and status out and the server's requests, status and
 * end of run in, all at QoS 1. try_private tells a mosquitto at the other end
 * that this is a bridge, so that retained flags cross as published.
 */
export function bridgeSection({ federation, remote, password }) {
  const f = `fedmix/${federation}`;
  return [
    `connection fedmix-${federation}`,
    `address ${remote}`,
    'bridge_protocol_version mqttv311',
    'try_private true',
    'cleansession false',
    `remote_clientid ${BRIDGE_USER}`,
    `remote_username ${BRIDGE_USER}`,
    `remote_password ${password}`,
    'restart_timeout 1 5',
    `topic ${f}/clients/+/up out 1`,
    `topic ${f}/clients/+/status out 1`,
    `topic ${f}/clients/+/down in 1`,
    `topic ${f}/broadcast in 1`,
    `topic ${f}/server/status in 1`,
  ];
}

/**
 * The server broker's grants for the bridge account: it publishes what every
 * client may publish and reads what every client may read, nothing else.
 */
export function bridgeAcl(federation) {
  const f = `fedmix/${federation}`;
  return [
    `user ${BRIDGE_USER}`,
    `topic write ${f}/clients/+/up`,
    `topic write ${f}/clients/+/status`,
    `topic read ${f}/clients/+/down`,
    `topic read ${f}/broadcast`,
    `topic read ${f}/server/status`,
  ];
}

/**
 * Two mosquittos bridged for federation `federation`: the server broker
 * holds the server's account (the first of `users`, role server) and the
 * bridge's; the edge broker holds the clients' accounts and bridges to the
 * server broker. Resolves once the bridge is connected.
 */
export async function startBridgedMosquittos({ federation, users, bridgePassword = 'bridge-pw' }) {
  const server = users.filter((u) => u.role === 'server');
  const clients = users.filter((u) => u.role === 'client');
  const serverPort = await freePort('127.0.0.1');
  const serverBroker = await startMosquittoWith({
    federation,
    users: [...server, { username: BRIDGE_USER, password: bridgePassword, role: 'client' }],
    port: serverPort,
    extraAcl: bridgeAcl(federation),
  });
  let edge;
  try {
    edge = await startMosquittoWith({
      federation,
      users: clients,
      port: await freePort('127.0.0.1'),
      extra: bridgeSection({ federation, remote: `127.0.0.1:${serverPort}`, password: bridgePassword }),
    });
    // the server broker logs the bridge's login as a new client
    const until = Date.now() + 10_000;
    while (!serverBroker.log().includes(`as ${BRIDGE_USER}`)) {
      if (Date.now() > until) throw new Error(`the bridge did not connect: ${edge.log()}\n${serverBroker.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (e) {
    await edge?.close();
    await serverBroker.close();
    throw e;
  }
  return {
    serverBroker,
    edgeBroker: edge,
    close: async () => {
      await edge.close();
      await serverBroker.close();
    },
  };
}

async function main() {
  const [nClients = 200, processes = 2, rounds = 6] = process.argv.slice(2).map(Number);
  const federation = 'bridged';
  const users = fleetUsers(nClients);
  const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
  const report = (name, r, brokers) => {
    const steady = r.roundMs.slice(1);
    console.log(
      `${name}: ${nClients} clients in ${processes} processes, ${rounds} rounds; all online in ${(r.connectMs / 1000).toFixed(1)} s; ` +
        `first round ${r.roundMs[0].toFixed(0)} ms, then median ${median(steady).toFixed(0)} ms (${steady.map((x) => x.toFixed(0)).join(', ')}); ` +
        `accepted ${r.accepted} a round; ${brokers}`,
    );
  };
  const pair = await startBridgedMosquittos({ federation, users });
  try {
    const r = await fleetRun({ broker: { url: pair.edgeBroker.url, pid: pair.edgeBroker.pid }, serverUrl: pair.serverBroker.url, federation, nClients, processes, rounds });
    const mb = (pid) => (procRss(pid).rssKb / 1024).toFixed(0);
    report('bridged (clients on the edge broker, server on the server broker)', r, `RSS: edge broker ${(r.brokerRssKb / 1024).toFixed(0)} MB, server broker ${mb(pair.serverBroker.pid)} MB`);
  } finally {
    await pair.close();
  }
  const single = await startMosquittoWith({ federation, users, port: await freePort('127.0.0.1') });
  try {
    const r = await fleetRun({ broker: single, federation, nClients, processes, rounds });
    report('one mosquitto', r, `broker RSS ${(r.brokerRssKb / 1024).toFixed(0)} MB`);
  } finally {
    await single.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
