import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CORE_CATALOGUE } from '../../../src/errors/catalogue.js'
import { fileJobStore } from '../../../src/jobs/file-store.js'
import { pendingRecord } from '../../../src/jobs/record.js'
import { type JobContext, runJob } from '../../../src/jobs/runtime.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function finish(work: (ctx: JobContext) => Promise<unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-jobs-'))
  dirs.push(dir)
  const store = fileJobStore(dir)
  const id = 'job_0123456789abcdef0123'
  await store.create(pendingRecord({ job_id: id, command: 'import', argv: [], schema_version: '1.0' }))
  return runJob({
    store,
    id,
    worker: { runWork: work },
    signal: new AbortController().signal,
    catalogue: CORE_CATALOGUE,
  })
}

describe("a finished job's status", () => {
  it('says done, not the first note the work gave mid-way', async () => {
    const done = await finish(async (ctx) => {
      await ctx.progress(0.1, { message: 'parsed 500 of 2000' })
      // Within the write throttle: this note is not written while running, and must not linger after.
      await ctx.progress(0.5, { message: 'parsed 1000 of 2000' })
      return { imported: 2000 }
    })
    expect(done).toMatchObject({ status: 'succeeded', progress: 1, message: 'done' })
  })

  it("keeps the note the work gave with progress 1: the work's own word for completion", async () => {
    const done = await finish(async (ctx) => {
      await ctx.progress(0.5, { message: 'halfway' })
      await ctx.progress(1, { message: 'imported 3 tasks' })
      return {}
    })
    expect(done).toMatchObject({ status: 'succeeded', message: 'imported 3 tasks' })
  })
})
