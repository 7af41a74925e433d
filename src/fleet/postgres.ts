import type { Pool, PoolClient } from 'pg'
import type { PgBoss } from 'pg-boss'
import type { Checkpoint } from '../checkpoints/checkpoint.js'
import type { JobRecord } from '../jobs/types.js'
import { loadOptional } from '../runtime/optional-peers.js'
import { jobNotFound, newerSchema } from './_shared.js'
import { guarded, type StoreName } from './errors.js'
import { type FleetBackend, type FleetJobStore, namespaceOf, SCHEMA_VERSION } from './types.js'

const QUEUE = 'agentcli-jobs'

/** Replayed results are kept as `json`, not `jsonb`: a replay answers with the very bytes, keys in order. */
function ddl(s: string): string {
  return `
    CREATE SCHEMA IF NOT EXISTS ${s};
    CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE IF NOT EXISTS ${s}.used_tokens (fingerprint text PRIMARY KEY, keep_until timestamptz NOT NULL);
    CREATE TABLE IF NOT EXISTS ${s}.idempotency (id text PRIMARY KEY, record json NOT NULL);
    CREATE TABLE IF NOT EXISTS ${s}.jobs (job_id text PRIMARY KEY, record jsonb NOT NULL, result json);
    CREATE TABLE IF NOT EXISTS ${s}.job_items (job_id text NOT NULL, seq bigserial, item jsonb NOT NULL,
      PRIMARY KEY (job_id, seq));
    CREATE TABLE IF NOT EXISTS ${s}.checkpoints (id text PRIMARY KEY, checkpoint jsonb NOT NULL);
    CREATE TABLE IF NOT EXISTS ${s}.audit (seq bigserial PRIMARY KEY, time timestamptz NOT NULL, record jsonb NOT NULL);
    INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', '${SCHEMA_VERSION}') ON CONFLICT (key) DO NOTHING;`
}

/** The schema version in the database, or null when the schema is not there yet. */
async function schemaVersion(pool: Pool, s: string): Promise<number | null> {
  try {
    const r = await pool.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)
    return r.rows[0] ? Number(r.rows[0].value) : null
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === '42P01' || code === '3F000') return null
    throw error
  }
}

/** Create the schema on first use, under an advisory lock so that machines starting together do it once. */
async function ensureSchema(pool: Pool, name: string, s: string): Promise<number> {
  const found = await schemaVersion(pool, s)
  if (found !== null) return found
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agentcli-schema:${name}`])
    await client.query(ddl(s))
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
  return SCHEMA_VERSION
}

/** Connect, create or check the schema, and build the backend. Unreachable is `E_NETWORK` before any change. */
export async function openPostgres(url: string, bin: string, where: string): Promise<FleetBackend> {
  const ns = namespaceOf(url, 'schema', bin)
  const store: StoreName = { backend: 'postgres', where: `${where} (schema ${ns.name})` }
  const { default: pg } = await loadOptional('postgres', () => import('pg'))
  const pool = new pg.Pool({
    connectionString: ns.driverUrl,
    max: 4,
    connectionTimeoutMillis: 5000,
    query_timeout: 15_000,
    allowExitOnIdle: true,
  })
  // An idle connection that drops is replaced on the next query; it must not crash the process.
  pool.on('error', () => undefined)
  const s = `"${ns.name}"`
  const version = await guarded(store, 'connecting', () => ensureSchema(pool, ns.name, s))
  if (version > SCHEMA_VERSION) {
    await pool.end().catch(() => undefined)
    throw newerSchema(store, version)
  }
  const q = (doing: string, text: string, values: unknown[] = []) =>
    guarded(store, doing, () => pool.query(text, values))

  let boss: Promise<PgBoss> | undefined
  const bossOf = (supervise: boolean) => {
    boss ??= (async () => {
      const { PgBoss } = await loadOptional('postgres', () => import('pg-boss'))
      // LISTEN/NOTIFY wakes an idle worker the moment a job is sent (measured: ≈ 500 ms → a few ms); polling
      // stays on underneath, so a lost notification only delays a job.
      const b = new PgBoss({
        connectionString: ns.driverUrl,
        schema: `${ns.name}_queue`,
        supervise,
        schedule: false,
        max: 2,
        useListenNotify: supervise,
      })
      b.on('error', () => undefined)
      await b.start()
      // The queue only delivers; the job record's claim is what keeps a redelivered job from running twice.
      await b.createQueue(QUEUE, {
        retryLimit: 2,
        retryDelay: 1,
        retryBackoff: true,
        expireInSeconds: 86_400,
        heartbeatSeconds: 10,
        notify: true,
      })
      return b
    })()
    boss.catch(() => {
      boss = undefined
    })
    return boss
  }

  const withRow = async <T>(id: string, body: (client: PoolClient, record: JobRecord) => Promise<T>): Promise<T> => {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const r = await client.query(`SELECT record FROM ${s}.jobs WHERE job_id = $1 FOR UPDATE`, [id])
      if (!r.rows[0]) throw jobNotFound(id)
      const out = await body(client, r.rows[0].record as JobRecord)
      await client.query('COMMIT')
      return out
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    } finally {
      client.release()
    }
  }

  const jobs: FleetJobStore = {
    leaseMs: ns.leaseMs,
    async create(record) {
      await q('recording the job', `INSERT INTO ${s}.jobs (job_id, record) VALUES ($1, $2)`, [record.job_id, record])
    },
    async get(id) {
      const r = await q('reading the job', `SELECT record FROM ${s}.jobs WHERE job_id = $1`, [id])
      return r.rows[0]?.record as JobRecord | undefined
    },
    update: (id, change) =>
      guarded(store, 'updating the job', () =>
        withRow(id, async (client, current) => {
          const next = change(current)
          if (!next) return current
          const stamped = { ...next, updated_at: new Date().toISOString() }
          await client.query(`UPDATE ${s}.jobs SET record = $2 WHERE job_id = $1`, [id, stamped])
          return stamped
        }),
      ),
    async list() {
      const r = await q('listing jobs', `SELECT record FROM ${s}.jobs ORDER BY record->>'submitted_at' DESC LIMIT 1000`)
      return r.rows.map((row) => row.record as JobRecord)
    },
    async writeResult(id, data) {
      await q('recording the job result', `UPDATE ${s}.jobs SET result = $2 WHERE job_id = $1`, [id, { data }])
    },
    async readResult(id) {
      const r = await q('reading the job result', `SELECT result FROM ${s}.jobs WHERE job_id = $1`, [id])
      return (r.rows[0]?.result as { data: unknown } | null | undefined)?.data ?? null
    },
    async appendItems(id, items) {
      if (items.length === 0) return
      await q(
        'recording job items',
        `INSERT INTO ${s}.job_items (job_id, item) SELECT $1, x FROM jsonb_array_elements($2::jsonb) AS x`,
        [id, JSON.stringify(items)],
      )
    },
    async *readItems(id) {
      const r = await q('reading job items', `SELECT item FROM ${s}.job_items WHERE job_id = $1 ORDER BY seq`, [id])
      for (const row of r.rows) yield row.item
    },
    async dispatch(record) {
      const b = await guarded(store, 'starting the queue', () => bossOf(false))
      await guarded(store, 'queueing the job', () => b.send(QUEUE, { job_id: record.job_id }))
    },
  }

  return {
    store,
    jobs,
    primitives: {
      store,
      async insertMarker(fp, keepUntil) {
        if (Math.random() < 0.05)
          await pool.query(`DELETE FROM ${s}.used_tokens WHERE keep_until < now()`).catch(() => undefined)
        const r = await pool.query(
          `INSERT INTO ${s}.used_tokens (fingerprint, keep_until) VALUES ($1, to_timestamp($2 / 1000.0)) ON CONFLICT DO NOTHING`,
          [fp, keepUntil],
        )
        return r.rowCount === 1
      },
      async hasMarker(fp) {
        return (await pool.query(`SELECT 1 FROM ${s}.used_tokens WHERE fingerprint = $1`, [fp])).rowCount === 1
      },
      async deleteMarker(fp) {
        await pool.query(`DELETE FROM ${s}.used_tokens WHERE fingerprint = $1`, [fp])
      },
      async claimRecord(id, record) {
        const r = await pool.query(`INSERT INTO ${s}.idempotency (id, record) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
          id,
          record,
        ])
        return r.rowCount === 1
      },
      async readRecord(id) {
        return (await pool.query(`SELECT record FROM ${s}.idempotency WHERE id = $1`, [id])).rows[0]?.record
      },
      async writeRecord(id, record) {
        await pool.query(`UPDATE ${s}.idempotency SET record = $2 WHERE id = $1`, [id, record])
      },
      async deleteRecord(id) {
        await pool.query(`DELETE FROM ${s}.idempotency WHERE id = $1`, [id])
      },
    },
    checkpoints: {
      async put(checkpoint: Checkpoint) {
        await q('recording the checkpoint', `INSERT INTO ${s}.checkpoints (id, checkpoint) VALUES ($1, $2)`, [
          checkpoint.id,
          checkpoint,
        ])
      },
      async get(id) {
        const r = await q('reading the checkpoint', `SELECT checkpoint FROM ${s}.checkpoints WHERE id = $1`, [id])
        return r.rows[0]?.checkpoint as Checkpoint | undefined
      },
      async take(id) {
        return (await q('completing the checkpoint', `DELETE FROM ${s}.checkpoints WHERE id = $1`, [id])).rowCount === 1
      },
    },
    async appendAudit(record) {
      await q('appending to the audit log', `INSERT INTO ${s}.audit (time, record) VALUES ($1, $2)`, [
        record.time,
        record,
      ])
    },
    async health() {
      return {
        schema_version: await guarded(store, 'reading the schema version', () => schemaVersion(pool, s)),
        queue: `pg-boss (schema ${ns.name}_queue)`,
      }
    },
    async work(run, signal) {
      const b = await guarded(store, 'starting the queue', () => bossOf(true))
      await b.work<{ job_id: string }>(QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async (batch) => {
        for (const job of batch) await run(job.data.job_id)
      })
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
      // Drain: stop fetching, let the job in hand record its outcome (it sees the same abort), then stop.
      await b.stop({ graceful: true, timeout: 1500, close: true }).catch(() => undefined)
      boss = undefined
    },
    async close() {
      if (boss) await (await boss.catch(() => undefined))?.stop({ graceful: false, close: true }).catch(() => undefined)
      await pool.end().catch(() => undefined)
    },
  }
}
