import { AgentError, isAgentError } from '../errors/agent-error.js'
import { beforeChange } from '../errors/before-change.js'

/** Names the store in every message: the backend and its URL without a password. */
export type StoreName = { backend: 'postgres' | 'redis'; where: string }

const CONFIG_SQLSTATE = /^(28|42|3D|3F)/

function reasonOf(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' ? e.code : undefined
  const message = typeof e?.message === 'string' ? e.message : String(error)
  return code && !message.includes(code) ? `${code}: ${message}` : message
}

/**
 * A store that cannot be reached or answered with an error, before anything was applied: `E_NETWORK` (exit 7,
 * retryable), marked as preceding any change so the token is given back and no idempotency key is left in
 * doubt. Refused credentials or a missing database are `E_CONFIG`: retrying them cannot help.
 */
export function storeFailed(store: StoreName, error: unknown, doing: string): AgentError {
  if (isAgentError(error)) return error
  const code = (error as { code?: unknown })?.code
  const config = typeof code === 'string' && CONFIG_SQLSTATE.test(code)
  return beforeChange(
    new AgentError(
      config ? 'E_CONFIG' : 'E_NETWORK',
      `the ${store.backend} state store ${store.where} failed while ${doing} (${reasonOf(error)}); nothing was changed`,
      {
        details: {
          reason: config ? 'state_store_refused' : 'state_store_unreachable',
          backend: store.backend,
          store: store.where,
          fix: config
            ? 'check the state URL: its user, password and database'
            : `check that ${store.where} is up and reachable from this machine, then retry`,
        },
        cause: error,
      },
    ),
  )
}

/**
 * A store error after the change was applied: the change happened and could not be recorded. Never success and
 * never "nothing changed": `details.in_doubt` says so, and the idempotency key (if any) stays in doubt.
 */
export function recordedInDoubt(store: StoreName, error: unknown, what: string): AgentError {
  return new AgentError(
    'E_NETWORK',
    `the change was applied, but the ${store.backend} state store ${store.where} failed while ${what} (${reasonOf(error)}): its outcome is in doubt`,
    {
      details: {
        reason: 'state_store_after_apply',
        in_doubt: true,
        applied: true,
        backend: store.backend,
        store: store.where,
        fix: 'check whether the change is there before doing anything else; a retry with the same idempotency key answers idempotency_in_doubt, never a second change',
      },
      cause: error,
    },
  )
}

/** Run one store operation, turning any failure into {@link storeFailed}. */
export async function guarded<T>(store: StoreName, doing: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op()
  } catch (error) {
    throw storeFailed(store, error, doing)
  }
}
