import type { JobStore } from '../jobs/types.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { openBackend } from './backend.js'
import { stateLocation } from './location.js'
import { type FleetJobStore, namespaceOf } from './types.js'

/**
 * The fleet's job store, usable synchronously: each call opens the backend on first use, so resolving a store
 * costs nothing until a job is read or written.
 */
export function lazyFleetJobStore(config: ToolConfig): FleetJobStore {
  const location = stateLocation(config)
  if (location.kind === 'file') throw new Error('lazyFleetJobStore needs a state URL')
  const ns = namespaceOf(location.url, location.kind === 'postgres' ? 'schema' : 'prefix', config.bin)
  const jobs = async (): Promise<FleetJobStore> => (await openBackend(config))!.jobs
  const store: FleetJobStore = {
    leaseMs: ns.leaseMs,
    create: async (record) => (await jobs()).create(record),
    get: async (id) => (await jobs()).get(id),
    update: async (id, change) => (await jobs()).update(id, change),
    list: async () => (await jobs()).list(),
    writeResult: async (id, data) => (await jobs()).writeResult(id, data),
    readResult: async (id) => (await jobs()).readResult(id),
    appendItems: async (id, items) => (await jobs()).appendItems(id, items),
    async *readItems(id) {
      yield* (await jobs()).readItems(id)
    },
    dispatch: async (record) => (await jobs()).dispatch(record),
  }
  return store
}

/** Whether a job store hands jobs to a queue and holds worker leases (a fleet's) rather than local PIDs. */
export function isFleetStore(store: JobStore): store is FleetJobStore {
  return typeof (store as Partial<FleetJobStore>).dispatch === 'function'
}
