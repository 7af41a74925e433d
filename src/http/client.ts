import { type AgentError, isAgentError } from '../errors/agent-error.js'
import { registerSecret } from '../output/redact-secrets.js'
import { parseBody } from './body.js'
import { hopHeaders, nextHop, resolveUrl } from './origin.js'
import { errorForFailure, errorForResponse, retryAfterSeconds } from './status.js'

/** Options of {@link httpClient}. */
export type HttpOptions = {
  /** The upstream's base URL: request paths resolve against it, and only its origin is sent the token. */
  baseUrl: string
  /** Per-request timeout. */
  timeoutMs?: number
  /** Extra attempts for retryable failures of idempotent requests. */
  retries?: number
  /** The command's cancellation signal. */
  signal?: AbortSignal
  /** The bearer token to send, if any. */
  token?: () => Promise<string | undefined>
  /** Called once on a 401 to get a fresh token; throw `E_AUTH` when that is impossible. */
  refresh?: () => Promise<string>
  /** The longest Retry-After the client waits out itself. */
  maxRetryAfterSeconds?: number
  /** The `user-agent` header (default `agentcli`; `upstream()` sends the tool's name and version). */
  userAgent?: string
}

/** Options of one request. */
export type RequestOptions = {
  /** Query parameters, added to the URL; an undefined value is left out. */
  query?: Record<string, string | number | undefined>
  /** A body, sent as JSON (`content-type: application/json`); none when undefined. */
  body?: unknown
  /** Extra headers, over the defaults (`accept: application/json`, `user-agent`). */
  headers?: Record<string, string>
  /** Whether a retry is safe; true by default for GET, HEAD, OPTIONS, PUT and DELETE. */
  idempotent?: boolean
}

/** A successful response. */
export type HttpResponse<T> = {
  /** The HTTP status (2xx; a failure is thrown as an `AgentError`). */
  status: number
  /** The body: parsed JSON when the response says JSON or JSON was asked for, else the text. */
  data: T
  /** The response's headers. */
  headers: Headers
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])
const RETRYABLE = new Set(['E_NETWORK', 'E_RATE_LIMITED', 'E_SERVER', 'E_TIMEOUT'])
/** Failures a retry a moment later cannot fix: a name that does not resolve, a redirect loop, a garbled body. */
const NOT_RETRIED = new Set([
  'name_resolution',
  'tls',
  'bad_port',
  'too_many_redirects',
  'bad_redirect',
  'malformed_body',
])

type Exchange = { response: Response; text: string; url: URL; credentialed: boolean }

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })

/**
 * A small client for a tool's upstream API, on `fetch`: failures map to the catalogue in one place
 * (`./status.ts`), retryable failures of idempotent requests are retried with backoff, each attempt (every
 * redirect hop and the whole body) has a timeout, a 401 triggers one refresh and one retry, and no header value
 * ever reaches an error. The credential goes only to the origin of `baseUrl` (`./origin.ts`): a path, a `next`
 * link or a redirect that names another origin is requested without it.
 */
export function httpClient(options: HttpOptions) {
  const timeoutMs = options.timeoutMs ?? 10_000
  const retries = options.retries ?? 2
  const maxWait = options.maxRetryAfterSeconds ?? 10
  const origin = resolveUrl(options.baseUrl, '').origin

  /** One attempt: every redirect hop and the body, under one timeout. */
  async function once(method: string, url: URL, init: RequestInit, token: string | undefined): Promise<Exchange> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout
    let hop = { url, method, body: init.body }
    const base = new Headers(init.headers)
    // Whoever supplied it, a credential sent upstream is scrubbed if the upstream echoes it back.
    if (token) registerSecret(token)
    try {
      for (let hops = 0; ; hops++) {
        const headers = hopHeaders(hop.url, origin, base, token)
        const response = await fetch(hop.url, {
          method: hop.method,
          headers,
          signal,
          redirect: 'manual',
          ...(hop.body === undefined ? {} : { body: hop.body }),
        })
        const next = nextHop(response.status, response.headers.get('location'), hop.url, hop.method, hops)
        if (!next) {
          const text = await response.text()
          return { response, text, url: hop.url, credentialed: Boolean(token) && hop.url.origin === origin }
        }
        await response.body?.cancel()
        if (next.dropBody) base.delete('content-type')
        hop = { url: next.url, method: next.method, body: next.dropBody ? undefined : hop.body }
      }
    } catch (error) {
      if (isAgentError(error)) throw error
      throw errorForFailure(hop.method, hop.url, error, timeout.aborted, Boolean(options.signal?.aborted))
    }
  }

  async function request<T = unknown>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<HttpResponse<T>> {
    const url = resolveUrl(options.baseUrl, path)
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v))
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': options.userAgent ?? 'agentcli',
      ...opts.headers,
    }
    let body: string | undefined
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(opts.body)
    }
    const init: RequestInit = { method, headers, ...(body === undefined ? {} : { body }) }
    // Always set: the default above, or the caller's.
    const accept = String(new Headers(headers).get('accept'))
    const idempotent = opts.idempotent ?? IDEMPOTENT.has(method)
    // The token is only asked for when this request goes to the configured origin.
    let token = url.origin === origin ? await options.token?.() : undefined
    let refreshed = false
    for (let attempt = 0; ; attempt++) {
      let error: AgentError
      try {
        const { response, text, url: final, credentialed } = await once(method, url, init, token)
        if (response.ok) {
          const type = response.headers.get('content-type') ?? ''
          return {
            status: response.status,
            data: parseBody(method, final, response.status, type, accept, text) as T,
            headers: response.headers,
          }
        }
        // A 401 from another origin says nothing about our credential: no refresh.
        if (response.status === 401 && credentialed && options.refresh && !refreshed) {
          refreshed = true
          token = await options.refresh()
          attempt--
          continue
        }
        error = errorForResponse(
          method,
          final,
          response.status,
          text,
          retryAfterSeconds(response.headers.get('retry-after')),
        )
      } catch (thrown) {
        if (!isAgentError(thrown)) throw thrown
        error = thrown
      }
      const wait = error.details.retry_after_seconds as number | undefined
      if (
        !idempotent ||
        !RETRYABLE.has(error.code) ||
        NOT_RETRIED.has(error.details.reason as string) ||
        attempt >= retries ||
        (wait !== undefined && wait > maxWait)
      )
        throw error
      await sleep(wait !== undefined ? wait * 1000 : 200 * 2 ** attempt + Math.random() * 100, options.signal)
    }
  }

  return {
    /** Send a request with any method to a path (resolved against `baseUrl`) or a URL. */
    request,
    /** `GET` a path: idempotent, so retried on a retryable failure. */
    get: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('GET', path, opts),
    /** `POST` to a path: not retried unless `idempotent: true` says a retry is safe. */
    post: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('POST', path, opts),
    /** `PUT` to a path: idempotent, so retried on a retryable failure. */
    put: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('PUT', path, opts),
    /** `DELETE` a path: idempotent, so retried on a retryable failure. */
    delete: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('DELETE', path, opts),
  }
}

/** A client made by {@link httpClient}. */
export type HttpClient = ReturnType<typeof httpClient>
