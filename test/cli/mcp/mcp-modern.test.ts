import { describe, expect, it } from 'vitest'
import { useColdTasks } from '../../support/cold-tasks.js'
import { env, seed, tasks, useSandbox } from '../../support/helpers.js'
import { openSession, sc, withoutDuration } from '../../support/mcp-session.js'

// Not about the warm pool: the servers start none (cold-tasks.ts).
useColdTasks()

// The same surface on the stateless 2026-07-28 revision: no initialize, capabilities in each request, input
// required as a result the client answers by calling again (the other suites use the 2025-11-25 handshake).
describe('tool mcp on the 2026-07-28 revision', () => {
  const box = useSandbox()

  it('lists the tools and answers a read with the CLI envelope', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const cli = env(await tasks(box(), ['get', '1']))
    const s = await openSession(box(), { modern: true })
    try {
      expect(s.client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
      expect(s.client.getProtocolEra()).toBe('modern')
      const { tools } = await s.client.listTools()
      expect(tools.map((t) => t.name)).toContain('job_status')
      const r = await s.client.callTool({ name: 'get', arguments: { id: '1' } })
      expect(withoutDuration(sc(r))).toEqual(withoutDuration(cli))
      const missing = await s.client.callTool({ name: 'get', arguments: { id: '9' } })
      expect(missing.isError).toBe(true)
      expect(sc(missing).error.code).toBe('E_NOT_FOUND')
    } finally {
      await s.close()
    }
  })

  it('keeps the gate, and asks the person through an input-required result where the client can show it', async () => {
    const plain = await openSession(box(), { modern: true })
    try {
      const r = sc(await plain.client.callTool({ name: 'create', arguments: { title: 'x' } }))
      expect(r.error.code).toBe('E_CONFIRMATION_REQUIRED')
    } finally {
      await plain.close()
    }
    const asked: string[] = []
    const person = await openSession(box(), {
      modern: true,
      elicit: (p) => {
        asked.push(p.message)
        return { action: 'accept', content: { approve: true } }
      },
    })
    try {
      const r = sc(await person.client.callTool({ name: 'create', arguments: { title: 'approved' } }))
      expect(r.ok, JSON.stringify(r)).toBe(true)
      expect(asked).toHaveLength(1)
    } finally {
      await person.close()
    }
    expect(env(await tasks(box(), ['list'])).data.items.map((t: { title: string }) => t.title)).toEqual(['approved'])
  })

  it('a checkpoint goes through input required and resumes', async () => {
    const s = await openSession(box(), {
      modern: true,
      elicit: async (p) => {
        const code = /(?:code|approve) ([0-9A-F]{8})/.exec(p.message)![1]!
        expect(env(await tasks(box(), ['login', 'approve', code])).ok).toBe(true)
        return { action: 'accept', content: { done: true } }
      },
    })
    try {
      const r = sc(await s.client.callTool({ name: 'login', arguments: {} }))
      expect(r.ok, JSON.stringify(r)).toBe(true)
      expect(r.data.logged_in).toBe(true)
    } finally {
      await s.close()
    }
  })
})

describe('tool mcp: the state a client echoes back is sealed', () => {
  const box = useSandbox()
  const yes = { approve: { action: 'accept', content: { approve: true } } }

  it('a tampered, foreign or replayed approval state applies nothing; only the genuine one applies, once', async () => {
    const s = await openSession(box(), { modern: true, manual: true, elicit: () => ({ action: 'decline' }) })
    try {
      const first = (await s.client.callTool(
        { name: 'create', arguments: { title: 'gated' } },
        { allowInputRequired: true },
        // biome-ignore lint/suspicious/noExplicitAny: the raw input-required result
      )) as any
      expect(first.resultType).toBe('input_required')
      expect(first.inputRequests.approve).toBeDefined()
      const state = first.requestState as string
      const call = (requestState: string, name = 'create', args: Record<string, unknown> = { title: 'gated' }) =>
        // The retry of the multi-round-trip flow carries the answers and the echoed state beside the arguments.
        s.client.callTool({ name, arguments: args, inputResponses: yes, requestState } as never, {
          allowInputRequired: true,
        })
      // Tampered: one character of the MAC changed.
      const flipped = state.slice(0, -2) + (state.at(-2) === 'A' ? 'B' : 'A') + state.at(-1)
      const refused = await call(flipped).then(
        () => undefined,
        (error: Error) => error,
      )
      expect(refused).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } })
      // Foreign: a genuine state minted for create, echoed on delete, is not delete's approval.
      // biome-ignore lint/suspicious/noExplicitAny: raw result
      const foreign = (await call(state, 'delete', { ids: ['1'] })) as any
      expect(foreign.resultType === 'input_required' || sc(foreign)?.ok === false).toBe(true)
      expect(env(await tasks(box(), ['list'])).data.items).toHaveLength(0)
      // Genuine: applied once; the same state again finds its token used.
      const applied = sc(await call(state))
      expect(applied.ok, JSON.stringify(applied)).toBe(true)
      const replayed = sc(await call(state))
      expect(replayed.error.code).toBe('E_CONFLICT')
      expect(env(await tasks(box(), ['list'])).data.items).toHaveLength(1)
    } finally {
      await s.close()
    }
  })
})
