import { createHash } from 'node:crypto'
import type { ApprovalStore } from '../approvals/store.js'
import type { IdempotencyLedger, IdempotencyLookup, IdempotencyRecord } from '../confirm/idempotency.js'
import { argsDigest, isIdempotencyRecord, keyInDoubt, keyReused } from '../confirm/idempotency.js'
import { type TokenLedger, tokenFingerprint } from '../confirm/ledger.js'
import { AgentError } from '../errors/agent-error.js'
import { beforeChange, isBeforeChange } from '../errors/before-change.js'
import { redactAtRest } from '../output/redact.js'
import { guarded, recordedInDoubt, type StoreName } from './errors.js'
import { DEFAULT_PENDING_WAIT_MS } from './location.js'

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

/** Where the record of one idempotency key lives in the shared store. */
export const recordId = (scope: string, command: string, key: string) =>
  createHash('sha256').update(`${scope}\0${command}\0${key}`).digest('hex')

/**
 * A record in the store that agentcli did not write as it is (an unknown status, a missing field): nothing is
 * decided on it (it could say "done" of a change that never ran, or hide one under way), and nothing was changed.
 */
function invalidRecord(store: StoreName, id: string): AgentError {
  return beforeChange(
    new AgentError(
      'E_IO',
      `the idempotency record ${id} in the ${store.backend} state store ${store.where} is not valid`,
      {
        details: {
          reason: 'invalid_record',
          backend: store.backend,
          store: store.where,
          record: id,
          fix: 'inspect the record: if no change under this key is under way, delete it, then retry',
        },
      },
    ),
  )
}

/**
 * Idempotency records on a shared store: the intent is a unique insert, so of N machines running one key
 * exactly one applies the change; the others wait for its result and replay it. The in-doubt rule is the file
 * ledger's: only a failure known to precede any change clears the intent.
 */
export function sharedIdempotencyLedger(
  p: SharedPrimitives,
  options: {
    /** How long to wait for another machine's attempt with the same key (`agentcli.state.pending_wait_ms`). */
    pendingWaitMs?: number
  } = {},
): IdempotencyLedger {
  const pendingWaitMs = options.pendingWaitMs ?? DEFAULT_PENDING_WAIT_MS
  const judge = (raw: IdempotencyRecord | undefined, args: unknown): IdempotencyLookup => {
    if (!raw) return { state: 'none' }
    if (raw.args_digest !== argsDigest(args)) return { state: 'mismatch' }
    return raw.status === 'done' ? { state: 'done', data: raw.data } : { state: 'pending' }
  }
  // Every read of a shared record is validated: absent is none, anything but a record agentcli writes is E_IO.
  const read = async (id: string): Promise<IdempotencyRecord | undefined> => {
    const raw = await guarded(p.store, 'reading an idempotency record', () => p.readRecord(id))
    if (raw === undefined || raw === null) return undefined
    if (!isIdempotencyRecord(raw)) throw invalidRecord(p.store, id)
    return raw
  }
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
      // Another machine's attempt holds the key: wait for its result (bounded), or claim the key if that attempt
      // cleared it (nothing changed there).
      const deadline = Date.now() + pendingWaitMs
      while (!(await guarded(p.store, 'recording the intent', () => p.claimRecord(id, record)))) {
        const seen = judge(await read(id), args)
        if (seen.state === 'done') return { data: seen.data, replayed: true }
        if (seen.state === 'mismatch') throw keyReused(key)
        if (Date.now() >= deadline) throw keyInDoubt(key)
        await new Promise((resolve) => setTimeout(resolve, 100))
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

/** The most signatures one approval request holds in the shared store. */
export const MAX_APPROVALS = 16

/**
 * Approvals on the shared store: a request's signatures in numbered slots, each claimed by an insert-if-absent,
 * so approvers filing at once on different machines never overwrite each other. As on a machine, the store is
 * trusted with nothing: every signature is verified at `--confirm`.
 */
export function sharedApprovalStore(p: SharedPrimitives): ApprovalStore {
  const slot = (requestId: string, n: number) => `approval:${requestId}:${n}`
  const signatureIn = (record: unknown) => (record as { data?: unknown } | undefined)?.data
  return {
    async add(requestId, signature) {
      const filed = await guarded(p.store, 'filing the approval', async () => {
        const now = new Date().toISOString()
        const record = {
          command: 'approve',
          scope: requestId,
          args_digest: '',
          status: 'done' as const,
          data: signature,
          created_at: now,
          completed_at: now,
        }
        for (let n = 0; n < MAX_APPROVALS; n++) {
          if (await p.claimRecord(slot(requestId, n), record)) return true
          if (signatureIn(await p.readRecord(slot(requestId, n))) === signature) return true
        }
        return false
      })
      if (!filed)
        throw new AgentError('E_CONFLICT', `approval request ${requestId} holds ${MAX_APPROVALS} signatures already`, {
          details: { reason: 'approvals_full', fix: 'run the command again with --dry-run for a new request' },
        })
    },
    list: (requestId) =>
      guarded(p.store, 'reading the approvals', async () => {
        const out: string[] = []
        for (let n = 0; n < MAX_APPROVALS; n++) {
          const signature = signatureIn(await p.readRecord(slot(requestId, n)))
          if (typeof signature !== 'string') break
          out.push(signature)
        }
        return out
      }),
  }
}
