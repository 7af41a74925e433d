import { AgentError, isAgentError } from '../errors/agent-error.js'
import { tooLarge } from './limits.js'
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

/**
 * Fetch a small text asset (checksums, bundle) within `timeoutMs`, reading at most `cap.maxBytes`: a body declared
 * (Content-Length) or found larger is refused (`E_INTEGRITY` `too_large`, the asset and its URL named) as soon as
 * that is known, so memory never holds more than the limit.
 */
export async function fetchText(
  source: ReleaseSource,
  asset: Asset,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
  cap: { limit: 'checksums_bytes' | 'bundle_bytes'; maxBytes: number },
): Promise<string> {
  return fetchBounded(source, asset, options, async (response) => {
    if (!response.ok)
      throw new AgentError(
        response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
        `cannot download ${asset.name}: HTTP ${response.status}`,
        { details: { stage: 'download', asset: asset.name } },
      )
    const over = (got: number, atLeast: boolean) =>
      tooLarge(cap.limit, cap.maxBytes, got, { stage: 'download', what: asset.name, where: asset.url, atLeast })
    return (await readBody(response, cap.maxBytes, over)).toString('utf8')
  })
}

/**
 * Read a response body into memory, at most `maxBytes`: a body declared (Content-Length) larger is refused before
 * any of it is read, one found larger as soon as the count passes the limit (the stream is cancelled), so memory
 * never holds more than the limit. `over` names the error (`got` is the declared size, or at least the count).
 */
export async function readBody(
  response: Response,
  maxBytes: number,
  over: (got: number, atLeast: boolean) => Error,
): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw over(declared, false)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = response.body?.getReader()
  for (;;) {
    const next = await reader?.read()
    if (!next || next.done) break
    size += next.value.length
    if (size > maxBytes) {
      await reader?.cancel().catch(() => undefined)
      throw over(size, true)
    }
    chunks.push(next.value)
  }
  return Buffer.concat(chunks)
}
