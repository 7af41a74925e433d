import { randomBytes } from 'node:crypto'
import type { CallPrincipal } from './call-tool.js'

/** The header a 2025-11-25 client echoes on every request after its handshake (Streamable HTTP, 2025-11-25). */
export const SESSION_HEADER = 'mcp-session-id'

/**
 * Cancellation for 2025-11-25 clients of the stateless HTTP endpoint. Such a client cancels a call with a
 * `notifications/cancelled` POSTed on its own, naming the call's JSON-RPC id; ids are per client (every client
 * counts from 0), so the id alone cannot name a call. The handshake's answer therefore carries a session id (random,
 * 128 bits), which the client sends on each later request; a call is found by its caller's principal, that session
 * id and its request id, and only among the calls this process serves. Nothing is kept once a request ends, so the
 * map holds at most the requests in flight, and no session is ever refused or expired: a request whose session id
 * this process never issued (another instance's, or one from before a restart) is served as before.
 */
export type LegacyCalls = {
  /** A new session id, for the answer to a 2025-11-25 `initialize`. */
  newSession(): string
  /** Follow a request in flight; the returned function forgets it (call it when the request ends). */
  track(principal: CallPrincipal, session: string, id: unknown, abort: AbortController): () => void
  /** A `notifications/cancelled`: abort the call it names, if this process serves it for the same caller. */
  cancel(principal: CallPrincipal, session: string, requestId: unknown): boolean
}

/** The calls of one HTTP server, followed for their 2025-11-25 cancellations. */
export function legacyCalls(): LegacyCalls {
  const inFlight = new Map<string, AbortController>()
  const keyOf = (principal: CallPrincipal, session: string, id: unknown) =>
    JSON.stringify([principal?.issuer ?? null, principal?.subject ?? null, session, id])
  return {
    newSession: () => randomBytes(16).toString('base64url'),
    track(principal, session, id, abort) {
      const key = keyOf(principal, session, id)
      inFlight.set(key, abort)
      return () => {
        if (inFlight.get(key) === abort) inFlight.delete(key)
      }
    },
    cancel(principal, session, requestId) {
      const abort = inFlight.get(keyOf(principal, session, requestId))
      if (!abort) return false
      abort.abort()
      return true
    },
  }
}

/** A JSON-RPC request's id (a string or a number), when `message` is a request other than `initialize`. */
export function requestIdOf(message: unknown): string | number | undefined {
  const m = message as { id?: unknown; method?: unknown } | null
  if (typeof m !== 'object' || m === null || typeof m.method !== 'string' || m.method === 'initialize') return undefined
  return typeof m.id === 'string' || typeof m.id === 'number' ? m.id : undefined
}

/** The request id a `notifications/cancelled` names, when `message` is one. */
export function cancelledIdOf(message: unknown): string | number | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } } | null
  if (typeof m !== 'object' || m === null || m.method !== 'notifications/cancelled' || 'id' in m) return undefined
  const id = m.params?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

/** Whether `message` is the 2025-11-25 handshake's `initialize` request. */
export function isInitialize(message: unknown): boolean {
  const m = message as { id?: unknown; method?: unknown } | null
  return typeof m === 'object' && m !== null && m.method === 'initialize' && m.id !== undefined
}
