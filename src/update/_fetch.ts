import { AgentError, isAgentError } from '../errors/agent-error.js'
import type { Asset, ReleaseSource } from './source.js'

/**
 * Fetch one asset within `timeoutMs` (body included: the caller reads it under the same signal). A deadline
 * is `E_TIMEOUT` naming the asset; the command's own cancellation stays `E_INTERRUPTED`.
 */
export async function fetchBounded<T>(
  source: ReleaseSource,
  asset: Asset,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
  read: (response: Response, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    return await read(await source.fetch(asset, signal), signal)
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason
    if (deadline.aborted)
      throw new AgentError('E_TIMEOUT', `downloading ${asset.name} took longer than ${options.timeoutMs} ms`, {
        details: { stage: 'download', asset: asset.name, timeout_ms: options.timeoutMs },
        cause: error,
      })
    if (isAgentError(error)) throw error
    throw new AgentError('E_NETWORK', `cannot download ${asset.name}`, { details: { stage: 'download' }, cause: error })
  }
}

/** Fetch a small text asset (checksums, bundle) within `timeoutMs`. */
export async function fetchText(
  source: ReleaseSource,
  asset: Asset,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<string> {
  return fetchBounded(source, asset, options, async (response) => {
    if (!response.ok)
      throw new AgentError(
        response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
        `cannot download ${asset.name}: HTTP ${response.status}`,
        { details: { stage: 'download', asset: asset.name } },
      )
    return response.text()
  })
}
