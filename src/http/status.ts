import { AgentError } from '../errors/agent-error.js'
import type { CoreErrorCode } from '../errors/catalogue.js'

/** The one mapping from an upstream HTTP status to the catalogue (never from message text). */
export function codeForStatus(status: number): CoreErrorCode {
  if (status === 400 || status === 422) return 'E_VALIDATION'
  if (status === 401) return 'E_AUTH'
  if (status === 403) return 'E_FORBIDDEN'
  if (status === 404) return 'E_NOT_FOUND'
  if (status === 408) return 'E_TIMEOUT'
  if (status === 409 || status === 412) return 'E_CONFLICT'
  if (status === 429) return 'E_RATE_LIMITED'
  if (status >= 500) return 'E_SERVER'
  return 'E_INTERNAL'
}

/** `Retry-After` as seconds: either a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const at = Date.parse(trimmed)
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - now) / 1000)) : undefined
}

const MAX_BODY = 2048

/**
 * The error for a failed response. The upstream's own text is data a third party wrote: it goes into
 * `details.upstream.body`, is listed under `_untrusted`, and is redacted like everything else on the way out.
 */
export function errorForResponse(
  method: string,
  url: URL,
  status: number,
  body: string,
  retryAfter: number | undefined,
): AgentError {
  const code = codeForStatus(status)
  const details: Record<string, unknown> = {
    upstream: { method, url: `${url.origin}${url.pathname}`, status, body: body.slice(0, MAX_BODY) },
    _untrusted: ['upstream.body'],
  }
  if (retryAfter !== undefined) details.retry_after_seconds = retryAfter
  return new AgentError(code, `${method} ${url.pathname} failed: HTTP ${status}`, { details })
}

/** getaddrinfo's failures: the host name did not resolve (no such name, or no answer from DNS). */
const NAME_RESOLUTION_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA'])

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET'])
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
])

/**
 * The error for a request that got no (complete) response, by the error's code: refused/reset are network,
 * stalls (also of a body) are timeouts. A name that does not resolve is `E_NETWORK` with
 * `details.reason: "name_resolution"`, the host and a hint: retryable stays the catalogue's (the network may come
 * back), but the hint tells an agent to fix connectivity or the configured host before it tries again.
 */
export function errorForFailure(
  method: string,
  url: URL,
  error: unknown,
  timedOut: boolean,
  interrupted: boolean,
): AgentError {
  const where = { upstream: { method, url: `${url.origin}${url.pathname}` } }
  if (interrupted)
    return new AgentError('E_INTERRUPTED', `${method} ${url.pathname} was interrupted`, { details: where })
  const cause = (error as { cause?: { code?: string } })?.cause
  const code = cause?.code ?? (error as NodeJS.ErrnoException)?.code
  if (timedOut || (code && TIMEOUT_CODES.has(code)))
    return new AgentError('E_TIMEOUT', `${method} ${url.pathname} timed out`, { details: where })
  if (code && NAME_RESOLUTION_CODES.has(code))
    return new AgentError('E_NETWORK', `${method} ${url.pathname}: cannot resolve the host ${url.hostname} (${code})`, {
      details: {
        ...where,
        reason: 'name_resolution',
        host: url.hostname,
        errno: code,
        hint: `the name ${url.hostname} does not resolve: this machine is offline, its DNS is failing, or the configured host is wrong; check connectivity (e.g. \`getent hosts ${url.hostname}\`) and the URL before retrying`,
      },
    })
  if (code && NETWORK_CODES.has(code))
    return new AgentError('E_NETWORK', `${method} ${url.host}: ${code}`, { details: { ...where, reason: code } })
  return new AgentError('E_NETWORK', `${method} ${url.host} failed`, {
    details: { ...where, reason: code ?? 'unknown' },
  })
}
