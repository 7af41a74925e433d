import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { clearBeforeChange, isBeforeChange } from '../errors/before-change.js'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { withFileLock } from '../fs/lock.js'
import { redactAtRest } from '../output/redact.js'
import { type LandedItem, landedOf, partialResults } from './batch.js'
import { canonicalJson } from './canonical.js'
import { sha256Hex } from './sha256.js'

/** One idempotency record: intent first, then the result once the write completed. */
export type IdempotencyRecord = {
  command: string
  /** A digest of the acting principal and tool: a key is one caller's, never a shared answer. */
  scope: string
  args_digest: string
  /** `partial`: a batch whose items in `landed` were applied and the others failed; the key resumes it. */
  status: 'pending' | 'done' | 'partial'
  data: unknown
  /** The items of a batch that landed so far under this key (spec 002 §9): never applied again. */
  landed?: LandedItem[]
  created_at: string
  completed_at: string | null
}

/** What a key already says about a call. */
export type IdempotencyLookup =
  | { state: 'none' }
  | { state: 'done'; data: unknown }
  | { state: 'mismatch' }
  | { state: 'pending' }
  | { state: 'partial'; landed: LandedItem[] }

/**
 * The idempotency ledger (spec 002 §9): a retried write with the same key returns the recorded result. Keys live
 * in a `scope` (see {@link idempotencyScope}): the same key used by another account, profile or tool is another key.
 */
export type IdempotencyLedger = {
  /**
   * What the ledger holds for a key: nothing yet, a recorded result, another call's arguments under the same key
   * (`mismatch`), a write under way, or one that stopped part-way (`partial`, with the items that landed).
   */
  lookup(scope: string, command: string, key: string, args: unknown): Promise<IdempotencyLookup>
  /**
   * Run `write` once per key, recording intent before and the result after; replays the result afterwards. A
   * failure marked as preceding any change (`beforeChange`) clears the intent, so the key can be retried.
   */
  run(
    scope: string,
    command: string,
    key: string,
    args: unknown,
    write: () => Promise<unknown>,
    /** The ids the caller's plan took as landed: a resumed batch whose record moved on since is refused. */
    landedSeen?: readonly string[],
  ): Promise<{ data: unknown; replayed: boolean }>
}

/** The scope of a caller's keys: a digest of the tool's identity and the acting principal. */
export function idempotencyScope(tool: string, principal: Record<string, unknown>): string {
  return sha256Hex(`agentcli-idempotency\0${tool}\0${canonicalJson(principal)}`)
}

/** Whether a stored value is an idempotency record. */
export function isIdempotencyRecord(value: unknown): value is IdempotencyRecord {
  const r = value as IdempotencyRecord
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.args_digest === 'string' &&
    typeof r.scope === 'string' &&
    (r.status === 'pending' || r.status === 'done' || r.status === 'partial') &&
    (r.landed === undefined || (Array.isArray(r.landed) && r.landed.every(isLanded)))
  )
}

function isLanded(value: unknown): value is LandedItem {
  const l = value as LandedItem
  return typeof l === 'object' && l !== null && typeof l.id === 'string' && typeof l.action === 'string'
}

function sameIds(landed: readonly LandedItem[], seen: readonly string[]): boolean {
  const ids = new Set(landed.map((l) => l.id))
  return ids.size === new Set(seen).size && seen.every((id) => ids.has(id))
}

/** The digest of a call's arguments that a record keeps, to tell a retry from a reuse of the key. */
export function argsDigest(args: unknown): string {
  return sha256Hex(canonicalJson(args))
}

function conflict(reason: string, key: string, message: string, fix: string): AgentError {
  return new AgentError('E_CONFLICT', message, { details: { reason, idempotency_key: key, fix } })
}

/** Records in `<dataDir>/idempotency/`, one file per command and key, changed under a cross-process lock. */
export function fileIdempotencyLedger(dataDir: string): IdempotencyLedger {
  const pathOf = (scope: string, command: string, key: string) =>
    join(dataDir, 'idempotency', `${sha256Hex(`${scope}\0${command}\0${key}`)}.json`)
  const read = (path: string) =>
    readJsonFile<IdempotencyRecord | null>(
      path,
      () => null,
      (v): v is IdempotencyRecord | null => v === null || isIdempotencyRecord(v),
    )
  const judge = (record: IdempotencyRecord | null, args: unknown): IdempotencyLookup => {
    if (!record) return { state: 'none' }
    if (record.args_digest !== argsDigest(args)) return { state: 'mismatch' }
    if (record.status === 'partial') return { state: 'partial', landed: record.landed ?? [] }
    return record.status === 'done' ? { state: 'done', data: record.data } : { state: 'pending' }
  }
  return {
    async lookup(scope, command, key, args) {
      return judge(await read(pathOf(scope, command, key)), args)
    },
    async run(scope, command, key, args, write, landedSeen = []) {
      const path = pathOf(scope, command, key)
      return withFileLock(path, async () => {
        const seen = judge(await read(path), args)
        if (seen.state === 'done') return { data: seen.data, replayed: true }
        if (seen.state === 'mismatch') {
          throw conflict(
            'idempotency_key_reused',
            key,
            `idempotency key ${key} was used with other arguments`,
            'use a new key for a different request',
          )
        }
        if (seen.state === 'pending') throw keyInDoubt(key)
        const landed = seen.state === 'partial' ? seen.landed : []
        if (!sameIds(landed, landedSeen)) {
          // Another run of this batch landed items after this plan was made: applying it could apply them twice.
          throw conflict(
            'idempotency_batch_moved',
            key,
            `another run of the batch with idempotency key ${key} landed items since this dry-run; nothing was applied`,
            'run the same batch again with --dry-run for a new token, then --confirm it',
          )
        }
        const now = new Date().toISOString()
        const record: IdempotencyRecord = {
          command,
          scope,
          args_digest: argsDigest(args),
          status: 'pending',
          data: null,
          ...(landed.length > 0 ? { landed } : {}),
          created_at: now,
          completed_at: null,
        }
        await writeJsonAtomic(path, record)
        let data: unknown
        try {
          data = await write()
        } catch (error) {
          const results = partialResults(error)
          if (results) {
            // A batch that failed in part: what landed is known item by item, so the key resumes it.
            const all = new Map([...landed, ...landedOf(results)].map((l) => [l.id, l]))
            await writeJsonAtomic(path, { ...record, status: 'partial', landed: [...all.values()] }).catch((e) => {
              clearBeforeChange(e)
              throw e
            })
            throw error
          }
          // Nothing changed: forget the intent (or go back to the partial record) so that a retry runs.
          // Anything else stays "in doubt".
          if (isBeforeChange(error)) {
            if (seen.state === 'partial') await writeJsonAtomic(path, { ...record, status: 'partial' })
            else await rm(path, { force: true }).then(undefined, () => undefined)
          }
          throw error
        }
        try {
          await writeJsonAtomic(path, {
            ...record,
            status: 'done',
            data: redactAtRest(data),
            completed_at: new Date().toISOString(),
          })
        } catch (error) {
          // The write did happen: failing to record it must not read as "nothing changed".
          clearBeforeChange(error)
          throw error
        }
        return { data, replayed: false }
      })
    },
  }
}

/** The `lookup` verdict for a key reused with other arguments, as an error. */
export function keyReused(key: string): AgentError {
  return conflict(
    'idempotency_key_reused',
    key,
    `idempotency key ${key} was used with other arguments`,
    'use a new key for a different request',
  )
}

/** The verdict for a key whose earlier attempt may have changed something and did not finish, as an error. */
export function keyInDoubt(key: string): AgentError {
  return conflict(
    'idempotency_in_doubt',
    key,
    `an earlier attempt with idempotency key ${key} did not finish`,
    'check whether the change happened, then retry with a new key',
  )
}
