// Over MCP a change the policy holds is held too: a client that cannot elicit gets E_HUMAN_REQUIRED with the
// approval request, nothing applied; once a listed approver has signed, the same confirm applies it.

import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useColdTasks } from '../../support/cold-tasks.js'
import { env, seed, storeBytes, tasks, useSandbox } from '../../support/helpers.js'
import { openSession, sc } from '../../support/mcp-session.js'
import { approverFor } from '../../support/ssh-keys.js'

// Not about the warm pool: the servers start none (cold-tasks.ts).
useColdTasks()

const box = useSandbox()

describe('approvals over MCP', () => {
  it('a held delete answers E_HUMAN_REQUIRED with the request; after an approval the confirm applies it', async () => {
    seed(
      box(),
      ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `t${id}` })),
    )
    const approver = approverFor(join(box().env.XDG_CONFIG_HOME!, 'tasks'), join(box().env.XDG_DATA_HOME!, 'tasks'))
    const s = await openSession(box())
    try {
      const ids = ['1', '2', '3', '4']
      const dry = sc(await s.client.callTool({ name: 'delete', arguments: { ids, dry_run: true } }))
      const { confirm_token: token, approval } = dry.data as { confirm_token: string; approval: { request: string } }
      const before = storeBytes(box())
      const held = sc(await s.client.callTool({ name: 'delete', arguments: { ids, confirm: token } }))
      expect(held.ok).toBe(false)
      expect(held.error).toMatchObject({
        code: 'E_HUMAN_REQUIRED',
        details: { action: 'approve', reason: 'approval_required', request: approval.request },
      })
      expect(storeBytes(box())).toBe(before)
      await approver.approve(approval.request)
      const applied = sc(await s.client.callTool({ name: 'delete', arguments: { ids, confirm: token } }))
      expect(applied.ok, JSON.stringify(applied)).toBe(true)
      expect(env(await tasks(box(), ['list'])).data.items).toHaveLength(1)
    } finally {
      await s.close()
    }
  }, 60_000)
})
