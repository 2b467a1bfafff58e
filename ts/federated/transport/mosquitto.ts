/**
 * mosquitto as a federation's broker (Node only: it writes files and spawns
 * processes; never import it from ts/index.ts). The configuration carries the
 * same accounts and access list as the embedded broker (broker.ts); the process
 * helper starts one in a temporary directory for tests and benchmarks.
 *
 * Written for mosquitto 2.0 (Debian 12 ships 2.0.11). How it differs from the
 * embedded broker, all within MQTT 3.1.1:
 * - every refused connection gets CONNACK 5 (not authorized), where aedes answers 4;
 * - acl_file does not refuse subscriptions: SUBACK grants the QoS asked for, and
 *   each message is checked against the receiver's read grants at delivery, so a
 *   subscription outside the grants receives nothing;
 * - a publish outside the grants is acknowledged (PUBACK for QoS 1) and dropped;
 *   the connection stays;
 * - one packet limit (max_packet_size) for every packet, the CONNECT included,
 *   where the embedded broker has a smaller one until the login is accepted.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { writeFileAtomic } from '../../atomic-write.js';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerError, formatThrown, formatValue, InvalidParameterError } from '../../errors.js';
import { optionKeys, readOptions, readRecord, requireInteger } from '../../validate.js';
import type { RunningBroker } from './broker.js';
import { resolveBrokerLimits, type BrokerLimits } from './limits.js';
import { freePort, hostPort } from './ports.js';
import { mosquittoAcl, validateAccounts, validateId, type BrokerAccount } from './topics.js';

export const MOSQUITTO = '/usr/sbin/mosquitto';
export const MOSQUITTO_PASSWD = '/usr/bin/mosquitto_passwd';

export interface MosquittoConfigOptions {
  federation: string;
  users: readonly BrokerAccount[];
  /** interface to listen on; default 127.0.0.1. There is no TLS: passwords cross in clear text. */
  host?: string;
  /** MQTT over TCP */
  port: number;
  /** MQTT over WebSockets (`protocol websockets`, built into Debian's mosquitto); absent: none */
  webSocketPort?: number;
  /**
   * the unprivileged account mosquitto runs as once started as root (default
   * `mosquitto`, Debian's package's); the files written are made readable by it.
   * Started by another user, mosquitto stays that user.
   */
  user?: string;
  /**
   * max_packet_size, max_inflight_messages, max_queued_messages and max_queued_bytes (limits.ts; the embedded
   * broker's defaults, but max_queued_messages: 1,000 or twice the accounts, since the server's session queues
   * every reply of a round)
   */
  limits?: BrokerLimits;
}

export interface MosquittoFiles {
  /** mosquitto.conf, to pass as `mosquitto -c` */
  config: string;
  passwordFile: string;
  aclFile: string;
}

/** A path as mosquitto's configuration reads it: the rest of the line, so no line breaks. */
function configPath(path: unknown): string {
  if (typeof path !== 'string' || path.length === 0) throw new InvalidParameterError(`a mosquitto configuration path must be a non-empty string, got ${formatValue(path)}`);
  if (/[\r\n]/.test(path)) throw new InvalidParameterError(`a mosquitto configuration path cannot hold a line break: ${formatValue(path)}`);
  return path;
}

const CONFIG_KEYS = optionKeys<MosquittoConfigOptions>()({ federation: true, users: true, host: true, port: true, webSocketPort: true, user: true, limits: true });

/** The account mosquitto drops to when started as root. */
export const MOSQUITTO_USER = 'mosquitto';

function configUser(user: unknown): string {
  if (user === undefined) return MOSQUITTO_USER;
  if (typeof user !== 'string' || !/^[a-z_][a-z0-9_.-]{0,31}\$?$/i.test(user)) throw new InvalidParameterError(`user must be the name of a system account, got ${formatValue(user)}`);
  return user;
}

/** The options of the configuration, read once (getters and Proxies run here only). */
function readConfigOptions(options: MosquittoConfigOptions): MosquittoConfigOptions {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be { federation, users, port }, got ${formatValue(options)}`);
  return readOptions(options, CONFIG_KEYS, 'options') as MosquittoConfigOptions;
}

/** The text of mosquitto.conf for `options`, reading the password and ACL files at the given paths. */
export function mosquittoConfig(given: MosquittoConfigOptions, paths: Omit<MosquittoFiles, 'config'>): string {
  const options = readConfigOptions(given);
  if (paths === null || typeof paths !== 'object') throw new InvalidParameterError(`files must be { passwordFile, aclFile }, got ${formatValue(paths)}`);
  const files = readRecord(paths, ['passwordFile', 'aclFile'], 'files') // a MosquittoFiles (with its config path) is fine here;
  validateId('federation', options.federation);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || !/^[^\s]+$/.test(host)) throw new InvalidParameterError(`host must be an address without white space, got ${formatValue(host)}`);
  const port = requireInteger('port', options.port, 1, 65535);
  // the server's session receives every reply of a round at once, beyond those in flight: its queue holds
  // them all (mosquitto's own default, 1,000, or twice the accounts, one per client, when there are more)
  const accounts = Array.isArray(options.users) ? options.users.length : 0;
  const limits = resolveBrokerLimits(options.limits, undefined, Math.max(1000, 2 * accounts));
  const lines = [
    `# fedmix federation ${options.federation}: generated by ts/federated/transport/mosquitto.ts`,
    'per_listener_settings false',
    'allow_anonymous false',
    `password_file ${configPath(files.passwordFile)}`,
    `acl_file ${configPath(files.aclFile)}`,
    // sessions and queued QoS 1 messages live in memory for the broker's lifetime
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
    'log_timestamp false',
    // started as root, mosquitto runs as this account once its listeners are open
    `user ${configUser(options.user)}`,
    // a packet larger than this closes the connection when its header announces it,
    // before mosquitto allocates its body (the CONNECT included: one limit for all);
    // 2.0 leaves the remaining length's 1-4 bytes out of the count, the embedded broker does not
    `max_packet_size ${limits.maxPacketBytes}`,
    `max_inflight_messages ${limits.maxInflightMessages}`,
    `max_queued_messages ${limits.maxQueuedMessages}`,
    `max_queued_bytes ${limits.maxQueuedBytes}`,
    // no Nagle's algorithm: a round's small messages go out at once
    'set_tcp_nodelay true',
  ];
  // the username is the client id, as on the embedded broker: nobody can take
  // over another's session. 2.0.11 ignores this option before the first listener,
  // per_listener_settings false notwithstanding, so each listener states it.
  const listener = (p: number, protocol: string) => ['', `listener ${p} ${host}`, `protocol ${protocol}`, 'use_username_as_clientid true'];
  lines.push(...listener(port, 'mqtt'));
  if (options.webSocketPort !== undefined) {
    lines.push(...listener(requireInteger('webSocketPort', options.webSocketPort, 1, 65535), 'websockets'));
  }
  return lines.join('\n') + '\n';
}

/**
 * Writes mosquitto.conf, the password file (hashed by `mosquitto_passwd -U`) and
 * the ACL file (topics.ts' mosquittoAcl) into `dir`, readable by this user only;
 * run as root, they belong to the account mosquitto drops to (`user`), which
 * must also be able to enter `dir`.
 */
export async function writeMosquittoConfig(dir: string, given: MosquittoConfigOptions, mosquittoPasswd = MOSQUITTO_PASSWD): Promise<MosquittoFiles> {
  if (typeof dir !== 'string' || dir.length === 0) throw new InvalidParameterError(`dir must be the directory to write into (a non-empty string), got ${formatValue(dir)}`);
  if (typeof mosquittoPasswd !== 'string' || mosquittoPasswd.length === 0) throw new InvalidParameterError(`mosquittoPasswd must be the path of mosquitto_passwd, got ${formatValue(mosquittoPasswd)}`);
  const options = readConfigOptions(given);
  const users = validateAccounts(options.users);
  for (const u of users) {
    // mosquitto_passwd -U cuts a password at its first ':' and trims white space
    if (u.password.includes(':') || u.password.trim() !== u.password) {
      throw new InvalidParameterError(`the password of ${u.username} cannot start or end with white space or contain ':' for mosquitto (mosquitto_passwd -U would change it)`);
    }
  }
  const files = { config: join(dir, 'mosquitto.conf'), passwordFile: join(dir, 'passwd'), aclFile: join(dir, 'acl') };
  const text = mosquittoConfig(options, files);
  // the directory is the caller's: one that cannot be written is a BrokerError saying which
  const write = async (file: string, data: string) => {
    try {
      await writeFileAtomic(file, data, { mode: 0o600 });
    } catch (e) {
      throw new BrokerError(`cannot write ${file}: ${formatThrown(e)}`);
    }
  };
  // clear text first, hashed in place by one mosquitto_passwd -U: -b would put
  // each password on a command line, which any local user can read
  await write(files.passwordFile, users.map((u) => `${u.username}:${u.password}\n`).join(''));
  await new Promise<void>((resolve, reject) => {
    try {
      execFile(mosquittoPasswd, ['-U', files.passwordFile], (e, _stdout, stderr) => {
        if (e) reject(new BrokerError(`${mosquittoPasswd} -U failed: ${String(stderr).trim() || e.message}`));
        else resolve();
      });
    } catch (e) {
      // a path the system refuses outright (too long, a NUL in it) throws before anything runs
      reject(new BrokerError(`cannot run ${formatValue(mosquittoPasswd)}: ${formatThrown(e)}`));
    }
  });
  await write(files.aclFile, mosquittoAcl(options.federation, users));
  await write(files.config, text);
  // mosquitto reads the password and ACL files after dropping root: they must be the account's
  const owner = await accountOf(configUser(options.user));
  if (owner) {
    for (const file of [files.passwordFile, files.aclFile, files.config]) {
      try {
        await chown(file, owner.uid, owner.gid);
      } catch (e) {
        throw new BrokerError(`cannot give ${file} to ${options.user ?? MOSQUITTO_USER}: ${formatThrown(e)}`);
      }
    }
  }
  return files;
}

/**
 * The uid and gid of `user` when this process runs as root (the only case where
 * mosquitto changes user); undefined otherwise. A missing account is a BrokerError.
 */
async function accountOf(user: string): Promise<{ uid: number; gid: number } | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const id = (flag: '-u' | '-g') =>
    new Promise<number>((resolve, reject) => {
      execFile('id', [flag, user], (e, stdout, stderr) => {
        const n = Number(String(stdout).trim());
        if (e || !Number.isInteger(n)) reject(new BrokerError(`mosquitto cannot run as ${user}: ${String(stderr).trim() || 'no such account'} (give \`user\` an unprivileged account that exists)`));
        else resolve(n);
      });
    });
  return { uid: await id('-u'), gid: await id('-g') };
}

export interface StartMosquittoOptions extends Omit<MosquittoConfigOptions, 'port'> {
  /** MQTT over TCP; default (or 0): a free port */
  port?: number;
  /** the executables; default Debian's paths */
  mosquitto?: string;
  mosquittoPasswd?: string;
  /** how long to wait for the listeners; default 10 s */
  startTimeoutMs?: number;
}

export interface RunningMosquitto extends RunningBroker {
  readonly pid: number;
  /** the temporary directory of its configuration, removed by close() */
  readonly dir: string;
  /** the last lines mosquitto logged (errors, warnings, connections) */
  log(): string;
}

// the directory of every mosquitto this process started and has not stopped,
// with its process: killed and removed when this process exits, so that a test
// run that crashes leaves no broker and no passwords behind
const live = new Map<string, ChildProcess | undefined>();
let exitHookInstalled = false;
function track(dir: string, child?: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const [d, c] of live) {
        if (c && !hasExited(c)) c.kill('SIGKILL');
        rmSync(d, { recursive: true, force: true });
      }
    });
  }
  live.set(dir, child);
}
async function untrack(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  live.delete(dir);
}

const LOG_TAIL = 16_384;
// logged once every listener is open; a port that accepts connections may be another program's
const RUNNING = /mosquitto version \S+ running/;

/**
 * Starts mosquitto for a federation in a fresh temporary directory, on free
 * ports unless given, and resolves once it runs and every listener accepts
 * connections. close() stops it (SIGTERM, then SIGKILL after 5 s), waits for it
 * to exit and removes the directory.
 */
export async function startMosquitto(given: StartMosquittoOptions): Promise<RunningMosquitto> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { federation, users }, got ${formatValue(given)}`);
  const options = readOptions(given, ['federation', 'users', 'host', 'port', 'webSocketPort', 'user', 'limits', 'mosquitto', 'mosquittoPasswd', 'startTimeoutMs']);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.length === 0) throw new InvalidParameterError(`host must be a non-empty string, got ${formatValue(host)}`);
  if (options.port !== undefined) requireInteger('port', options.port, 0, 65535);
  if (options.webSocketPort !== undefined) requireInteger('webSocketPort', options.webSocketPort, 0, 65535);
  for (const exe of ['mosquitto', 'mosquittoPasswd'] as const) {
    if (options[exe] !== undefined && (typeof options[exe] !== 'string' || options[exe] === '')) throw new InvalidParameterError(`${exe} must be the path of the executable, got ${formatValue(options[exe])}`);
  }
  const timeout = requireInteger('startTimeoutMs', options.startTimeoutMs ?? 10_000, 1, 600_000);
  // a port chosen by freePort may be taken before mosquitto binds it: then choose again
  const attempts = options.port || options.webSocketPort ? 1 : 3;
  for (let attempt = 1; ; attempt++) {
    const port = options.port || (await freePort(host));
    const webSocketPort = options.webSocketPort === undefined ? undefined : options.webSocketPort || (await freePort(host));
    try {
      return await startOnce({ ...(options as StartMosquittoOptions), host, port, webSocketPort }, timeout);
    } catch (e) {
      if (!(e instanceof BrokerError && /address already in use/i.test(e.message)) || attempt >= attempts) throw e;
    }
  }
}

async function startOnce(options: MosquittoConfigOptions & StartMosquittoOptions & { host: string; port: number }, timeout: number): Promise<RunningMosquitto> {
  const dir = await mkdtemp(join(tmpdir(), 'fedmix-mosquitto-'));
  track(dir);
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    // the account mosquitto drops to enters the directory (its files are its own); nobody else can list it
    const owner = await accountOf(configUser(options.user));
    if (owner) {
      await chown(dir, 0, owner.gid);
      await chmod(dir, 0o710);
    }
    // the configuration's own options: the rest (mosquitto, mosquittoPasswd, ...) are startMosquitto's
    const files = await writeMosquittoConfig(dir, readRecord(options, CONFIG_KEYS, 'options') as MosquittoConfigOptions, options.mosquittoPasswd);
    const executable = options.mosquitto ?? MOSQUITTO;
    let proc: ChildProcess;
    try {
      proc = spawn(executable, ['-c', files.config], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      // a path the system refuses outright throws before anything runs
      throw new BrokerError(`cannot run ${formatValue(executable)}: ${formatThrown(e)}`);
    }
    child = proc;
    track(dir, proc);
    let logged = '';
    let ready: () => void = () => {};
    const running = new Promise<void>((resolve) => (ready = resolve));
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (chunk: string) => {
      logged = (logged + chunk).slice(-LOG_TAIL);
      if (RUNNING.test(logged)) ready();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      proc.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const failed = new Promise<never>((_, reject) => {
      proc.once('error', (e) => reject(new BrokerError(`cannot run ${executable}: ${e.message}`)));
      void exited.then((x) => reject(new BrokerError(`mosquitto exited (${x.signal ?? `code ${x.code}`}) while starting: ${logged.trim()}`)));
      timer = setTimeout(() => reject(new BrokerError(`mosquitto did not start within ${timeout} ms: ${logged.trim()}`)), timeout);
    });
    failed.catch(() => {}); // once it runs, its exit is close()'s business
    await Promise.race([running, failed]);
    const ports = [options.port, ...(options.webSocketPort === undefined ? [] : [options.webSocketPort])];
    for (const p of ports) {
      if (!(await acceptsConnections(options.host, p))) throw new BrokerError(`mosquitto runs but does not accept connections on ${hostPort(options.host, p)}: ${logged.trim()}`);
    }
    let closing: Promise<void> | undefined;
    return {
      url: `mqtt://${hostPort(options.host, options.port)}`,
      port: options.port,
      ...(options.webSocketPort === undefined ? {} : { wsUrl: `ws://${hostPort(options.host, options.webSocketPort)}/mqtt`, wsPort: options.webSocketPort }),
      pid: proc.pid!,
      dir,
      log: () => logged,
      close: () => (closing ??= stop(proc).finally(() => untrack(dir))),
    };
  } catch (e) {
    if (child) await stop(child);
    await untrack(dir);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM, SIGKILL if it is still there after 5 s; resolves when it has exited. */
async function stop(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether it has exited, or never started (no pid: no 'exit' event is sure to come). */
function hasExited(child: ChildProcess): boolean {
  return child.pid === undefined || child.exitCode !== null || child.signalCode !== null;
}

/** Whether a TCP connection to host:port succeeds. */
function acceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
