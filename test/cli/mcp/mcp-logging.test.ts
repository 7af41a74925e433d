import { describe, expect, it } from 'vitest'
import { sc, useSharedSession } from '../../support/mcp-session.js'

const session = useSharedSession()

type Message = { level: string; logger?: string; data: Record<string, unknown> }

describe('tool mcp: logging (2025-11-25), with the official client', () => {
  it('declares logging; after setLevel each call is a debug line, its token scrubbed; nothing before, nothing below the level', async () => {
    const { s } = session()
    expect(s.client.getServerCapabilities()?.logging).toEqual({})
    const got: Message[] = []
    s.client.setNotificationHandler('notifications/message', (n) => {
      got.push(n.params as Message)
    })
    await s.client.callTool({ name: 'get', arguments: { id: '1' } })
    expect(got).toEqual([])

    await s.client.setLoggingLevel('debug')
    const forged = 'ct_3.forgedforgedforged'
    const r = await s.client.callTool({ name: 'edit', arguments: { id: '1', title: 'y', confirm: forged } })
    expect(sc(r).error.code).toBe('E_CONFLICT')
    await s.client.callTool({ name: 'get', arguments: { id: '99' } })
    await s.client.callTool({ name: 'list', arguments: {} })
    // Notifications of a call are sent before its result, on the same ordered channel.
    expect(got.map((m) => [m.level, m.logger, m.data.command, m.data.code])).toEqual([
      ['debug', 'tasks', 'edit 1 --title y --confirm <token>', 'E_CONFLICT'],
      ['debug', 'tasks', 'get 99', 'E_NOT_FOUND'],
      ['debug', 'tasks', 'list', null],
    ])
    expect(['cold', 'warm', 'in-process']).toContain(got[2]!.data.ran)
    expect(JSON.stringify(got)).not.toContain(forged)
    // The server's own stderr log scrubs it the same way.
    expect(s.stderr()).toContain('edit 1 --title y --confirm <token>')
    expect(s.stderr()).not.toContain(forged)

    got.length = 0
    await s.client.setLoggingLevel('warning')
    await s.client.callTool({ name: 'get', arguments: { id: '1' } })
    expect(got).toEqual([])
  })
})
