// What the MCP server takes for a held change and what it shows the person: only the gate's own E_HUMAN_REQUIRED
// shape (never a checkpoint whose action is `approve`), and a message built from the decoded request itself.
import { describe, expect, it } from 'vitest'
import { approvalRequest } from '../../../src/approvals/request.js'
import { heldOf, policyApprovalMessage } from '../../../src/mcp/policy-flow.js'

const request = approvalRequest(
  { tool: 't\0t', command: 'delete', args: { ids: ['1', '2'] }, principal: {}, policy: 'pol_x' },
  [
    { id: '1', version: 1 },
    { id: '2', version: 1 },
  ],
  'tok',
  1_800_000_000_000,
)
const details = {
  action: 'approve',
  request_id: request.id,
  request: request.encoded,
  resume: 'tasks delete 1 2 --confirm ct_3.x',
  rule: 'bulk',
  approvals_required: 2,
  approvals_valid: 1,
}
const envelope = (d: Record<string, unknown>, code = 'E_HUMAN_REQUIRED') => ({ ok: false, error: { code, details: d } })

describe('heldOf', () => {
  it("takes the gate's held change", () => {
    expect(heldOf(envelope(details))).toEqual({
      requestId: request.id,
      request: request.encoded,
      resume: details.resume,
      rule: 'bulk',
      required: 2,
      valid: 1,
    })
    expect(
      heldOf(envelope({ ...details, rule: null, approvals_required: 'x', approvals_valid: undefined })),
    ).toMatchObject({
      rule: null,
      required: 1,
      valid: 0,
    })
  })

  it.each([
    ['another code', envelope(details, 'E_FORBIDDEN')],
    ['a success', { ok: true, data: {} }],
    ['another action', envelope({ ...details, action: 'open_url' })],
    ['a checkpoint whose action is approve', envelope({ ...details, checkpoint_id: 'cp_1' })],
    ['a request id of another shape', envelope({ ...details, request_id: '../x' })],
    ['no request id', envelope({ ...details, request_id: 1 })],
    ['a request of another shape', envelope({ ...details, request: 'x' })],
    ['no request', envelope({ ...details, request: undefined })],
    ['no resume', envelope({ ...details, resume: undefined })],
  ])('ignores %s', (_, e) => {
    expect(heldOf(e as Record<string, unknown>)).toBeUndefined()
  })
})

describe('the message the person reads', () => {
  const held = heldOf(envelope(details))!
  it('names the command, targets, arguments, risk, request, policy and expiry', async () => {
    const text = await policyApprovalMessage('tasks', held, {
      action: 'delete',
      blast_radius: 'set',
      reversible: false,
      undo: null,
      cost: null,
    })
    expect(text).toContain('Command: tasks delete')
    expect(text).toContain('Targets (2): 1, 2')
    expect(text).toContain('Arguments: {"ids":["1","2"]}')
    expect(text).toContain('Risk: delete, blast radius set; CANNOT BE UNDONE')
    expect(text).toContain(`Request: ${request.id} (policy pol_x, expires 2027-01-15T08:00:00.000Z)`)
    expect(text).toContain('Approvals: 1 of 2 so far')
  })

  it('says how to undo, the cost, an undeclared risk, long arguments and targets beyond those named', async () => {
    const risk = { action: 'update', blast_radius: 'one', reversible: true, undo: 'tasks restore', cost: '$1' } as const
    expect(await policyApprovalMessage('tasks', held, risk)).toContain('reversible (undo: tasks restore); cost: $1')
    expect(await policyApprovalMessage('tasks', held, { ...risk, undo: null, cost: null })).toMatch(/; reversible\n/)
    expect(await policyApprovalMessage('tasks', held, undefined)).toContain('Risk: not declared')
    const many = Array.from({ length: 103 }, (_, i) => ({ id: `t${i}`, version: 1 }))
    const ids = Array.from({ length: 500 }, (_, i) => `id-${i}`)
    const big = approvalRequest({ tool: 't', command: 'job:cancel', args: { ids }, principal: {} }, many, 'tok', 0)
    const text = await policyApprovalMessage('tasks', { ...held, request: big.encoded, requestId: big.id }, undefined)
    expect(text).toContain('Command: tasks job cancel')
    expect(text).toContain('Targets (103): t0, t1')
    expect(text).toContain('… and 3 more')
    expect(text).toContain(`Arguments: (long; SHA-256 ${big.request.args_digest})`)
    expect(await policyApprovalMessage('tasks', { ...held, request: 'ar1.!!' }, undefined)).toContain('undecodable')
  })
})
