import { randomBytes } from 'node:crypto'
import { closeSync, createReadStream, readdirSync, writeSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { AgentError } from '../errors/agent-error.js'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { withFileLock } from '../fs/lock.js'
import { openStateFile } from '../fs/state-file.js'
import { jobRecordProblem } from './record.js'
import type { JobRecord, JobStore } from './types.js'

const ID = /^job_[a-z0-9]{20}$/

/** Where a data dir keeps its jobs, and each job's record: `<dataDir>/jobs/<id>/job.json`. */
export const JOBS_DIR = 'jobs'
/** The file name of a job's record inside its directory (`{@link JOBS_DIR}/<id>/`). */
export const JOB_RECORD = 'job.json'

/** The entries of a directory, none when it cannot be read; synchronous: `job list` then loads no node:fs/promises. */
export function namesIn(root: string): string[] {
  try {
    return readdirSync(root)
  } catch {
    return []
  }
}

/** A new, unguessable job id. */
export function newJobId(): string {
  return `job_${randomBytes(16).toString('hex').slice(0, 20)}`
}

function notFound(id: string): AgentError {
  return new AgentError('E_NOT_FOUND', `job ${id} not found`, {
    details: { job_id: id },
    hint: 'list jobs with `job list`',
  })
}

/**
 * Jobs in `<dataDir>/jobs/<id>/`: `job.json` replaced atomically under a per-job lock (so submitters, pollers,
 * the worker and a canceller can touch one job at once), `result.json`, `items.ndjson`.
 */
export function fileJobStore(dataDir: string): JobStore {
  const root = join(dataDir, JOBS_DIR)
  const dirOf = (id: string) => {
    if (!ID.test(id)) throw notFound(id)
    return join(root, id)
  }
  const read = async (id: string): Promise<JobRecord | undefined> => {
    const path = join(dirOf(id), JOB_RECORD)
    const value = await readJsonFile<unknown>(
      path,
      () => undefined,
      (v): v is unknown => true,
    )
    if (value === undefined) return undefined
    const problem = jobRecordProblem(value, id)
    if (problem)
      throw new AgentError('E_IO', `the record of job ${id} is corrupt: ${problem}`, {
        details: { path, job_id: id, problem, fix: `inspect ${path}, or move it aside to forget the job` },
      })
    return value as JobRecord
  }
  return {
    async create(record) {
      await mkdir(dirOf(record.job_id), { recursive: true, mode: 0o700 })
      await writeJsonAtomic(join(dirOf(record.job_id), JOB_RECORD), record)
    },
    get: read,
    async update(id, change) {
      const path = join(dirOf(id), JOB_RECORD)
      return withFileLock(path, async () => {
        const current = await read(id)
        if (!current) throw notFound(id)
        const next = change(current)
        if (!next) return current
        const stamped = { ...next, updated_at: new Date().toISOString() }
        await writeJsonAtomic(path, stamped)
        return stamped
      })
    },
    async list() {
      const names = namesIn(root)
      // A corrupt record fails the listing with its path rather than vanishing from it unnoticed.
      const records = await Promise.all(names.filter((n) => ID.test(n)).map((n) => read(n)))
      return records.filter((r): r is JobRecord => r !== undefined)
    },
    async writeResult(id, data) {
      await writeJsonAtomic(join(dirOf(id), 'result.json'), { data })
    },
    async readResult(id) {
      const file = await readJsonFile<{ data: unknown } | undefined>(
        join(dirOf(id), 'result.json'),
        () => undefined,
        (v): v is { data: unknown } => typeof v === 'object' && v !== null && 'data' in v,
      )
      if (!file) throw new AgentError('E_IO', `the result of job ${id} is missing`, { details: { job_id: id } })
      return file.data
    },
    async appendItems(id, items) {
      if (items.length === 0) return
      // Never appended through a link: the job's items are state like its record.
      const fd = openStateFile(join(dirOf(id), 'items.ndjson'), 'append')
      try {
        const bytes = Buffer.from(items.map((i) => `${JSON.stringify(i)}\n`).join(''))
        for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done)
      } finally {
        closeSync(fd)
      }
    },
    async *readItems(id) {
      const lines = createInterface({
        input: createReadStream(join(dirOf(id), 'items.ndjson')),
        crlfDelay: Number.POSITIVE_INFINITY,
      })
      try {
        for await (const line of lines) if (line) yield JSON.parse(line)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    },
  }
}
