/**
 * Batch resume (src/confirm/batch.ts, the partial records of src/confirm/idempotency.ts), in process for the
 * coverage gate: what landed is never planned or applied again, and a resumed failure keeps the record resumable.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { batchOutcome, type LandedItem, landedOf, partialResults, withoutLanded } from '../../../src/confirm/batch.js'
import { argsDigest, fileIdempotencyLedger, idempotencyScope } from '../../../src/confirm/idempotency.js'
import { AgentError } from '../../../src/errors/agent-error.js'
import { beforeChange, isBeforeChange } from '../../../src/errors/before-change.js'
import { CORE_CATALOGUE } from '../../../src/errors/catalogue.js'
import { previewItems } from '../../../src/output/preview-items.js'
import { invocation } from '../../../src/runtime/invocation.js'
import { batchData } from '../../../src/write/batch.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
/** A directory of this test's, removed after it. */
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-batch-'))
  dirs.push(dir)
  return dir
}

const landed = (...ids: string[]) => new Map<string, LandedItem>(ids.map((id) => [id, { id, action: 'deleted' }]))

describe('withoutLanded', () => {
  it('leaves a plan alone when nothing landed', () => {
    const plan = { changes: [{ id: '1' }], targets: [{ id: '1' }] }
    expect(withoutLanded(plan, landed())).toBe(plan)
  })

  it('drops the landed items from changes, targets, rejections and a keyed state, and keeps id-less changes', () => {
    const plan = {
      changes: [{ id: '1' }, { id: '2' }, { id: null }],
      targets: [{ id: '1' }, { id: '2' }],
      rejected: [{ id: '1' }, { id: '3' }],
      state: [{ id: '1' }, { id: '2' }],
    }
    expect(withoutLanded(plan, landed('1'))).toEqual({
      changes: [{ id: '2' }, { id: null }],
      targets: [{ id: '2' }],
      rejected: [{ id: '3' }],
      state: [{ id: '2' }],
    })
  })

  it('keeps a state that is not a list of {id} as it is, and plans without targets or rejections', () => {
    const plan = { changes: [{ id: '1' }, { id: '2' }], state: { file: 'x' } }
    expect(withoutLanded(plan, landed('2'))).toEqual({ changes: [{ id: '1' }], state: { file: 'x' } })
    const mixed = { changes: [{ id: '1' }], state: [{ id: '1' }, { name: 'no id' }] }
    expect(withoutLanded(mixed, landed('1')).state).toEqual(mixed.state)
  })
})

describe('batchOutcome', () => {
  it('reports landed items of an earlier run as already applied, with their count', () => {
    const data = batchOutcome([{ id: '2', ok: true, action: 'deleted' }], landed('1', '2'), CORE_CATALOGUE, undefined)
    expect(data.results).toEqual([
      { id: '1', ok: true, action: 'deleted', already_applied: true },
      { id: '2', ok: true, action: 'deleted' },
    ])
    expect(data.summary).toEqual({ ok_count: 2, error_count: 0, already_applied_count: 1 })
  })

  it('a failure carries every result, and the code a re-run cannot fix comes first', () => {
    const items = [
      { id: '1', ok: true as const, action: 'deleted' },
      { id: '2', ok: false as const, error: { code: 'E_NETWORK', message: 'down' } },
      { id: '3', ok: false as const, error: { code: 'E_NOT_FOUND', message: 'gone' } },
    ]
    let thrown: unknown
    try {
      batchOutcome(items, landed(), CORE_CATALOGUE, 'tasks delete 1 2 3 --idempotency-key k --dry-run')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({
      code: 'E_NOT_FOUND',
      details: { batch: true, partial: true, failed_ids: ['2', '3'], resume: expect.stringContaining('--dry-run') },
    })
    expect(partialResults(thrown)).toHaveLength(3)
    expect(landedOf(partialResults(thrown)!)).toEqual([{ id: '1', action: 'deleted' }])
  })

  it('without a key a partial failure says how to make it resumable; a retryable one hints the resume', () => {
    const fail = (code: string, resume?: string, keyFlag = true) => {
      try {
        batchOutcome(
          [
            { id: '1', ok: true, action: 'deleted' },
            { id: '2', ok: false, error: { code, message: 'x' } },
          ],
          landed(),
          CORE_CATALOGUE,
          resume,
          keyFlag,
        )
      } catch (error) {
        return error as AgentError
      }
      throw new Error('no failure')
    }
    expect(fail('E_NOT_FOUND').details.fix).toContain('--idempotency-key')
    // A command without the flag is never told to pass it.
    expect(fail('E_NOT_FOUND', undefined, false).details.fix).toBe(
      're-run it with only failed_ids (dry-run, then confirm)',
    )
    let none: AgentError | undefined
    try {
      batchOutcome(
        [{ id: '2', ok: false, error: { code: 'E_NOT_FOUND', message: 'x' } }],
        landed(),
        CORE_CATALOGUE,
        undefined,
      )
    } catch (error) {
      none = error as AgentError
    }
    // Nothing landed: there is nothing to resume, so no fix about keys either.
    expect(none?.details).toMatchObject({ partial: false })
    expect(none?.details.fix).toBeUndefined()
    expect(fail('E_NETWORK', 'tasks delete 1 2 --dry-run').details.hint).toContain('re-run the same batch')
  })

  it('partialResults ignores anything that is not a batch failure', () => {
    expect(partialResults(new Error('x'))).toBeUndefined()
    expect(partialResults(new AgentError('E_IO', 'x'))).toBeUndefined()
    expect(partialResults(new AgentError('E_IO', 'x', { details: { batch: true, results: 'no' } }))).toBeUndefined()
  })
})

describe('batchData', () => {
  const items = [
    { id: '1', ok: true as const, action: 'deleted' },
    { id: '2', ok: false as const, error: { code: 'E_NOT_FOUND', message: 'x' } },
  ]
  const failure = (key: string | undefined, keyFlag: boolean) => {
    const state = { landed: new Map(), idempotencyKey: key, confirmed: undefined }
    const argv = ['1', '2', ...(key ? ['--idempotency-key', key] : []), '--confirm', 'ct_3.x.y']
    try {
      batchData(items, state, CORE_CATALOGUE, { bin: 'tasks', id: 'delete', argv, keyFlag })
    } catch (error) {
      return (error as AgentError).details
    }
    throw new Error('no failure')
  }

  it('names a resume command runnable as this process was started, without the token', () => {
    // Under vitest `tasks` is not on PATH: the resume starts the script that runs, never a bare `tasks`.
    expect(failure('k1', true).resume).toBe(`${invocation('tasks')} delete 1 2 --idempotency-key k1 --dry-run`)
    expect(invocation('tasks')).not.toBe('tasks')
  })

  it('suggests --idempotency-key only to a command that has the flag', () => {
    expect(failure(undefined, true).fix).toContain('--idempotency-key')
    expect(failure(undefined, false).fix).not.toContain('--idempotency-key')
  })
})

describe('a partial idempotency record', () => {
  const ANN = idempotencyScope('tasks', { account: 'ann' })

  it('a resumed run that fails before any change goes back to the partial record, so the key still resumes', async () => {
    const ledger = fileIdempotencyLedger(tempDir())
    const args = { ids: ['1', '2'] }
    const partial = () =>
      batchOutcome(
        [
          { id: '1', ok: true, action: 'deleted' },
          { id: '2', ok: false, error: { code: 'E_NETWORK', message: 'down' } },
        ],
        landed(),
        CORE_CATALOGUE,
        undefined,
      )
    await expect(ledger.run(ANN, 'delete', 'k', args, async () => partial())).rejects.toMatchObject({
      code: 'E_NETWORK',
    })
    expect(await ledger.lookup(ANN, 'delete', 'k', args)).toEqual({
      state: 'partial',
      landed: [{ id: '1', action: 'deleted' }],
    })
    await expect(
      ledger.run(ANN, 'delete', 'k', args, async () => Promise.reject(beforeChange(new Error('lock'))), ['1']),
    ).rejects.toThrow('lock')
    expect(await ledger.lookup(ANN, 'delete', 'k', args)).toMatchObject({ state: 'partial' })
  })
})

describe('a partial record that cannot be written', () => {
  it('is an error of its own, never marked as "nothing changed" (items did land)', async () => {
    const dir = tempDir()
    const ledger = fileIdempotencyLedger(dir)
    const scope = idempotencyScope('tasks', { account: 'ann' })
    const write = async () => {
      // The record's place turns into a directory while the batch runs: the partial record cannot land.
      const records = join(dir, 'idempotency')
      for (const name of readdirSync(records).filter((n) => n.endsWith('.json'))) {
        rmSync(join(records, name))
        mkdirSync(join(records, name, 'blocker'), { recursive: true })
      }
      return batchOutcome(
        [
          { id: '1', ok: true, action: 'deleted' },
          { id: '2', ok: false, error: { code: 'E_NETWORK', message: 'down' } },
        ],
        landed(),
        CORE_CATALOGUE,
        undefined,
      )
    }
    const error = await ledger.run(scope, 'delete', 'k', { ids: ['1', '2'] }, write).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_IO' })
    expect(partialResults(error)).toBeUndefined()
    expect(isBeforeChange(error)).toBe(false)
  })
})

describe('a partial record written without its landed list', () => {
  it('reads as partial with nothing landed', async () => {
    const dir = tempDir()
    const scope = idempotencyScope('tasks', { account: 'ann' })
    const args = { ids: ['1'] }
    const name = createHash('sha256').update(`${scope}\0delete\0k`).digest('hex')
    mkdirSync(join(dir, 'idempotency'))
    const record = { command: 'delete', scope, args_digest: argsDigest(args), status: 'partial', data: null }
    writeFileSync(
      join(dir, 'idempotency', `${name}.json`),
      JSON.stringify({ ...record, created_at: '', completed_at: null }),
    )
    expect(await fileIdempotencyLedger(dir).lookup(scope, 'delete', 'k', args)).toEqual({
      state: 'partial',
      landed: [],
    })
  })
})

describe('previewItems', () => {
  it('shows at most max items with the full count', () => {
    expect(previewItems([1, 2, 3], 2)).toEqual({ items: [1, 2], count: 3, truncated: true })
    expect(previewItems(new Set(['a']))).toEqual({ items: ['a'], count: 1, truncated: false })
  })
})

describe('dryRunCommand', () => {
  it('drops the token and any --dry-run before `--`, keeps every word after it, and puts --dry-run before it', async () => {
    const { dryRunCommand } = await import('../../../src/write/dry-run.js')
    const start = invocation('tasks')
    expect(dryRunCommand('tasks', 'delete', ['1', '--confirm', 'ct_3.a.b', '--confirm=x', '--dry-run'])).toBe(
      `${start} delete 1 --dry-run`,
    )
    expect(dryRunCommand('tasks', 'delete', ['a', '--', '--dry-run', '--confirm'])).toBe(
      `${start} delete a --dry-run -- --dry-run --confirm`,
    )
  })
})
