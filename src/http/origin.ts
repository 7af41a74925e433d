import { AgentError } from '../errors/agent-error.js'

/** Headers that carry a credential: never sent to an origin other than the configured one. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'] as const

/** The redirect statuses the client follows itself (`redirect: 'manual'`), so it decides what each hop carries. */
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** The most redirects one request follows before it is an upstream fault. */
export const MAX_REDIRECTS = 5

/**
 * Resolve a request path against the base URL. A path may name another origin (an absolute URL, `//host`, a
 * `next` link an upstream sent): that is allowed, but such a request never carries the credential.
 */
export function resolveUrl(baseUrl: string, path: string): URL {
  return new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`)
}

/**
 * The headers of one hop. The bearer token is attached only when the hop's origin (scheme, host and port) is the
 * configured one; on any other origin every credential header is removed, including ones a caller set, because
 * the origin a redirect or a link names is chosen by the upstream, not by the tool.
 */
export function hopHeaders(url: URL, origin: string, base: Headers, token: string | undefined): Headers {
  const headers = new Headers(base)
  if (url.origin !== origin) {
    for (const name of CREDENTIAL_HEADERS) headers.delete(name)
    return headers
  }
  if (token) headers.set('authorization', `Bearer ${token}`)
  return headers
}

/** The next hop of a redirect response, or undefined when the response is final. */
export type Hop = { url: URL; method: string; dropBody: boolean }

/**
 * Where a redirect leads, with the fetch standard's method rules (303, and 301/302 after a POST, become a GET
 * without a body). A redirect without a usable `Location`, to a scheme other than http(s), or past
 * {@link MAX_REDIRECTS} is `E_SERVER`: the upstream misbehaved.
 */
export function nextHop(
  status: number,
  location: string | null,
  current: URL,
  method: string,
  hops: number,
): Hop | undefined {
  if (!REDIRECTS.has(status)) return undefined
  const where = { upstream: { method, url: `${current.origin}${current.pathname}`, status } }
  let target: URL | undefined
  try {
    target = location ? new URL(location, current) : undefined
  } catch {
    target = undefined
  }
  if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:'))
    throw new AgentError(
      'E_SERVER',
      `${method} ${current.pathname} answered HTTP ${status} without a usable Location`,
      {
        details: { ...where, reason: 'bad_redirect' },
      },
    )
  if (hops >= MAX_REDIRECTS)
    throw new AgentError('E_SERVER', `${method} ${current.pathname} redirected more than ${MAX_REDIRECTS} times`, {
      details: { ...where, reason: 'too_many_redirects' },
    })
  const toGet = status === 303 || ((status === 301 || status === 302) && method === 'POST')
  return { url: target, method: toGet && method !== 'HEAD' ? 'GET' : method, dropBody: toGet }
}
