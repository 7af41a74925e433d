import { describe, expect, it } from 'vitest'
import { remoteSubject } from '../../../src/settings/caller.js'
import { toolEnv } from '../../../src/settings/tool-env.js'
import { defaultPrincipal } from '../../../src/write/principal.js'

const credentials = { session: async () => ({ account: 'acct', scopes: null }) } as never

describe("a write's principal and the remote subject of tool mcp --http", () => {
  it('has no subject key on the CLI, so what tokens and keys bind to is unchanged', async () => {
    const p = await defaultPrincipal(credentials, toolEnv('tasks', { TASKS_PROFILE: 'p' }))
    expect(p).not.toHaveProperty('subject')
    expect(p).toMatchObject({ account: 'acct', profile: 'p' })
  })

  it('carries the subject the server set for the call', async () => {
    const env = toolEnv('tasks', { TASKS_MCP_SUBJECT: JSON.stringify({ iss: 'local', sub: 'ann' }) })
    expect((await defaultPrincipal(credentials, env)).subject).toEqual({ iss: 'local', sub: 'ann' })
  })

  it('refuses a malformed subject with E_CONFIG rather than dropping it', () => {
    for (const raw of [
      'ann',
      '{}',
      '{"iss":"local"}',
      '{"iss":"","sub":"a"}',
      '{"iss":"l","sub":"a","x":1}',
      '[1]',
      'null',
    ])
      expect(() => remoteSubject(toolEnv('tasks', { TASKS_MCP_SUBJECT: raw })), raw).toThrow(/MCP_SUBJECT/)
  })
})
