import type { IncomingMessage } from 'node:http'
import * as sdk from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { listenHeaderRefusal } from '../../../src/mcp/listen-headers.js'
import type { TaskListenRequest } from '../../../src/mcp/task-listen.js'
import { requestMeta } from '../../support/mcp-raw.js'

// The header checks a task listen over HTTP gets before its stream opens: the SDK's classifier for the cross-checks,
// then the presence of the two headers every modern request carries.
const listen = (meta: Record<string, unknown> = requestMeta()): TaskListenRequest => ({
  jsonrpc: '2.0',
  id: 'l',
  method: 'subscriptions/listen',
  params: { notifications: { taskIds: ['job_x.y'] }, _meta: meta },
})
const req = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as IncomingMessage
const GOOD = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' }

describe('listenHeaderRefusal', () => {
  it('passes a listen whose standard headers match its body', () => {
    expect(listenHeaderRefusal(sdk, req(GOOD), listen())).toBeUndefined()
  })

  it('refuses, with HTTP 400 and -32020, a method header naming another method, or a header missing', () => {
    for (const headers of [
      { ...GOOD, 'mcp-method': 'tools/list' },
      { 'mcp-protocol-version': '2026-07-28' },
      { 'mcp-method': 'subscriptions/listen' },
      { ...GOOD, 'mcp-protocol-version': '2025-11-25' },
    ]) {
      const refusal = listenHeaderRefusal(sdk, req(headers), listen())
      expect(refusal, JSON.stringify(headers)).toMatchObject({ httpStatus: 400, error: { code: -32020 } })
    }
    const missing = listenHeaderRefusal(sdk, req({ 'mcp-protocol-version': '2026-07-28' }), listen())
    expect(missing).toMatchObject({ error: { message: expect.stringContaining('Mcp-Method header is absent') } })
  })

  it('leaves a listen without the per-request envelope to the SDK (legacy traffic), a repeated header joined', () => {
    expect(listenHeaderRefusal(sdk, req({}), listen({}))).toBe('legacy')
    const repeated = listenHeaderRefusal(sdk, req({ ...GOOD, 'mcp-method': ['subscriptions/listen', 'x'] }), listen())
    expect(repeated).toMatchObject({ httpStatus: 400, error: { code: -32020 } })
  })
})
