import { isIP } from 'node:net'
import { AgentError } from '../errors/agent-error.js'

/**
 * The variables verify's sandbox sets itself: the fresh home and XDG dirs, plain output, and the network cut (every
 * request goes through a dead proxy). An author's `--env` may not replace them, or the checks would no longer be
 * run in the sandbox they describe.
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
 * Node's own warning that the proxy agent the sandbox turns on is experimental (Node 22): it is about the sandbox,
 * not the target, so it is switched off for that one code, and every other warning still counts against `--quiet`.
 */
export const SANDBOX_NODE_OPTIONS = '--disable-warning=UNDICI-EHPA'

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
    // The dead proxy stays for everything else; only these host:port pairs are reached directly.
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
