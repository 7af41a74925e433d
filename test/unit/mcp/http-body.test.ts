import { EventEmitter } from 'node:events'
import type { IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { bodyDeadlineMs, discardWithin, readBody } from '../../../src/mcp/http-body.js'

/** A request body as a stream, with its headers, and a socket that records being destroyed. */
function request(headers: Record<string, string> = {}, complete = false) {
  const socket = Object.assign(new EventEmitter(), {
    destroyed: false,
    destroy() {
      socket.destroyed = true
      socket.emit('close')
    },
  })
  const req = Object.assign(new PassThrough(), { headers, complete, socket })
  return { req, incoming: req as unknown as IncomingMessage, socket }
}

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('the deadline of a request body', () => {
  it('is ten seconds, and a second more for every full 64 KiB', () => {
    expect(bodyDeadlineMs(0)).toBe(10_000)
    expect(bodyDeadlineMs(-5)).toBe(10_000)
    expect(bodyDeadlineMs(65_535)).toBe(10_000)
    expect(bodyDeadlineMs(65_536)).toBe(11_000)
    expect(bodyDeadlineMs(4 * 1024 * 1024)).toBe(74_000)
  })
})

describe('reading a request body', () => {
  it('answers the body that arrives within its deadline, and leaves no timer behind', async () => {
    const { req, incoming } = request({ 'content-length': '11' })
    const read = readBody(incoming, 100)
    req.write('hello ')
    await vi.advanceTimersByTimeAsync(9_000)
    req.end('world')
    expect(await read).toEqual({ body: Buffer.from('hello world') })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('a body that has not ended by its deadline is too_slow, however steadily it trickles; reading stops', async () => {
    const { req, incoming } = request({ 'content-length': '100' })
    const read = readBody(incoming, 1_000)
    let settled = false
    void read.then(() => {
      settled = true
    })
    for (let i = 0; i < 99; i++) {
      req.write('x')
      await vi.advanceTimersByTimeAsync(100)
    }
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(100)
    expect(await read).toEqual({ refused: 'too_slow', afterMs: 10_000 })
    expect(req.listenerCount('data')).toBe(0)
    expect(req.isPaused()).toBe(true)
  })

  it('the deadline of a body declaring no length (chunked), or more than the limit, is the limit’s', async () => {
    for (const headers of [{}, { 'content-length': String(10 * 1024 * 1024) }]) {
      const { incoming } = request(headers)
      const read = readBody(incoming, 4 * 1024 * 1024)
      await vi.advanceTimersByTimeAsync(73_999)
      await vi.advanceTimersByTimeAsync(1)
      expect(await read).toEqual({ refused: 'too_slow', afterMs: 74_000 })
    }
  })

  it('a body over the limit is too_large as soon as it is: the rest is dropped as it comes, never kept', async () => {
    const { req, incoming } = request()
    const read = readBody(incoming, 10)
    req.write('0123456789')
    req.write('x')
    expect(await read).toEqual({ refused: 'too_large' })
    expect(req.listenerCount('data')).toBe(0)
    expect(req.isPaused()).toBe(false)
    req.write('y'.repeat(100_000))
    await vi.advanceTimersByTimeAsync(0)
    expect(req.readableLength).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('an error of the request rejects, and clears the deadline', async () => {
    const { req, incoming } = request({ 'content-length': '10' })
    const read = readBody(incoming, 100)
    req.destroy(new Error('aborted'))
    await expect(read).rejects.toThrow('aborted')
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('the rest of a body answered before it ended', () => {
  it('closes the connection when the rest has not come by its deadline', async () => {
    const { incoming, socket } = request({ 'content-length': '100' })
    discardWithin(incoming, 1_000)
    await vi.advanceTimersByTimeAsync(9_999)
    expect(socket.destroyed).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(socket.destroyed).toBe(true)
  })

  it('keeps the connection when the rest comes in time, or it closed already', async () => {
    const ended = request({ 'content-length': '100' })
    discardWithin(ended.incoming, 1_000)
    ended.req.resume()
    ended.req.end()
    await vi.advanceTimersByTimeAsync(0)
    expect(vi.getTimerCount()).toBe(0)
    const gone = request({ 'content-length': '100' })
    discardWithin(gone.incoming, 1_000)
    gone.socket.emit('close')
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(20_000)
    expect(ended.socket.destroyed).toBe(false)
  })

  it('leaves no listener behind on a kept-alive socket, however many of its requests were answered early', async () => {
    const { socket } = request()
    for (let i = 0; i < 20; i++) {
      // Each request of the connection: answered early, then its rest arrives.
      const req = Object.assign(new PassThrough(), { headers: { 'content-length': '10' }, complete: false, socket })
      discardWithin(req as unknown as IncomingMessage, 1_000)
      req.resume()
      req.end()
      await vi.advanceTimersByTimeAsync(0)
    }
    expect(socket.listenerCount('close')).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('does nothing for a request already complete, or whose socket is gone', () => {
    discardWithin(request({ 'content-length': '5' }, true).incoming, 1_000)
    const closed = request({ 'content-length': '5' })
    closed.socket.destroyed = true
    discardWithin(closed.incoming, 1_000)
    expect(vi.getTimerCount()).toBe(0)
  })
})
