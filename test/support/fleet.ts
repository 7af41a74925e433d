import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type RunToolOptions, runTool, type Sandbox, sandbox, type ToolRun } from 'agentcli/testing'
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterEach, beforeAll, beforeEach } from 'vitest'
import { FIXTURE_BIN, ROOT, TASKS_BIN } from './helpers.js'
import { FIXTURE_ROOT, runInProcess, TASKS_ROOT } from './in-process.js'

/** The two engines a fleet can keep its state on, as the machine provides them. */
export const ENGINES = ['postgres', 'redis'] as const
export type Engine = (typeof ENGINES)[number]

const PG_USERS = ['root', 'postgres']
const boxes: Sandbox[] = []
let pgUser: string | undefined

async function probePostgres(): Promise<string> {
  const errors: string[] = []
  for (const user of PG_USERS) {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: 5432,
      user,
      database: 'test',
      connectionTimeoutMillis: 3000,
    })
    try {
      await client.connect()
      await client.end()
      return user
    } catch (error) {
      errors.push(`${user}: ${(error as Error).message}`)
      await client.end().catch(() => undefined)
    }
  }
  throw new Error(
    `the fleet tests need PostgreSQL at 127.0.0.1:5432 (trust auth, database "test", user root or postgres), and it is not there: ${errors.join('; ')}`,
  )
}

async function probeRedis(): Promise<void> {
  const client = new Redis({
    host: '127.0.0.1',
    port: 6379,
    lazyConnect: true,
    retryStrategy: () => null,
    connectTimeout: 3000,
  })
  client.on('error', () => undefined)
  try {
    await client.connect()
    await client.ping()
  } catch (error) {
    throw new Error(`the fleet tests need Redis at 127.0.0.1:6379, and it is not there: ${(error as Error).message}`)
  } finally {
    client.disconnect()
  }
}

/** A PostgreSQL client for assertions and clean-up. */
export function pgClient(): pg.Client {
  return new pg.Client({ host: '127.0.0.1', port: 5432, user: pgUser ?? 'root', database: 'test' })
}

/** A test's fleet: its own namespace, made fresh before each test and dropped after it. */
export type Fleet = {
  /** The namespace of the running test: schema `<name>` (+ `<name>_queue`), Redis keys `<name>:*`. */
  readonly name: string
  /** The state URL of the running test's namespace on `engine`, with `extra` query members appended. */
  url(engine: Engine, extra?: string): string
}

/** Drop a namespace on both engines: its schemas and every key under its prefix. */
async function dropNamespace(name: string): Promise<void> {
  const client = pgClient()
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
    await client.query(`DROP SCHEMA IF EXISTS "${name}_queue" CASCADE`)
  } finally {
    await client.end()
  }
  const redis = new Redis({ host: '127.0.0.1', port: 6379 })
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${name}:*`, 'COUNT', 1000)
      if (keys.length > 0) await redis.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

/**
 * One namespace (a schema, a key prefix) per test, dropped after it with the test's machines: no test sees
 * another's rows, so assertions count exactly. Both services must be up: a missing one fails the whole file with a
 * message naming it, never a silent skip.
 */
export function useFleet(): Fleet {
  let current: string | undefined
  beforeAll(async () => {
    const [user] = await Promise.all([probePostgres(), probeRedis()])
    pgUser = user
  }, 15_000)
  beforeEach(() => {
    current = `t_${randomBytes(5).toString('hex')}`
  })
  afterEach(async () => {
    for (const box of boxes.splice(0)) box.cleanup()
    const name = current
    current = undefined
    if (name) await dropNamespace(name)
  }, 30_000)
  const name = () => {
    if (!current) throw new Error('a fleet namespace exists only while a test runs')
    return current
  }
  return {
    get name() {
      return name()
    },
    url(engine, extra = '') {
      return engine === 'postgres'
        ? `postgres://${pgUser ?? 'root'}@127.0.0.1:5432/test?schema=${name()}${extra}`
        : `redis://127.0.0.1:6379?prefix=${name()}${extra}`
    },
  }
}

/** A fresh secret ring entry, as an operator would generate it (`openssl rand -hex 32`). */
export function newKey(): string {
  return randomBytes(32).toString('hex')
}

/** A machine of the fleet: its own HOME (config, data, cache), the fleet's state URL and shared secret. */
export type Machine = { box: Sandbox; env: Record<string, string> }

/** `count` machines sharing `url` and `secret`, removed after the test (with `useFleet`). */
export function machines(count: number, url: string, secret: string, bin: 'tasks' | 'fixture' = 'tasks'): Machine[] {
  const prefix = bin === 'tasks' ? 'TASKS_' : 'FIXTURE_'
  return Array.from({ length: count }, () => {
    const box = sandbox('agentcli-fleet-')
    boxes.push(box)
    return { box, env: { ...box.env, [`${prefix}STATE_URL`]: url, [`${prefix}CONFIRM_SECRET`]: secret } }
  })
}

/** Run the example tool on a machine. */
export function onMachine(m: Machine, args: readonly string[], options: RunToolOptions = {}): Promise<ToolRun> {
  return runTool(TASKS_BIN, args, { timeoutMs: 30_000, ...options, env: { ...m.env, ...options.env } })
}

/** Run the fixture CLI on a machine. */
export function fixtureOn(m: Machine, args: readonly string[], options: RunToolOptions = {}): Promise<ToolRun> {
  return runTool(FIXTURE_BIN, args, { timeoutMs: 30_000, ...options, env: { ...m.env, ...options.env } })
}

/** The example's store on a machine, seeded with task 1 (same content and version on every machine). */
export function seedTask(m: Machine): string {
  const path = join(m.box.env.XDG_DATA_HOME!, 'tasks', 'tasks.json')
  mkdirSync(join(m.box.env.XDG_DATA_HOME!, 'tasks'), { recursive: true })
  const at = '2026-01-02T03:04:05.000Z'
  writeFileSync(
    path,
    JSON.stringify({
      schema: 1,
      next_id: 2,
      tasks: [{ id: '1', title: 'a', status: 'open', created_at: at, updated_at: at, version: 1 }],
    }),
  )
  return path
}

/** The envelope of a run, loosely typed. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary envelope members
export function envelope(run: ToolRun): any {
  if (run.json === undefined) throw new Error(`no envelope (exit ${run.code}): ${run.stdout}\n${run.stderr}`)
  return run.json
}

/** A `job worker` a test started on a fleet machine: its process and what it printed so far. */
export type Worker = { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> }

/**
 * Start long-lived `job worker`s on fleet machines, as an operator would run them under a process supervisor: each
 * answers once it says it is serving jobs. After every test, the workers it started and that still run are killed,
 * by PID.
 */
export function useJobWorkers(): (m: Machine, bin: string) => Promise<Worker> {
  const started: Worker[] = []
  afterEach(() => {
    for (const w of started.splice(0))
      if (w.child.exitCode === null && w.child.signalCode === null && w.child.pid) process.kill(w.child.pid, 'SIGKILL')
  })
  return async (m, bin) => {
    const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...m.env }
    const child = spawn(process.execPath, [bin, 'job', 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout!.on('data', (c: Buffer) => (out += c))
    child.stderr!.on('data', (c: Buffer) => (err += c))
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    const worker = { child, stdout: () => out, stderr: () => err, exited }
    started.push(worker)
    const deadline = Date.now() + 15_000
    while (!err.includes('serving jobs')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`worker did not start: ${err}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    return worker
  }
}

/** Calls on a fleet machine run in this process: {@link useInProcessMachines}. */
export type InProcessMachines = {
  /** The example tool on a machine, in-process. */
  tasks(m: Machine, args: readonly string[]): Promise<ToolRun>
  /** The fixture CLI on a machine, in-process. */
  fixture(m: Machine, args: readonly string[]): Promise<ToolRun>
}

/**
 * Calls on a machine that need no process of their own (a dry-run, a read of the shared state) run in this process
 * (`run(root, { io })`), against the same PostgreSQL and Redis. The connections they open are closed after each
 * test, before `useFleet` drops its namespace: call this after `useFleet()` (after-hooks run last first).
 */
export function useInProcessMachines(): InProcessMachines {
  afterEach(async () => {
    const backend = pathToFileURL(join(ROOT, 'dist/fleet/backend.js')).href
    await ((await import(/* @vite-ignore */ backend)) as typeof import('../../src/fleet/backend.js')).closeBackends()
  })
  return {
    tasks: (m, args) => runInProcess(TASKS_ROOT, args, { env: m.env }),
    fixture: (m, args) => runInProcess(FIXTURE_ROOT, args, { env: m.env }),
  }
}
