// The network cut of `agentcli verify`'s sandbox, preloaded into every Node target (`NODE_OPTIONS=--require`, see
// settings.ts). Every TCP connection a Node process opens goes through `net.Socket.prototype.connect`: fetch
// (undici), node:http and node:https (their agents), node:tls, HTTP/2 and raw sockets alike. A connection to anything
// but the loopback upstreams the author allowed (`--allow-upstream`, passed as NO_PROXY) is sent to the same dead
// address the sandbox's proxy variables name instead, so the kernel refuses it: the target sees the ECONNREFUSED a
// real refused connection gives, and its own error mapping (E_NETWORK) is unchanged. No name is resolved on the way.
//
// Why not NODE_USE_ENV_PROXY: it makes Node load its proxy agent (undici) at every start, about as much CPU as the
// rest of a small tool's start, and on Node 22 it warns on stderr. This file costs node:net (loaded anyway once a
// tool connects anywhere) and one function; nothing runs until a connection is made.
//
// CommonJS on purpose (a `--require` preload runs before any ESM loader and on every Node the engines allow); it
// must stay dependency-free, as it runs inside the target. Unix-socket and pipe connections are local IPC, not
// network, and pass.
import net = require('node:net')

/** Where a refused connection goes: the dead proxy of the sandbox's HTTP_PROXY (the discard port, never served). */
const DEAD = { host: '127.0.0.1', port: 9 }

type ConnectOptions = { host?: unknown; port?: unknown; path?: unknown; localAddress?: unknown; localPort?: unknown }

/** `host:port` with an IPv6 host's brackets dropped and the name lowercased: `[::1]:80` and `::1:80` are one. */
const key = (host: string, port: number) => `${host.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`

/** The loopback upstreams the author allowed (`127.0.0.1:4010,[::1]:4011,localhost:4012`, checked by verify). */
const allowed = new Set(
  (process.env.NO_PROXY ?? '')
    .split(',')
    .map((entry) => /^(.+):(\d+)$/.exec(entry.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => key(m[1]!, Number(m[2]))),
)

/** A port Node accepts (its `validatePort`); anything else is left to Node, which throws before any connection. */
const validPort = (port: unknown): boolean =>
  (typeof port === 'number' || (typeof port === 'string' && port.trim() !== '')) &&
  Number(port) === Number(port) >>> 0 &&
  Number(port) <= 0xffff

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket
const original = net.Socket.prototype.connect as Connect

/**
 * `socket.connect` in each of its forms, read as Node's `normalizeArgs` reads them: `(options[, cb])`,
 * `(port[, host][, cb])`, `(path[, cb])` (a string that is not a number), and the array `net.connect` passes.
 */
function connect(this: net.Socket, ...args: unknown[]): net.Socket {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[]) : args
  const [head, second] = first
  if (typeof head === 'string' && !(Number(head) >= 0)) return original.apply(this, args)
  const options: ConnectOptions =
    head !== null && typeof head === 'object'
      ? (head as ConnectOptions)
      : { port: head, host: typeof second === 'string' ? second : undefined }
  // A pipe is local IPC; a port Node refuses throws there, before anything is sent.
  if (options.path || (options.port !== undefined && !validPort(options.port))) return original.apply(this, args)
  // Node's own default host, and port 0 when none is given: it would resolve the name and try.
  const host = options.host || 'localhost'
  if (typeof host === 'string' && allowed.has(key(host, Number(options.port ?? 0)))) return original.apply(this, args)
  const callback = first.find((a): a is () => void => typeof a === 'function')
  // The local binding would not fit the dead address (an IPv6 source for an IPv4 target fails otherwise).
  const { localAddress: _address, localPort: _port, ...kept } = options
  const dead = { ...kept, host: DEAD.host, port: DEAD.port }
  return callback ? original.call(this, dead, callback) : original.call(this, dead)
}

net.Socket.prototype.connect = connect as typeof net.Socket.prototype.connect
