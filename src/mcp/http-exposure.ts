import { AgentError } from '../errors/agent-error.js'

/** Whether a listener on `host`, or a URL naming it, is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
}

/** What decides who can reach the endpoint, and so whether it must authenticate. */
export type Exposure = {
  /** The interface the server listens on. */
  host: string
  /** The URL clients use when a reverse proxy serves the endpoint. */
  publicUrl?: string | undefined
  /** Host names requests may name besides the listener's own. */
  allowedHosts?: readonly string[] | undefined
  /** Whether bearer authentication is configured. */
  authenticated: boolean
}

const AUTH_FLAGS = '--auth-issuer or --auth-tokens'

/**
 * The parsed public URL, after refusing (`E_CONFIG`) an endpoint that callers off this machine could reach without
 * a token. The listener is not the only way in: a reverse proxy on this machine forwards the public URL's requests
 * to a loopback listener, and `Host` may name only the listener, the public URL's host and the allowed hosts. So a
 * public URL or an allowed host that is not loopback says the endpoint is meant to be reached from elsewhere, and
 * needs authentication as a listener off loopback does.
 */
export function checkExposure(exposure: Exposure): URL | undefined {
  const publicUrl = exposure.publicUrl === undefined ? undefined : parsePublicUrl(exposure.publicUrl)
  if (exposure.authenticated) return publicUrl
  const refuse = (what: string, details: Record<string, unknown>) =>
    new AgentError('E_CONFIG', `tool mcp --http ${what}: it needs bearer authentication (${AUTH_FLAGS})`, {
      details: { fix: `add ${AUTH_FLAGS}, or name only loopback hosts`, ...details },
    })
  if (!isLoopback(exposure.host))
    throw refuse(`on ${exposure.host} is reachable off this machine`, {
      host: exposure.host,
      fix: 'listen on 127.0.0.1 (the default), or configure bearer authentication',
    })
  if (publicUrl && !isLoopback(publicUrl.hostname))
    throw refuse(`with --public-url ${publicUrl.href} is served to ${publicUrl.hostname}`, {
      public_url: publicUrl.href,
    })
  const remote = (exposure.allowedHosts ?? []).filter((name) => !isLoopback(name))
  if (remote.length > 0)
    throw refuse(`with --allowed-host ${remote.join(', ')} is served to ${remote.join(', ')}`, {
      allowed_hosts: remote,
    })
  return publicUrl
}

/**
 * Refuse (`E_CONFIG`) a resource URL that names a wildcard listener (`0.0.0.0`, `::`) when tokens must name the
 * resource (an issuer's JWTs without an explicit audience): no client reaches that URL and no authorization server
 * issues tokens for it, so the endpoint would advertise a resource nobody can use and accept no token. A concrete
 * address is a URL clients do reach, and stays allowed.
 */
export function checkResource(resource: URL, audienceFromResource: boolean): void {
  if (!audienceFromResource || !isUnspecified(resource.hostname)) return
  throw new AgentError(
    'E_CONFIG',
    `tool mcp --http --auth-issuer on ${resource.hostname} needs --public-url: tokens must name the URL clients use, and ${resource.href} is none`,
    {
      details: {
        resource: resource.href,
        fix: 'add --public-url <the URL clients use> (or --auth-audience <the audience tokens name>)',
      },
    },
  )
}

function isUnspecified(hostname: string): boolean {
  return hostname === '0.0.0.0' || hostname === '[::]'
}

function parsePublicUrl(value: string): URL {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash !== '')
    throw new AgentError('E_CONFIG', `--public-url must be an http(s) URL without a fragment: ${value}`, {
      details: { got: value },
    })
  return url
}

/** The headers a reverse proxy adds to what it forwards (RFC 7239, and the de facto ones before it). */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'] as const

/**
 * The forwarding header a request carries, if any. A proxy that rewrites `Host` to the loopback listener's (nginx's
 * default `proxy_pass`) leaves no public name for {@link checkExposure} to see at start, but it says what it did:
 * a server without authentication answers such a request 403 instead of serving the proxy's callers as the local
 * user.
 */
export function forwardedBy(headers: Readonly<Record<string, unknown>>): string | undefined {
  return FORWARDING_HEADERS.find((name) => headers[name] !== undefined)
}

/** The 403 message for a forwarded request to an endpoint without authentication. */
export function forwardedRefusal(header: string): string {
  return `forwarded by a proxy (${header}): this endpoint has no authentication and serves this machine only; configure ${AUTH_FLAGS}`
}
