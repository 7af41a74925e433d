import type { IncomingMessage } from 'node:http'

/** What reading a request body came to: the body, or why reading stopped before its end. */
export type BodyRead = { body: Buffer } | { refused: 'too_large' } | { refused: 'too_slow'; afterMs: number }

/** The time any body may take, however small: generous for a client on a loaded machine or behind a slow proxy. */
const BODY_GRACE_MS = 10_000
/** The slowest a body may arrive past the grace, in bytes a second: the default 4 MiB limit within 64 s more. */
const BODY_MIN_RATE = 64 * 1024

/** How long a body of `bytes` may take to arrive: ten seconds, and a second more for every full 64 KiB. */
export function bodyDeadlineMs(bytes: number): number {
  return BODY_GRACE_MS + Math.floor(Math.max(0, bytes) / BODY_MIN_RATE) * 1000
}

/** The deadline of the body of `req`: of its declared length, or of `maxBytes` when it declares none or more. */
function deadlineOf(req: IncomingMessage, maxBytes: number): number {
  const declared = Number(req.headers['content-length'])
  return bodyDeadlineMs(Number.isFinite(declared) ? Math.min(declared, maxBytes) : maxBytes)
}

/**
 * Read the body of `req`: at most `maxBytes`, all of it within its deadline ({@link bodyDeadlineMs} of its declared
 * length, of `maxBytes` when it declares none: a chunked body), counted from now. Past either, reading stops and
 * the caller answers (413, or 408 closing the connection): a client that sends slowly, or never, holds the
 * request's slot for a bounded time. The deadline ends with the body: what the request then does (a long call, an
 * SSE stream) is not timed here.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const afterMs = deadlineOf(req, maxBytes)
    const parts: Buffer[] = []
    let size = 0
    const stop = (read: Exclude<BodyRead, { body: Buffer }>) => {
      clearTimeout(timer)
      req.off('data', onData)
      // Past the limit the rest is dropped as it comes, for the answer to reach a client still writing
      // (discardWithin bounds it); past the deadline the connection closes, and nothing more is read.
      if (read.refused === 'too_large') req.resume()
      else req.pause()
      resolve(read)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) return stop({ refused: 'too_large' })
      parts.push(chunk)
    }
    const timer = setTimeout(() => stop({ refused: 'too_slow', afterMs }), afterMs)
    req.on('data', onData)
    req.once('end', () => {
      clearTimeout(timer)
      resolve({ body: Buffer.concat(parts, size) })
    })
    req.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })
}

/**
 * Bound what is left of a body once its request was answered without reading it all (401, 413, 503, …): Node
 * reads the rest and drops it, to keep the connection for the next request, for as long as the client takes to
 * send it. Past the body's deadline, counted from now, the connection is closed. Closing at once instead would cut
 * a client still writing a large body at full speed before it reads its answer.
 */
export function discardWithin(req: IncomingMessage, maxBytes: number): void {
  if (req.complete || req.socket.destroyed) return
  const timer = setTimeout(() => req.socket.destroy(), deadlineOf(req, maxBytes))
  timer.unref()
  // Both listeners go with the timer: a kept-alive socket serves many requests, and each early answer would leave one.
  const clear = () => {
    clearTimeout(timer)
    req.off('end', clear)
    req.socket.off('close', clear)
  }
  req.once('end', clear)
  req.socket.once('close', clear)
}
