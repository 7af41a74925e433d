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
  return httpClient({
    baseUrl: options.baseUrl,
    signal,
    timeoutMs: options.timeoutMs ?? env.get('HTTP_TIMEOUT_MS') ?? FRAMEWORK_SETTINGS.HTTP_TIMEOUT_MS.default,
    retries: options.retries ?? env.get('HTTP_RETRIES') ?? FRAMEWORK_SETTINGS.HTTP_RETRIES.default,
    userAgent: `${tool.bin}/${tool.version}`,
    ...(options.auth ? auth : {}),
  })
}
