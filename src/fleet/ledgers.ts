import { createHash } from 'node:crypto'
import type { IdempotencyLedger, IdempotencyLookup, IdempotencyRecord } from '../confirm/idempotency.js'
import { argsDigest, isIdempotencyRecord, keyInDoubt, keyReused } from '../confirm/idempotency.js'
import { type TokenLedger, tokenFingerprint } from '../confirm/ledger.js'
import { isBeforeChange } from '../errors/before-change.js'
import { redactAtRest } from '../output/redact.js'
import { guarded, recordedInDoubt, type StoreName } from './errors.js'

/**
 * A used-token marker outlives its token by this much: machines of a fleet judge expiry on their own clocks,
 * and one whose clock lags must still find the marker of a token it thinks is valid.
 */
export const MARKER_MARGIN_MS = 15 * 60_000

/** The few atomic operations each engine provides; the ledgers' rules are written once, here. */
export type SharedPrimitives = {
  store: StoreName
  /** Insert a marker if absent (unique insert / SET NX), kept until `keepUntil`; true when this call inserted it. */
  insertMarker(fingerprint: string, keepUntil: number): Promise<boolean>
  hasMarker(fingerprint: string): Promise<boolean>
  deleteMarker(fingerprint: string): Promise<void>
  /** Insert an idempotency record if none exists under `id`; true when this call inserted it. */
  claimRecord(id: string, record: IdempotencyRecord): Promise<boolean>
  readRecord(id: string): Promise<unknown>
  writeRecord(id: string, record: IdempotencyRecord): Promise<void>
  deleteRecord(id: string): Promise<void>
}

/** The single-use ledger on a shared store: of N machines consuming one token, exactly one insert wins. */
export function sharedTokenLedger(p: SharedPrimitives): TokenLedger {
  return {
    isUsed: (tokenId) =>
      guarded(p.store, 'reading the single-use ledger', () => p.hasMarker(tokenFingerprint(tokenId))),
    consume: (tokenId, expiresAt) =>
      guarded(p.store, 'consuming the confirm token', () =>
        p.insertMarker(tokenFingerprint(tokenId), expiresAt + MARKER_MARGIN_MS),
      ),
    async release(tokenId) {
      // Giving a token back is a courtesy: failing to, the token stays used and a new dry-run is needed.
      await p.deleteMarker(tokenFingerprint(tokenId)).catch(() => undefined)
    },
  }
}

const recordId = (scope: string, command: string, key: string) =>
  createHash('sha256').update(`${scope}\0${command}\0${key}`).digest('hex')

/** How long a second machine waits for a first one's attempt with the same key to finish, before "in doubt". */
const PENDING_WAIT_MS = 10_000

/**
 * Idempotency records on a shared store: the intent is a unique insert, so of N machines running one key
 * exactly one applies the change; the others wait for its result and replay it. The in-doubt rule is the file
 * ledger's: only a failure known to precede any change clears the intent.
 */
export function sharedIdempotencyLedger(p: SharedPrimitives): IdempotencyLedger {
  const judge = (raw: unknown, args: unknown): IdempotencyLookup => {
    if (!isIdempotencyRecord(raw)) return { state: 'none' }
    if (raw.args_digest !== argsDigest(args)) return { state: 'mismatch' }
    return raw.status === 'done' ? { state: 'done', data: raw.data } : { state: 'pending' }
  }
  const read = (id: string) => guarded(p.store, 'reading an idempotency record', () => p.readRecord(id))
  const ledger: IdempotencyLedger = {
    async lookup(scope, command, key, args) {
      return judge(await read(recordId(scope, command, key)), args)
    },
    async run(scope, command, key, args, write) {
      const id = recordId(scope, command, key)
      const record: IdempotencyRecord = {
        command,
        scope,
        args_digest: argsDigest(args),
        status: 'pending',
        data: null,
        created_at: new Date().toISOString(),
        completed_at: null,
      }
      const mine = await guarded(p.store, 'recording the intent', () => p.claimRecord(id, record))
      if (!mine) {
        const deadline = Date.now() + PENDING_WAIT_MS
        for (;;) {
          const seen = judge(await read(id), args)
          if (seen.state === 'done') return { data: seen.data, replayed: true }
          if (seen.state === 'mismatch') throw keyReused(key)
          if (seen.state === 'none') return ledger.run(scope, command, key, args, write)
          if (Date.now() >= deadline) throw keyInDoubt(key)
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
      let data: unknown
      try {
        data = await write()
      } catch (error) {
        if (isBeforeChange(error)) await p.deleteRecord(id).catch(() => undefined)
        throw error
      }
      const done = {
        ...record,
        status: 'done' as const,
        data: redactAtRest(data),
        completed_at: new Date().toISOString(),
      }
      try {
        await p.writeRecord(id, done)
      } catch (error) {
        throw recordedInDoubt(p.store, error, 'recording the result of the idempotency key')
      }
      return { data, replayed: false }
    },
  }
  return ledger
}
