// TCP no-delay forced by the benchmark on every socket this process makes or
// accepts, to measure rounds with and without Nagle's algorithm whatever the
// library sets. Import it before anything that opens sockets (dist/, mqtt):
// node:net's functions are wrapped here and the ES module bindings synced, so
// the embedded broker (aedes) and mqtt.js both go through the wrappers. Off
// until forceNoDelay(true) (or FEDMIX_BENCH_NODELAY=1 in a child process).
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';

let forced = process.env.FEDMIX_BENCH_NODELAY === '1';

const watchers = [];
/** Calls `fn` with every client socket this process makes from now on (to see why connections close). */
export function watchSockets(fn) {
  watchers.push(fn);
}

/** Turns the forcing on or off for sockets made from now on. */
export function forceNoDelay(on) {
  forced = on;
}

const { createConnection, connect, createServer } = net;
net.createConnection = function (...args) {
  const socket = createConnection.apply(this, args);
  if (forced) socket.setNoDelay(true);
  for (const fn of watchers) fn(socket);
  return socket;
};
net.connect = function (...args) {
  const socket = connect.apply(this, args);
  if (forced) socket.setNoDelay(true);
  for (const fn of watchers) fn(socket);
  return socket;
};
net.createServer = function (...args) {
  const server = createServer.apply(this, args);
  server.on('connection', (socket) => {
    if (forced) socket.setNoDelay(true);
  });
  return server;
};
syncBuiltinESMExports();
