import { isIP } from 'node:net'
import { fileURLToPath } from 'node:url'
import { AgentError } from '../errors/agent-error.js'

/**
 * The variables verify's sandbox sets itself: the fresh home and XDG dirs, plain output, and the network cut (the
 * dead proxy, and `NO_PROXY` naming the allowed upstreams). An author's `--env` may not replace them, or the checks
 * would no longer be run in the sandbox they describe. `NODE_USE_ENV_PROXY` stays refused: it would load Node's
 * proxy agent at every start for nothing the cut does not already do.
 */
const SANDBOX_VARIABLES = new Set([
  'PATH',
  'HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'NO_COLOR',
  'TERM',
  'NODE_USE_ENV_PROXY',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
])

/**
 * The network cut of a Node target: `net-cut.cjs` preloaded, which sends every TCP connection but the allowed
 * upstreams (`NO_PROXY`) to the dead address, refused there. It replaces `NODE_USE_ENV_PROXY`, which loaded Node's
 * proxy agent at every start (about doubling a small tool's start-up CPU) and made Node 22 warn on stderr.
 */
export const NET_CUT = fileURLToPath(new URL('./net-cut.cjs', import.meta.url))
/** `--require` of `path` in NODE_OPTIONS, quoted as Node parses it there (an install path with a space or a quote). */
export const requireOption = (path: string) => `--require="${path.replace(/["\\]/g, '\\$&')}"`

/** What the sandbox puts into a target's NODE_OPTIONS, after the author's own: the network cut. */
export const SANDBOX_NODE_OPTIONS = requireOption(NET_CUT)

/** What the author adds to the sandbox: named settings, and the loopback upstreams the target may reach. */
export type SandboxSettings = { env: Record<string, string>; upstreams: string[] }

/**
 * Parse `--env NAME=value` and `--allow-upstream <url>`. A name is a shell variable name that is not one of the
 * sandbox's own; an upstream is `http(s)://<loopback>:<port>` (a mock the author started), never a real host: verify
 * stays a deterministic check that reaches nothing outside the machine. Anything else is `E_VALIDATION`.
 */
export function sandboxSettings(env: string[] = [], upstreams: string[] = []): SandboxSettings {
  const out: Record<string, string> = {}
  for (const pair of env) {
    const eq = pair.indexOf('=')
    const name = eq === -1 ? pair : pair.slice(0, eq)
    if (eq === -1 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw invalid('--env', pair, 'NAME=value, NAME a shell variable name', 'pass --env NAME=value')
    if (SANDBOX_VARIABLES.has(name.toUpperCase()))
      throw invalid(
        '--env',
        name,
        `a variable the sandbox does not set itself (not ${[...SANDBOX_VARIABLES].join(', ')})`,
        name.toUpperCase().includes('PROXY')
          ? 'let the target reach a mock upstream with --allow-upstream http://127.0.0.1:<port>'
          : 'verify runs the target in a fresh home with plain output; pass only the tool’s own settings',
      )
    out[name] = pair.slice(eq + 1)
  }
  const hosts = upstreams.map((url) => {
    const parsed = URL.canParse(url) ? new URL(url) : undefined
    const host = parsed?.hostname.replace(/^\[|\]$/g, '')
    if (!parsed || !/^https?:$/.test(parsed.protocol) || !parsed.port || !host || !loopback(host))
      throw invalid(
        '--allow-upstream',
        url,
        'http(s)://<loopback host>:<port> (127.0.0.1, ::1 or localhost, with a port other than the scheme default)',
        'start the mock upstream on 127.0.0.1 and pass its URL with the port',
      )
    return `${parsed.hostname}:${parsed.port}`
  })
  return { env: out, upstreams: hosts }
}

/** The target's environment from the author's settings, on top of the sandbox's own. */
export function sandboxEnv(settings: SandboxSettings): Record<string, string> {
  const nodeOptions = [settings.env.NODE_OPTIONS, SANDBOX_NODE_OPTIONS].filter(Boolean).join(' ')
  return {
    ...settings.env,
    NODE_OPTIONS: nodeOptions,
    // The dead proxy (for a non-Node target) and the cut (for a Node one) stay for everything else; only these
    // host:port pairs are reached directly.
    ...(settings.upstreams.length > 0 ? { NO_PROXY: settings.upstreams.join(',') } : {}),
  }
}

function loopback(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1'
}

function invalid(param: string, got: string, allowed: string, fix: string): AgentError {
  return new AgentError('E_VALIDATION', `${param} ${got}: expected ${allowed}`, {
    details: { param, got, allowed, fix },
  })
}
