import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Checkpoint } from '../checkpoints/checkpoint.js'
import type { JobRecord } from '../jobs/types.js'
import { loadOptional } from '../runtime/optional-peers.js'
import { jobNotFound, newerSchema } from './_shared.js'
import { guarded, type StoreName } from './errors.js'
import { type FleetBackend, type FleetJobStore, namespaceOf, SCHEMA_VERSION } from './types.js'

const QUEUE = 'agentcli-jobs'
const UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T))

/** Connect (failing fast: no endless reconnect, no offline queue), check the key layout, build the backend. */
export async function openRedis(url: string, bin: string, where: string): Promise<FleetBackend> {
  const ns = namespaceOf(url, 'prefix', bin)
  const store: StoreName = { backend: 'redis', where: `${where} (prefix ${ns.name})` }
  const { Redis } = await loadOptional('redis', () => import('ioredis'))
  const client: Redis = new Redis(ns.driverUrl, {
    lazyConnect: true,
    connectTimeout: 5000,
    commandTimeout: 15_000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => (times > 3 ? null : 100 * times),
  })
  client.on('error', () => undefined)
  const k = (...parts: string[]) => [ns.name, ...parts].join(':')
  const version = await guarded(store, 'connecting', async () => {
    await client.connect()
    await client.hsetnx(k('meta'), 'schema_version', String(SCHEMA_VERSION))
    return Number(await client.hget(k('meta'), 'schema_version'))
  })
  if (version > SCHEMA_VERSION) {
    client.disconnect()
    throw newerSchema(store, version)
  }
  const r = <T>(doing: string, op: () => Promise<T>) => guarded(store, doing, op)

  /** A short lock per job: updates from submitters, pollers, workers and cancellers on any machine serialise. */
  const locked = async <T>(id: string, body: () => Promise<T>): Promise<T> => {
    const lock = k('job', id, 'lock')
    const mine = randomBytes(12).toString('hex')
    const deadline = Date.now() + 10_000
    while ((await client.set(lock, mine, 'PX', 5000, 'NX')) !== 'OK') {
      if (Date.now() > deadline) throw new Error(`job ${id} stayed locked for 10 s`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    try {
      return await body()
    } finally {
      await client.eval(UNLOCK, 1, lock, mine).catch(() => undefined)
    }
  }

  let queue: Promise<import('bullmq').Queue> | undefined
  const queueOf = () => {
    queue ??= loadOptional('redis', () => import('bullmq')).then(
      ({ Queue }) => new Queue(QUEUE, { connection: client.duplicate(), prefix: k('bull') }),
    )
    return queue
  }

  const jobs: FleetJobStore = {
    leaseMs: ns.leaseMs,
    async create(record) {
      await r('recording the job', async () => {
        await client
          .multi()
          .set(k('job', record.job_id), JSON.stringify(record))
          .zadd(k('jobs'), Date.parse(record.submitted_at), record.job_id)
          .exec()
      })
    },
    get: (id) => r('reading the job', async () => parse<JobRecord>(await client.get(k('job', id)))),
    update: (id, change) =>
      r('updating the job', () =>
        locked(id, async () => {
          const current = parse<JobRecord>(await client.get(k('job', id)))
          if (!current) throw jobNotFound(id)
          const next = change(current)
          if (!next) return current
          const stamped = { ...next, updated_at: new Date().toISOString() }
          await client.set(k('job', id), JSON.stringify(stamped))
          return stamped
        }),
      ),
    list: () =>
      r('listing jobs', async () => {
        const ids = await client.zrevrange(k('jobs'), 0, 999)
        if (ids.length === 0) return []
        const texts = await client.mget(ids.map((id) => k('job', id)))
        return texts.map((t) => parse<JobRecord>(t)).filter((j): j is JobRecord => j !== undefined)
      }),
    async writeResult(id, data) {
      await r('recording the job result', () => client.set(k('job', id, 'result'), JSON.stringify({ data })))
    },
    readResult: (id) =>
      r(
        'reading the job result',
        async () => parse<{ data: unknown }>(await client.get(k('job', id, 'result')))?.data ?? null,
      ),
    async appendItems(id, items) {
      if (items.length === 0) return
      await r('recording job items', () => client.rpush(k('job', id, 'items'), ...items.map((i) => JSON.stringify(i))))
    },
    async *readItems(id) {
      const texts = await r('reading job items', () => client.lrange(k('job', id, 'items'), 0, -1))
      for (const t of texts) yield JSON.parse(t)
    },
    async dispatch(record) {
      const q = await r('starting the queue', queueOf)
      // One queue entry per job id; a redelivered entry finds the job already claimed and does nothing.
      await r('queueing the job', () =>
        q.add(
          'run',
          { job_id: record.job_id },
          {
            jobId: record.job_id,
            // A delivery that failed before the job was claimed (a stopping worker, a store error) is tried again.
            attempts: 3,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: 1000,
            removeOnFail: 1000,
          },
        ),
      )
    },
  }

  return {
    store,
    jobs,
    primitives: {
      store,
      async insertMarker(fp, keepUntil) {
        return (await client.set(k('tok', fp), '1', 'PX', Math.max(1000, keepUntil - Date.now()), 'NX')) === 'OK'
      },
      async hasMarker(fp) {
        return (await client.exists(k('tok', fp))) === 1
      },
      async deleteMarker(fp) {
        await client.del(k('tok', fp))
      },
      async claimRecord(id, record) {
        return (await client.set(k('idem', id), JSON.stringify(record), 'NX')) === 'OK'
      },
      async readRecord(id) {
        return parse(await client.get(k('idem', id)))
      },
      async writeRecord(id, record) {
        await client.set(k('idem', id), JSON.stringify(record))
      },
      async deleteRecord(id) {
        await client.del(k('idem', id))
      },
    },
    checkpoints: {
      async put(checkpoint: Checkpoint) {
        const ttl = Math.max(1000, Date.parse(checkpoint.expires_at) - Date.now() + 60_000)
        await r('recording the checkpoint', () =>
          client.set(k('cp', checkpoint.id), JSON.stringify(checkpoint), 'PX', ttl),
        )
      },
      get: (id) => r('reading the checkpoint', async () => parse<Checkpoint>(await client.get(k('cp', id)))),
      take: (id) => r('completing the checkpoint', async () => (await client.del(k('cp', id))) === 1),
    },
    async appendAudit(record) {
      await r('appending to the audit log', () =>
        client.xadd(k('audit'), 'MAXLEN', '~', '1000000', '*', 'record', JSON.stringify(record)),
      )
    },
    async health() {
      const v = await r('reading the schema version', () => client.hget(k('meta'), 'schema_version'))
      return { schema_version: v === null ? null : Number(v), queue: `BullMQ (prefix ${k('bull')})` }
    },
    async work(run, signal) {
      const { Worker } = await loadOptional('redis', () => import('bullmq'))
      // A long-lived worker outlives store outages: keep reconnecting (a short-lived command gives up fast).
      const patient = (times: number) => Math.min(200 * times, 5000)
      client.options.retryStrategy = patient
      const connection = client.duplicate({
        maxRetriesPerRequest: null,
        enableOfflineQueue: true,
        retryStrategy: patient,
      })
      // A worker that dies mid-job leaves its queue entry stalled; BullMQ hands it out once more, and the job
      // record's claim turns that second delivery into a no-op (the reader reports the job failed, retryable).
      const worker = new Worker<{ job_id: string }>(QUEUE, async (job) => run(job.data.job_id), {
        connection,
        prefix: k('bull'),
        concurrency: 1,
        maxStalledCount: 1,
      })
      worker.on('error', () => undefined)
      await r('starting the queue', () => worker.waitUntilReady())
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
      await Promise.race([worker.close(), new Promise((resolve) => setTimeout(resolve, 1500))])
      connection.disconnect()
    },
    async close() {
      if (queue) await (await queue.catch(() => undefined))?.close().catch(() => undefined)
      client.disconnect()
    },
  }
}
