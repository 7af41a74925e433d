import type { AuditRecord } from '../audit/record.js'
import type { Checkpoint } from '../checkpoints/checkpoint.js'
import { AgentError } from '../errors/agent-error.js'
import type { JobRecord, JobStore } from '../jobs/types.js'
import type { StoreName } from './errors.js'
import type { SharedPrimitives } from './ledgers.js'

/** The schema (PostgreSQL) / key layout (Redis) version this code writes and reads. */
export const SCHEMA_VERSION = 1

/** A job store on a shared engine: jobs go to its queue, and a running job holds a lease its worker renews. */
export type FleetJobStore = JobStore & {
  /** How long a worker's claim lasts without renewal; a running job whose lease ran out lost its worker. */
  leaseMs: number
  /** Hand a created job to the queue engine, for any worker of the fleet. */
  dispatch(record: JobRecord): Promise<void>
}

/** Checkpoints on a shared engine: a resume on any machine, single-use across all of them. */
export type FleetCheckpoints = {
  put(checkpoint: Checkpoint): Promise<void>
  get(id: string): Promise<Checkpoint | undefined>
  /** Remove it; true for exactly one caller however many race. */
  take(id: string): Promise<boolean>
}

/** What `doctor` reports about the backend. */
export type BackendHealth = { schema_version: number | null; queue: string }

/** One engine holding a fleet's state. */
export type FleetBackend = {
  store: StoreName
  primitives: SharedPrimitives
  jobs: FleetJobStore
  checkpoints: FleetCheckpoints
  appendAudit(record: AuditRecord): Promise<void>
  health(): Promise<BackendHealth>
  /** Take jobs off the queue one at a time and run each with `run` until `signal` aborts; then drain and stop. */
  work(run: (jobId: string) => Promise<void>, signal: AbortSignal): Promise<void>
  close(): Promise<void>
}

/** The parts of a state URL agentcli reads itself; the rest goes to the driver. */
export type Namespace = { driverUrl: string; name: string; leaseMs: number }

const NAME = /^[a-z_][a-z0-9_]{0,40}$/

/** Split `schema=` / `prefix=` and `lease_seconds=` off a state URL. */
export function namespaceOf(url: string, param: 'schema' | 'prefix', bin: string): Namespace {
  const parsed = new URL(url)
  const chosen = parsed.searchParams.get(param) ?? `agentcli_${bin.toLowerCase().replace(/[^a-z0-9]/g, '_')}`
  const lease = Number(parsed.searchParams.get('lease_seconds') ?? 30)
  parsed.searchParams.delete(param)
  parsed.searchParams.delete('lease_seconds')
  if (!NAME.test(chosen) || !Number.isInteger(lease) || lease < 2 || lease > 3600) {
    throw new AgentError('E_CONFIG', `the state URL's ${param} or lease_seconds is not valid`, {
      details: {
        got: { [param]: chosen, lease_seconds: lease },
        allowed: { [param]: NAME.source, lease_seconds: '2…3600' },
        fix: `use lower-case letters, digits and _ for ${param}`,
      },
    })
  }
  return { driverUrl: parsed.toString(), name: chosen, leaseMs: lease * 1000 }
}
