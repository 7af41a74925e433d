import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

// verify's network cut for Node targets (src/verify/net-cut.cts, preloaded through NODE_OPTIONS): every way a Node
// program opens a TCP connection is refused like a dead port, but the loopback upstreams in NO_PROXY; nothing is
// resolved or reached on the way. A bare node with the built preload, against servers of this process.
const NET_CUT = join(ROOT, 'dist/verify/net-cut.cjs')
const PROBE = join(ROOT, 'test/fixtures/net-probe.mjs')
type Outcome = { status?: number | string; error?: string; at?: string }
type Probes = Record<string, Record<string, Outcome>>

const hits: string[] = []
const servers: Server[] = []
const serve = async (host: string) => {
  const server = createServer((req, res) => {
    hits.push(`${host} ${req.url}`)
    res.end('ok')
  })
  server.keepAliveTimeout = 0
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return (server.address() as AddressInfo).port
}
let [allowed, other, v6] = [0, 0, 0]
const dir = mkdtempSync(join(tmpdir(), 'agentcli-net-cut-'))
const ipc = join(dir, 'ipc.sock')
const ipcServer = createNetServer((socket) => socket.end())

beforeAll(async () => {
  ;[allowed, other, v6] = await Promise.all([serve('127.0.0.1'), serve('127.0.0.1'), serve('::1')])
  await new Promise<void>((resolve) => ipcServer.listen(ipc, resolve))
})
afterAll(() => {
  for (const server of servers) server.close()
  ipcServer.close()
  rmSync(dir, { recursive: true, force: true })
})

function probe(noProxy: string | undefined, targets: Record<string, string>, env: Record<string, string> = {}) {
  return new Promise<Probes>((resolve, reject) => {
    const child = spawn(process.execPath, [PROBE, ...Object.entries(targets).map(([name, url]) => `${name}=${url}`)], {
      env: {
        PATH: process.env.PATH,
        NODE_OPTIONS: `--require="${NET_CUT}"`,
        ...(noProxy === undefined ? {} : { NO_PROXY: noProxy }),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let [out, err] = ['', '']
    child.stdout.on('data', (c: Buffer) => (out += c))
    child.stderr.on('data', (c: Buffer) => (err += c))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0 || err !== '') reject(new Error(`probe exit ${code}: ${err}`))
      else resolve(JSON.parse(out) as Probes)
    })
  })
}

const REFUSED = { error: 'ECONNREFUSED', at: '127.0.0.1:9' }
const refusedEverywhere = (probes: Record<string, Outcome>) => {
  for (const [how, outcome] of Object.entries(probes)) expect(outcome, how).toEqual(REFUSED)
}

describe("verify's network cut (net-cut.cjs)", () => {
  it('an allowed loopback upstream is reached by fetch, node:http, net and tls; another loopback port is refused', async () => {
    hits.length = 0
    const got = await probe(`127.0.0.1:${allowed},[::1]:${v6}`, {
      allowed: `http://127.0.0.1:${allowed}/a`,
      v6: `http://[::1]:${v6}/b`,
      other: `http://127.0.0.1:${other}/c`,
    })
    for (const name of ['allowed', 'v6']) {
      expect(got[name]!.fetch, name).toEqual({ status: 200 })
      expect(got[name]!.http_get, name).toEqual({ status: 200 })
      expect(got[name]!.http_no_agent, name).toEqual({ status: 200 })
      expect(got[name]!.net_port_host, name).toEqual({ status: 'connected' })
      expect(got[name]!.net_options, name).toEqual({ status: 'connected' })
      // A plain HTTP server answers a TLS hello with an error, but the connection itself was made.
      expect(got[name]!.tls!.error, name).not.toBe('ECONNREFUSED')
    }
    refusedEverywhere(got.other!)
    // The server on the other port saw nothing of the six attempts.
    expect(hits.filter((h) => h.endsWith('/c') || !h.includes(' /'))).toEqual([])
    expect(hits.some((h) => h.endsWith('/a'))).toBe(true)
  })

  it('without NO_PROXY nothing is reached, not even loopback; a host name is refused without being resolved', async () => {
    hits.length = 0
    const got = await probe(undefined, {
      loopback: `http://127.0.0.1:${allowed}/d`,
      localhost: `http://localhost:${allowed}/e`,
      // .invalid never resolves: ENOTFOUND would show a lookup happened.
      name: 'https://agentcli-verify.invalid:443/',
      remote: 'http://192.0.2.1:80/',
    })
    for (const name of ['loopback', 'localhost', 'name', 'remote']) refusedEverywhere(got[name]!)
    expect(hits).toEqual([])
  })

  it('matches the upstream by host and port as written: localhost is not 127.0.0.1, another port is not allowed', async () => {
    hits.length = 0
    const got = await probe(`localhost:${other}, 127.0.0.1:${allowed + 1},junk,:80`, {
      ip: `http://127.0.0.1:${other}/f`,
      name: `http://LOCALHOST:${other}/g`,
    })
    refusedEverywhere(got.ip!)
    expect(got.name!.fetch).toEqual({ status: 200 })
    expect(got.name!.net_options).toEqual({ status: 'connected' })
  })

  it('leaves local IPC (a Unix socket) alone, and what Node refuses itself (a bad port) to Node', async () => {
    const got = await probe(undefined, {}, { PROBE_IPC: ipc })
    expect(got.ipc).toEqual({ status: 'connected' })
    const bad = await probe(undefined, { blocked: 'http://127.0.0.1:6000/' })
    // fetch's own refusal of a port the Fetch standard blocks, before any connection: not turned into a refusal.
    expect(bad.blocked!.fetch).toEqual({ error: 'bad port' })
  })
})
