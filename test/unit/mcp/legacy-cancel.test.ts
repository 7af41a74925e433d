import { describe, expect, it } from 'vitest'
import { cancelledIdOf, isInitialize, legacyCalls, requestIdOf } from '../../../src/mcp/legacy-cancel.js'

const ada = { subject: 'ada', issuer: 'https://id.example' }
const bob = { subject: 'bob', issuer: 'https://id.example' }

describe('2025-11-25 cancellation over stateless HTTP (src/mcp/legacy-cancel.ts)', () => {
  it('a cancel stops the call of the same caller, session and request id, and nothing else', () => {
    const calls = legacyCalls()
    const session = calls.newSession()
    const call = new AbortController()
    calls.track(ada, session, 3, call)
    // Another session (every client counts its ids from 0), another caller, another id, the id as a string.
    expect(calls.cancel(ada, calls.newSession(), 3)).toBe(false)
    expect(calls.cancel(bob, session, 3)).toBe(false)
    expect(calls.cancel(undefined, session, 3)).toBe(false)
    expect(calls.cancel(ada, session, 4)).toBe(false)
    expect(calls.cancel(ada, session, '3')).toBe(false)
    expect(call.signal.aborted).toBe(false)
    expect(calls.cancel(ada, session, 3)).toBe(true)
    expect(call.signal.aborted).toBe(true)
  })

  it('a request that ended is forgotten; a later request under the same id is its own', () => {
    const calls = legacyCalls()
    const session = calls.newSession()
    const first = new AbortController()
    const forget = calls.track(undefined, session, 'a', first)
    forget()
    expect(calls.cancel(undefined, session, 'a')).toBe(false)
    expect(first.signal.aborted).toBe(false)
    // The same id reused while an earlier request's end is still to come: the latest is the one a cancel names,
    // and the earlier one's end does not forget it.
    const second = new AbortController()
    const third = new AbortController()
    const forgetSecond = calls.track(undefined, session, 'a', second)
    calls.track(undefined, session, 'a', third)
    forgetSecond()
    expect(calls.cancel(undefined, session, 'a')).toBe(true)
    expect(third.signal.aborted).toBe(true)
    expect(second.signal.aborted).toBe(false)
  })

  it('session ids are 128 random bits of visible ASCII, never repeated', () => {
    const calls = legacyCalls()
    const ids = new Set(Array.from({ length: 1000 }, () => calls.newSession()))
    expect(ids.size).toBe(1000)
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
  })

  it('reads the messages it acts on, and nothing else', () => {
    expect(requestIdOf({ jsonrpc: '2.0', id: 7, method: 'tools/call' })).toBe(7)
    expect(requestIdOf({ jsonrpc: '2.0', id: 'x', method: 'tools/call' })).toBe('x')
    expect(requestIdOf({ jsonrpc: '2.0', id: 0, method: 'initialize' })).toBeUndefined()
    expect(requestIdOf({ jsonrpc: '2.0', id: null, method: 'tools/call' })).toBeUndefined()
    expect(requestIdOf({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined()
    expect(requestIdOf([{ jsonrpc: '2.0', id: 1, method: 'tools/call' }])).toBeUndefined()
    expect(requestIdOf(null)).toBeUndefined()
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'x' } }
    expect(cancelledIdOf(cancel)).toBe(7)
    expect(cancelledIdOf({ ...cancel, params: { requestId: 'k' } })).toBe('k')
    expect(cancelledIdOf({ ...cancel, id: 1 })).toBeUndefined()
    expect(cancelledIdOf({ ...cancel, params: { requestId: { id: 7 } } })).toBeUndefined()
    expect(cancelledIdOf({ ...cancel, params: undefined })).toBeUndefined()
    expect(cancelledIdOf({ ...cancel, method: 'notifications/progress' })).toBeUndefined()
    expect(cancelledIdOf('notifications/cancelled')).toBeUndefined()
    expect(isInitialize({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} })).toBe(true)
    expect(isInitialize({ jsonrpc: '2.0', method: 'initialize' })).toBe(false)
    expect(isInitialize({ jsonrpc: '2.0', id: 0, method: 'server/discover' })).toBe(false)
    expect(isInitialize(undefined)).toBe(false)
  })
})
