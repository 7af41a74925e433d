import { isAgentError } from '../errors/agent-error.js'
import type { HttpClient } from '../http/client.js'
import { FRAMEWORK_SETTINGS, toolEnv } from '../settings/tool-env.js'

/** What a command asks of its upstream client. */
export type UpstreamOptions = { baseUrl: string; auth?: boolean; timeoutMs?: number; retries?: number }

/**
 * The HTTP client of one call: timeouts and retries from the options, else `<BIN>_HTTP_TIMEOUT_MS` /
 * `<BIN>_HTTP_RETRIES`, else the defaults; with `auth`, the bearer token from `token` and one `refresh` on 401.
 */
export async function upstreamClient(
  tool: { bin: string; version: string },
  options: UpstreamOptions,
  signal: AbortSignal,
  auth: { token: () => Promise<string>; refresh: () => Promise<string> },
): Promise<HttpClient> {
  const { httpClient } = await import('../http/client.js')
  const env = toolEnv(tool.bin)
  const client = httpClient({
    baseUrl: options.baseUrl,
    signal,
    timeoutMs: options.timeoutMs ?? env.get('HTTP_TIMEOUT_MS') ?? FRAMEWORK_SETTINGS.HTTP_TIMEOUT_MS.default,
    retries: options.retries ?? env.get('HTTP_RETRIES') ?? FRAMEWORK_SETTINGS.HTTP_RETRIES.default,
    userAgent: `${tool.bin}/${tool.version}`,
    ...(options.auth ? auth : {}),
  })
  return options.auth ? withReauth(client, `${tool.bin} login`) : client
}

/**
 * A credentialed client whose `E_AUTH` always names the login command (`details.reauth`): an upstream that still
 * answers 401 after a successful refresh is a login to redo, as a failed refresh is.
 */
function withReauth(client: HttpClient, reauth: string): HttpClient {
  const named =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args)
      } catch (error) {
        if (isAgentError(error) && error.code === 'E_AUTH') error.details.reauth ??= reauth
        throw error
      }
    }
  return {
    request: named(client.request) as HttpClient['request'],
    get: named(client.get) as HttpClient['get'],
    post: named(client.post) as HttpClient['post'],
    put: named(client.put) as HttpClient['put'],
    delete: named(client.delete) as HttpClient['delete'],
  }
}
