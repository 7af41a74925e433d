import type { ToolConfig } from '../runtime/tool-config.js'
import { redactUrl, stateLocation } from './location.js'
import type { FleetBackend } from './types.js'

const open = new Map<string, Promise<FleetBackend>>()

/**
 * The backend of this tool when a state URL is set, else undefined (machine-local files). Its driver is
 * imported here, only then: the embedded default never loads one. One connection per process and URL.
 */
export async function openBackend(config: ToolConfig): Promise<FleetBackend | undefined> {
  const location = stateLocation(config)
  if (location.kind === 'file') return undefined
  let pending = open.get(location.url)
  if (!pending) {
    const where = redactUrl(location.url)
    pending =
      location.kind === 'postgres'
        ? import('./postgres.js').then((m) => m.openPostgres(location.url, config.bin, where))
        : import('./redis.js').then((m) => m.openRedis(location.url, config.bin, where))
    open.set(location.url, pending)
    pending.catch(() => open.delete(location.url))
  }
  return pending
}

/** Close every backend this process opened (the long-lived worker, tests). */
export async function closeBackends(): Promise<void> {
  const all = [...open.values()]
  open.clear()
  await Promise.all(all.map((p) => p.then((b) => b.close()).catch(() => undefined)))
}
