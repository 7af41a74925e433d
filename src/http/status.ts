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

/** A failed connection or exchange, by the system's or undici's code: `details.reason` and what to do. */
const NETWORK_REASONS: Readonly<Record<string, { reason: string; hint: string }>> = {
  ECONNREFUSED: {
    reason: 'connection_refused',
    hint: 'nothing accepts connections at {host}: the server is down or the port in the URL is wrong',
  },
  ECONNRESET: { reason: 'connection_reset', hint: '{host} or a proxy closed the connection mid-exchange' },
  EPIPE: { reason: 'connection_reset', hint: '{host} or a proxy closed the connection mid-exchange' },
  UND_ERR_SOCKET: { reason: 'connection_reset', hint: '{host} or a proxy closed the connection mid-exchange' },
  EHOSTUNREACH: { reason: 'host_unreachable', hint: 'no route to {host}: check the network, VPN or firewall' },
  EHOSTDOWN: { reason: 'host_unreachable', hint: 'no route to {host}: check the network, VPN or firewall' },
  ENETUNREACH: { reason: 'network_unreachable', hint: 'this machine has no route to that network: it is offline' },
  ENETDOWN: { reason: 'network_unreachable', hint: 'this machine has no route to that network: it is offline' },
  EADDRNOTAVAIL: { reason: 'address_unavailable', hint: 'this machine cannot use the address of {host}' },
}

/** Certificate and TLS failures: retrying will not help until the certificate or the URL is fixed. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_CERT_)/

const TIMEOUT_REASONS: Readonly<Record<string, string>> = {
  ETIMEDOUT: 'connect_timeout',
  UND_ERR_CONNECT_TIMEOUT: 'connect_timeout',
  UND_ERR_HEADERS_TIMEOUT: 'response_timeout',
  UND_ERR_BODY_TIMEOUT: 'response_timeout',
}

type Cause = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }

/**
 * The error code of a failed request, wherever the runtime put it: on the error, on its cause (fetch's "fetch
 * failed"), on the cause's cause, or on the first attempt of an AggregateError (every address of a host tried).
 */
function failureCode(error: unknown): string | undefined {
  const seen = new Set<unknown>()
  const queue: unknown[] = [error]
  while (queue.length > 0) {
    const e = queue.shift() as Cause | undefined
    if (!e || typeof e !== 'object' || seen.has(e)) continue
    seen.add(e)
    if (typeof e.code === 'string' && e.code !== 'ERR_AGGREGATE_ERROR') return e.code
    queue.push(e.cause, ...(Array.isArray(e.errors) ? e.errors : []))
  }
  return undefined
}

/** Whether fetch refused the port itself (a port the Fetch standard blocks, e.g. 6000 or 10080). */
function badPort(error: unknown): boolean {
  return /^bad port$/i.test(String((error as { cause?: Cause })?.cause?.message ?? ''))
}

/**
 * The error for a request that got no (complete) response, by the error's code: refused/reset are network,
 * stalls (also of a body) are timeouts, each with a specific `details.reason` (`connection_refused`,
 * `connection_reset`, `host_unreachable`, `network_unreachable`, `tls`, `bad_port`, `connect_timeout`,
 * `response_timeout`, …), the code as `details.errno` and a hint. A name that does not resolve is `E_NETWORK`
 * with `details.reason: "name_resolution"`, the host and a hint: retryable stays the catalogue's (the network may
 * come back), but the hint tells an agent to fix connectivity or the configured host before it tries again.
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
  const code = failureCode(error)
  const errno = code ? { errno: code } : {}
  if (timedOut || (code && TIMEOUT_REASONS[code]))
    return new AgentError('E_TIMEOUT', `${method} ${url.pathname} timed out`, {
      details: { ...where, reason: (code && TIMEOUT_REASONS[code]) ?? 'response_timeout', ...errno },
    })
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
  const known = code ? NETWORK_REASONS[code] : undefined
  if (known)
    return new AgentError('E_NETWORK', `${method} ${url.host}: ${known.reason.replaceAll('_', ' ')} (${code})`, {
      details: { ...where, reason: known.reason, errno: code, hint: known.hint.replaceAll('{host}', url.host) },
    })
  if (code && TLS_CODE.test(code))
    return new AgentError('E_NETWORK', `${method} ${url.host}: TLS failed (${code})`, {
      details: {
        ...where,
        reason: 'tls',
        errno: code,
        hint: `the TLS handshake with ${url.host} failed: check the certificate, the system's CA store and the URL's scheme and port`,
      },
    })
  if (badPort(error))
    return new AgentError('E_NETWORK', `${method} ${url.host}: fetch refuses port ${url.port}`, {
      details: {
        ...where,
        reason: 'bad_port',
        hint: `fetch never connects to port ${url.port} (a port the Fetch standard blocks): serve the API on another port`,
      },
    })
  return new AgentError('E_NETWORK', `${method} ${url.host} failed${code ? ` (${code})` : ''}`, {
    details: { ...where, reason: code ? code.toLowerCase() : 'unknown', ...errno },
  })
}
