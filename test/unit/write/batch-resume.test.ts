import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { batchOutcome } from '../../../src/confirm/batch.js'
import { fileIdempotencyLedger, idempotencyScope } from '../../../src/confirm/idempotency.js'
import type { BatchItem } from '../../../src/confirm/preview.js'
import { isAgentError } from '../../../src/errors/agent-error.js'
import { CORE_CATALOGUE } from '../../../src/errors/catalogue.js'
import { env, seed, storePath, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()

const KEY = ['--idempotency-key', 'cleanup-1']
const storedIds = () =>
  (JSON.parse(readFileSync(storePath(box()), 'utf8')) as { tasks: Array<{ id: string }> }).tasks.map((t) => t.id)

async function confirmBatch(args: string[]) {
  const dry = await tasks(box(), [...args, '--dry-run'])
  const token = env(dry).data?.confirm_token
  return { dry: env(dry), run: await tasks(box(), [...args, '--confirm', token]), token }
}

describe('a batch that failed in part resumes under its idempotency key', () => {
  it('reports every item, then applies only what had not landed and never re-applies the rest', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ])
    const batch = ['delete', '1', '2', '3', ...KEY]

    const first = await confirmBatch(batch)
    expect(first.dry.data.preview.rejected).toEqual([
      { id: '3', error: expect.objectContaining({ code: 'E_NOT_FOUND' }) },
    ])
    expect(first.run.code).toBe(3)
    const error = env(first.run).error
    expect(error).toMatchObject({ code: 'E_NOT_FOUND', retryable: false })
    expect(error.details).toMatchObject({
      partial: true,
      failed_ids: ['3'],
      summary: { ok_count: 2, error_count: 1 },
      resume: expect.stringContaining('delete 1 2 3 --idempotency-key cleanup-1 --dry-run'),
    })
    expect(error.details.results).toEqual([
      { id: '1', ok: true, action: 'deleted' },
      { id: '2', ok: true, action: 'deleted' },
      { id: '3', ok: false, error: expect.objectContaining({ code: 'E_NOT_FOUND' }) },
    ])
    expect(error.details.resume).not.toContain('--confirm')
    expect(storedIds()).toEqual([])

    // Meanwhile a task 1 exists again (someone re-created it) and task 3 now exists.
    seed(box(), [
      { id: '1', title: 'a, again' },
      { id: '3', title: 'c' },
    ])

    const second = await confirmBatch(batch)
    expect(second.dry.data.preview.changes.map((c: { id: string }) => c.id)).toEqual(['3'])
    expect(second.dry.data.preview.already_applied).toEqual([
      { id: '1', action: 'deleted' },
      { id: '2', action: 'deleted' },
    ])
    expect(second.dry.data.preview).not.toHaveProperty('rejected')
    expect(second.run.code).toBe(0)
    expect(env(second.run).data).toEqual({
      results: [
        { id: '1', ok: true, action: 'deleted', already_applied: true },
        { id: '2', ok: true, action: 'deleted', already_applied: true },
        { id: '3', ok: true, action: 'deleted' },
      ],
      summary: { ok_count: 3, error_count: 0, already_applied_count: 2 },
    })
    // The landed delete of 1 was not applied again: the new task 1 survives.
    expect(storedIds()).toEqual(['1'])

    // Done now: the same key replays the result and changes nothing.
    const third = await tasks(box(), [...batch, '--confirm', second.token])
    expect(third.code).toBe(0)
    expect(env(third).meta.replayed).toBe(true)
    expect(env(third).data).toEqual(env(second.run).data)
    expect(storedIds()).toEqual(['1'])
  })

  it('the first token stays spent after a partial failure: replaying it applies nothing', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const batch = ['delete', '1', '7', ...KEY]
    const first = await confirmBatch(batch)
    expect(first.run.code).toBe(3)
    seed(box(), [{ id: '1', title: 'a, again' }])
    const replay = await tasks(box(), [...batch, '--confirm', first.token])
    expect(env(replay).error).toMatchObject({ code: 'E_CONFLICT' })
    expect(storedIds()).toEqual(['1'])
  })

  it('the same key with another batch is refused, not resumed', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    expect((await confirmBatch(['delete', '1', '7', ...KEY])).run.code).toBe(3)
    const other = await tasks(box(), ['delete', '1', '8', ...KEY, '--dry-run'])
    expect(env(other).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'idempotency_key_reused' } })
  })

  it('without a key a partial failure says how to make it resumable', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const { run } = await confirmBatch(['delete', '1', '7'])
    expect(run.code).toBe(3)
    expect(env(run).error.details).toMatchObject({
      partial: true,
      failed_ids: ['7'],
      fix: expect.stringMatching(/idempotency-key/),
    })
    expect(env(run).error.details).not.toHaveProperty('resume')
  })
})

describe('the exit code and retryable of a partial failure', () => {
  const fail = (id: string, code: string): BatchItem => ({ id, ok: false, error: { code, message: `${id} failed` } })
  const outcome = (items: BatchItem[], resume?: string) => {
    try {
      batchOutcome(items, new Map(), CORE_CATALOGUE, resume)
    } catch (error) {
      if (isAgentError(error)) return error
    }
    throw new Error('batchOutcome did not fail')
  }

  it('a failure a re-run cannot fix decides the code, even after a retryable one', () => {
    const e = outcome([{ id: '1', ok: true, action: 'deleted' }, fail('2', 'E_SERVER'), fail('3', 'E_NOT_FOUND')])
    expect(e.code).toBe('E_NOT_FOUND')
    expect(e.details.failed_ids).toEqual(['2', '3'])
  })

  it('a conflict counts as fixable by a re-run (its dry-run re-reads state)', () => {
    const e = outcome([fail('1', 'E_CONFLICT'), fail('2', 'E_SERVER')], 'tasks delete 1 2 --dry-run')
    expect(e.code).toBe('E_CONFLICT')
    expect(e.details.hint).toContain('tasks delete 1 2 --dry-run')
  })

  it('only retryable failures: the code is retryable and the hint is the resume command', () => {
    const e = outcome([{ id: '1', ok: true, action: 'deleted' }, fail('2', 'E_SERVER')], 'tasks delete 1 2 --dry-run')
    expect(e.code).toBe('E_SERVER')
    expect(CORE_CATALOGUE.lookup(e.code)?.retryable).toBe(true)
    expect(e.details.hint).toContain('tasks delete 1 2 --dry-run')
  })
})

describe('the per-item ledger of a batch', () => {
  const scope = idempotencyScope('tasks', { account: 'ann' })
  const args = { ids: ['1', '2', '3'] }
  const partial = (results: BatchItem[]) => () => Promise.reject(batchFailure(results))
  const batchFailure = (results: BatchItem[]) => {
    try {
      batchOutcome(results, new Map(), CORE_CATALOGUE, undefined)
    } catch (error) {
      return error
    }
    throw new Error('no failure')
  }
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const ledger = () => {
    const dir = mkdtempSync(join(tmpdir(), 'batch-ledger-'))
    dirs.push(dir)
    return fileIdempotencyLedger(dir)
  }
  const notFound = (id: string): BatchItem => ({ id, ok: false, error: { code: 'E_NOT_FOUND', message: 'gone' } })

  it('records what landed item by item, and accumulates it over resumed runs', async () => {
    const l = ledger()
    await expect(
      l.run(
        scope,
        'delete',
        'k',
        args,
        partial([{ id: '1', ok: true, action: 'deleted' }, notFound('2'), notFound('3')]),
      ),
    ).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    expect(await l.lookup(scope, 'delete', 'k', args)).toEqual({
      state: 'partial',
      landed: [{ id: '1', action: 'deleted' }],
    })
    await expect(
      l.run(scope, 'delete', 'k', args, partial([{ id: '2', ok: true, action: 'deleted' }, notFound('3')]), ['1']),
    ).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    expect(await l.lookup(scope, 'delete', 'k', args)).toMatchObject({
      state: 'partial',
      landed: [
        { id: '1', action: 'deleted' },
        { id: '2', action: 'deleted' },
      ],
    })
  })

  it('refuses a resume planned before another run landed more items (raced resumes never apply twice)', async () => {
    const l = ledger()
    await expect(
      l.run(scope, 'delete', 'k', args, partial([{ id: '1', ok: true, action: 'deleted' }, notFound('2')])),
    ).rejects.toBeDefined()
    let applied = 0
    const write = async () => {
      applied++
      return { results: [], summary: { ok_count: 0, error_count: 0 } }
    }
    // Planned as if nothing had landed: stale.
    await expect(l.run(scope, 'delete', 'k', args, write, [])).rejects.toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'idempotency_batch_moved' },
    })
    // Planned with a landed item the record does not have: also refused.
    await expect(l.run(scope, 'delete', 'k', args, write, ['1', '9'])).rejects.toMatchObject({
      details: { reason: 'idempotency_batch_moved' },
    })
    expect(applied).toBe(0)
    expect((await l.run(scope, 'delete', 'k', args, write, ['1'])).replayed).toBe(false)
    expect(applied).toBe(1)
    expect(await l.lookup(scope, 'delete', 'k', args)).toMatchObject({ state: 'done' })
  })

  it('a partial record with a malformed landed list is refused as corrupt, not trusted', async () => {
    const l = ledger()
    await expect(
      l.run(scope, 'delete', 'k', args, partial([{ id: '1', ok: true, action: 'deleted' }, notFound('2')])),
    ).rejects.toBeDefined()
    const dir = dirs.at(-1)!
    const [file] = readdirSync(join(dir, 'idempotency')).filter((f) => f.endsWith('.json'))
    const path = join(dir, 'idempotency', file!)
    const record = JSON.parse(readFileSync(path, 'utf8'))
    writeFileSync(path, JSON.stringify({ ...record, landed: [{ id: 1 }] }))
    await expect(l.lookup(scope, 'delete', 'k', args)).rejects.toMatchObject({ code: 'E_IO' })
  })
})
