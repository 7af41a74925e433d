import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { isBeforeChange } from '../../../src/errors/before-change.js'
import { completeShared, loadShared, requireHumanShared } from '../../../src/fleet/checkpoints.js'
import { recordId, sharedIdempotencyLedger, sharedTokenLedger } from '../../../src/fleet/ledgers.js'
import { openPostgres } from '../../../src/fleet/postgres.js'
import { openRedis } from '../../../src/fleet/redis.js'
import type { FleetBackend } from '../../../src/fleet/types.js'
import { editJson, useToolCopy } from '../../support/copy.js'
import {
  ENGINES,
  type Engine,
  envelope,
  fixtureOn,
  machines,
  newKey,
  onMachine,
  seedTask,
  useFleet,
  useInProcessMachines,
} from '../../support/fleet.js'
import { ROOT } from '../../support/helpers.js'

const fleet = useFleet()
const copy = useToolCopy()
// The dry-runs that mint tokens and the doctor's reads need no process: in-process, on the same store. The calls a
// fault hits (a proxy killed by PID, a closed port mid-run) stay processes.
const inProcess = useInProcessMachines()

/**
 * The fixture CLI whose author set `agentcli.state.pending_wait_ms` to 0: a key held by an attempt that will never
 * finish answers "in doubt" at the first look, not after the default 10 s of polling a record that cannot change.
 */
function impatientFixture(): string {
  const dir = copy('test/fixtures/cli', (d) =>
    editJson(join(d, 'package.json'), (pkg) => {
      ;(pkg.agentcli as Record<string, unknown>).state = { pending_wait_ms: 0 }
    }),
  )
  return join(dir, 'bin/run.js')
}
const PORTS: Record<Engine, number> = { postgres: 5432, redis: 6379 }

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

const proxies: ChildProcess[] = []
afterEach(() => {
  for (const p of proxies.splice(0)) if (p.exitCode === null && p.signalCode === null) process.kill(p.pid!, 'SIGKILL')
})

/** Start a proxy to the engine; returns its port and a stop() that kills it by PID and waits for it. */
async function proxy(engine: Engine): Promise<{ port: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(ROOT, 'test/fixtures/tcp-proxy.mjs')], {
    env: { TARGET_PORT: String(PORTS[engine]) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  proxies.push(child)
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (c: Buffer) => resolve(Number(c))))
  const exited = new Promise((resolve) => child.once('close', resolve))
  return {
    port,
    async stop() {
      process.kill(child.pid!, 'SIGKILL')
      await exited
    },
  }
}

function urlThrough(engine: Engine, port: number): string {
  return fleet.url(engine).replace(`:${PORTS[engine]}`, `:${port}`)
}

function open(engine: Engine, url: string): Promise<FleetBackend> {
  return engine === 'postgres' ? openPostgres(url, 'tasks', 'test') : openRedis(url, 'tasks', 'test')
}

describe.each(ENGINES)('a %s store that fails', (engine) => {
  it('down before apply: E_NETWORK (exit 7, retryable), nothing applied, the token still good afterwards', async () => {
    const secret = newKey()
    const [a] = machines(1, fleet.url(engine), secret)
    const [down] = machines(1, urlThrough(engine, await closedPort()), secret)
    const store = seedTask(down!)
    seedTask(a!)
    const token = envelope(await inProcess.tasks(a!, ['delete', '1', '--dry-run'])).data.confirm_token
    const before = readFileSync(store, 'utf8')
    const refused = await onMachine(down!, ['delete', '1', '--confirm', token])
    expect(refused.code).toBe(7)
    expect(envelope(refused).error).toMatchObject({
      code: 'E_NETWORK',
      retryable: true,
      details: { reason: 'state_store_unreachable', backend: engine },
    })
    expect(readFileSync(store, 'utf8')).toBe(before)
    // The shared audit log was down too: the record is kept in the local file, with a warning.
    expect(refused.stderr).toContain('cannot append to the shared audit log')
    const local = readFileSync(join(down!.box.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
    expect(local).toContain('"result_code":"E_NETWORK"')
    // Same token, store back (this machine's URL fixed): it was never consumed.
    const retried = await onMachine(down!, ['delete', '1', '--confirm', token], {
      env: { TASKS_STATE_URL: fleet.url(engine) },
    })
    expect(retried.code, retried.stdout).toBe(0)
  }, 60_000)

  it('down after the change landed (proxy killed by PID mid-apply): in doubt, exit 7, never success; a retry changes nothing', async () => {
    const secret = newKey()
    const link = await proxy(engine)
    const [a, c] = machines(2, fleet.url(engine), secret, 'fixture')
    const [b] = machines(1, urlThrough(engine, link.port), secret, 'fixture')
    const marker = join(b!.box.root, 'marker')
    const go = join(b!.box.root, 'go')
    const args = ['slow-note', '--marker', marker, '--go', go, '--idempotency-key', `after-${engine}`]
    const token = envelope(await inProcess.fixture(a!, [...args, '--dry-run'])).data.confirm_token
    const confirming = fixtureOn(b!, [...args, '--confirm', token])
    const deadline = Date.now() + 15_000
    while (!existsSync(marker)) {
      if (Date.now() > deadline) throw new Error('apply() never ran')
      await new Promise((r) => setTimeout(r, 20))
    }
    await link.stop()
    writeFileSync(go, '')
    const run = await confirming
    expect(run.code, run.stdout).toBe(7)
    expect(envelope(run).ok).toBe(false)
    expect(envelope(run).error).toMatchObject({
      code: 'E_NETWORK',
      details: { in_doubt: true, applied: true, reason: 'state_store_after_apply' },
    })
    expect(readFileSync(marker, 'utf8')).toBe('changed\n')
    // The token is used, and the key stays in doubt: neither can make the change a second time.
    const replay = await fixtureOn(c!, [...args, '--confirm', token])
    expect(envelope(replay).error.details.reason).toBe('already_used')
    const again = envelope(await inProcess.fixture(c!, [...args, '--dry-run'])).data.confirm_token
    const retry = await runTool(impatientFixture(), [...args, '--confirm', again], { timeoutMs: 30_000, env: c!.env })
    expect(retry.code).toBe(6)
    expect(envelope(retry).error.details.reason).toBe('idempotency_in_doubt')
  }, 60_000)

  it('down between the consume and the apply is a refusal before any change; down after the apply is in doubt', async () => {
    const link = await proxy(engine)
    const backend = await open(engine, urlThrough(engine, link.port))
    const direct = await open(engine, fleet.url(engine))
    try {
      const ledger = sharedIdempotencyLedger(backend.primitives)
      const tokens = sharedTokenLedger(backend.primitives)
      expect(await tokens.consume(`tok-${engine}`, Date.now() + 60_000, Date.now())).toBe(true)
      let applied = 0
      const key = `doubt-${engine}`
      const error = await ledger
        .run('scope', 'create', key, { title: 'x' }, async () => {
          applied++
          await link.stop()
          return { id: '7' }
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(applied).toBe(1)
      expect(error).toMatchObject({ code: 'E_NETWORK', details: { in_doubt: true, applied: true } })
      expect(isBeforeChange(error)).toBe(false)
      // Seen from a healthy connection: the key is in doubt, and a retry answers so instead of a second change.
      // (No wait for the first attempt: it can never finish, so polling it for the default 10 s proves nothing more.)
      const seen = sharedIdempotencyLedger(direct.primitives, { pendingWaitMs: 0 })
      expect(await seen.lookup('scope', 'create', key, { title: 'x' })).toEqual({ state: 'pending' })
      const retry = await seen
        .run('scope', 'create', key, { title: 'x' }, async () => {
          applied++
        })
        .catch((e: unknown) => e)
      expect(retry).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'idempotency_in_doubt' } })
      expect(applied).toBe(1)
      // And the proxy being down, consuming is a clean refusal marked as preceding any change.
      const down = await tokens.consume(`tok2-${engine}`, Date.now() + 60_000, Date.now()).catch((e: unknown) => e)
      expect(down).toMatchObject({ code: 'E_NETWORK', details: { reason: 'state_store_unreachable' } })
      expect(isBeforeChange(down)).toBe(true)
      expect(await sharedTokenLedger(direct.primitives).isUsed(`tok2-${engine}`)).toBe(false)
    } finally {
      await backend.close()
      await direct.close()
    }
  }, 60_000)

  it('an idempotency record edited in the store (an unknown status) is E_IO at once, never a wait or a change', async () => {
    const backend = await open(engine, fleet.url(engine))
    try {
      const ledger = sharedIdempotencyLedger(backend.primitives)
      const args = { title: 'x' }
      const good = await ledger.run('scope', 'create', `edited-${engine}`, args, async () => ({ id: '1' }))
      expect(good.replayed).toBe(false)
      const id = recordId('scope', 'create', `edited-${engine}`)
      const stored = (await backend.primitives.readRecord(id)) as Record<string, unknown>
      await backend.primitives.writeRecord(id, { ...stored, status: 'hacked' } as never)
      let applied = 0
      // Count the reads: a refusal on the first one, not a wait that polls the record until its deadline.
      let reads = 0
      const counted = sharedIdempotencyLedger({
        ...backend.primitives,
        readRecord: (at: string) => {
          reads++
          return backend.primitives.readRecord(at)
        },
      })
      const run = await counted
        .run('scope', 'create', `edited-${engine}`, args, async () => {
          applied++
        })
        .catch((e: unknown) => e)
      expect(run).toMatchObject({ code: 'E_IO', details: { reason: 'invalid_record', record: id } })
      expect(isBeforeChange(run)).toBe(true)
      expect(applied).toBe(0)
      expect(reads).toBe(1)
      await expect(ledger.lookup('scope', 'create', `edited-${engine}`, args)).rejects.toMatchObject({ code: 'E_IO' })
    } finally {
      await backend.close()
    }
  }, 60_000)

  it('checkpoints: a resume on any machine, completed exactly once however many race', async () => {
    const backend = await open(engine, fleet.url(engine))
    try {
      const human = await requireHumanShared(backend.checkpoints, 'login', {
        action: 'approve',
        message: 'approve it',
        resume: (id) => `tasks login resume --id ${id}`,
        state: { code: 'abc' },
      })
      const id = human.details.checkpoint_id as string
      const other = await open(engine, fleet.url(engine))
      expect((await loadShared<{ code: string }>(other.checkpoints, 'login', id)).state.code).toBe('abc')
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => completeShared((i % 2 ? other : backend).checkpoints, id)),
      )
      expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBe(1)
      for (const o of outcomes.filter((o) => o.status === 'rejected'))
        expect((o as PromiseRejectedResult).reason).toMatchObject({ code: 'E_CONFLICT' })
      await expect(loadShared(other.checkpoints, 'login', id)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await other.close()
    } finally {
      await backend.close()
    }
  }, 30_000)

  it('doctor reports the backend, its reachability and schema version', async () => {
    const [m] = machines(1, fleet.url(engine), newKey())
    const ok = envelope(await inProcess.tasks(m!, ['doctor']))
    const check = ok.data.checks.find((c: { check: string }) => c.check === 'state_store')
    expect(check).toMatchObject({ status: 'pass', fix: null })
    expect(check.message).toContain('schema version 1')
    const elsewhere = { ...m!, env: { ...m!.env, TASKS_STATE_URL: urlThrough(engine, await closedPort()) } }
    const down = envelope(await inProcess.tasks(elsewhere, ['doctor']))
    const failing = down.data.checks.find((c: { check: string }) => c.check === 'state_store')
    expect(failing.status).toBe('fail')
    expect(failing.fix).toContain('reachable')
  }, 30_000)
})
