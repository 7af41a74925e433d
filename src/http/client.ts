import { type AgentError, isAgentError } from '../errors/agent-error.js'
import { registerSecret } from '../output/redact-secrets.js'
import { errorForFailure, errorForResponse, retryAfterSeconds } from './status.js'

/** Options of {@link httpClient}. */
export type HttpOptions = {
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
  userAgent?: string
}

/** Options of one request. */
export type RequestOptions = {
  query?: Record<string, string | number | undefined>
  body?: unknown
  headers?: Record<string, string>
  /** Whether a retry is safe; true by default for GET, HEAD, OPTIONS, PUT and DELETE. */
  idempotent?: boolean
}

/** A successful response. */
export type HttpResponse<T> = { status: number; data: T; headers: Headers }

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])
const RETRYABLE = new Set(['E_NETWORK', 'E_RATE_LIMITED', 'E_SERVER', 'E_TIMEOUT'])

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
 * (`./status.ts`), retryable failures of idempotent requests are retried with backoff, each request has a
 * timeout, a 401 triggers one refresh and one retry, and no header value ever reaches an error.
 */
export function httpClient(options: HttpOptions) {
  const timeoutMs = options.timeoutMs ?? 10_000
  const retries = options.retries ?? 2
  const maxWait = options.maxRetryAfterSeconds ?? 10

  async function once(method: string, url: URL, init: RequestInit, token: string | undefined): Promise<Response> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout
    const headers = new Headers(init.headers)
    if (token) {
      // Whoever supplied it, a credential sent upstream is scrubbed if the upstream echoes it back.
      registerSecret(token)
      headers.set('authorization', `Bearer ${token}`)
    }
    try {
      return await fetch(url, { ...init, headers, signal })
    } catch (error) {
      throw errorForFailure(method, url, error, timeout.aborted, Boolean(options.signal?.aborted))
    }
  }

  async function request<T = unknown>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<HttpResponse<T>> {
    const url = new URL(
      path.replace(/^\//, ''),
      options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`,
    )
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
    const idempotent = opts.idempotent ?? IDEMPOTENT.has(method)
    let token = await options.token?.()
    let refreshed = false
    for (let attempt = 0; ; attempt++) {
      let error: AgentError
      try {
        const response = await once(method, url, init, token)
        const text = await response.text()
        if (response.ok) {
          const type = response.headers.get('content-type') ?? ''
          return {
            status: response.status,
            data: (type.includes('json') && text ? JSON.parse(text) : text) as T,
            headers: response.headers,
          }
        }
        if (response.status === 401 && options.refresh && !refreshed) {
          refreshed = true
          token = await options.refresh()
          attempt--
          continue
        }
        error = errorForResponse(
          method,
          url,
          response.status,
          text,
          retryAfterSeconds(response.headers.get('retry-after')),
        )
      } catch (thrown) {
        if (!isAgentError(thrown)) throw thrown
        error = thrown
      }
      const wait = error.details.retry_after_seconds as number | undefined
      if (!idempotent || !RETRYABLE.has(error.code) || attempt >= retries || (wait !== undefined && wait > maxWait))
        throw error
      await sleep(wait !== undefined ? wait * 1000 : 200 * 2 ** attempt + Math.random() * 100, options.signal)
    }
  }

  return {
    request,
    get: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('GET', path, opts),
    post: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('POST', path, opts),
    put: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('PUT', path, opts),
    delete: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('DELETE', path, opts),
  }
}

/** A client made by {@link httpClient}. */
export type HttpClient = ReturnType<typeof httpClient>
