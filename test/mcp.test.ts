import { describe, expect, it } from 'vitest'
import { seed, useSandbox } from './helpers.js'
import { openSession, sc } from './mcp-session.js'

describe('tool mcp', () => {
  const box = useSandbox()

  it('lists one tool per command with snake_case arguments, schemas and annotations', async () => {
    const s = await openSession(box())
    try {
      const { tools } = await s.client.listTools()
      const names = tools.map((t) => t.name)
      expect(names).toContain('job_status')
      expect(names).not.toContain('mcp')
      const create = tools.find((t) => t.name === 'create')!
      expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['title', 'dry_run', 'confirm', 'idempotency_key', 'fields']),
      )
      console.error(
        JSON.stringify(
          tools.find((t) => t.name === 'list'),
          null,
          1,
        ).slice(0, 3000),
      )
      const r = await s.client.callTool({ name: 'get', arguments: { id: '1' } })
      console.error(JSON.stringify(r))
    } finally {
      await s.close()
    }
  })
})
