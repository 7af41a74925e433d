// An elicitation approval (a person's yes at the MCP host) counts only where the system policy turns that channel
// on, only for exactly the request it was minted for (another change, token or request id does not count), only
// until it expires, only when MAC'd by a key of the confirm ring, and never as more than one approver.
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { checkApprovals } from '../../../src/approvals/check.js'
import {
  ELICITATION_PREFIX,
  ELICITATION_TTL_MS,
  isElicitation,
  mintElicitation,
  verifyElicitation,
} from '../../../src/approvals/elicitation.js'
import { approvalRequest } from '../../../src/approvals/request.js'
import type { KeyRing } from '../../../src/confirm/secret.js'
import type { Binding } from '../../../src/confirm/token.js'
import type { ApprovalChannel, Approver } from '../../../src/policy/policy.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'

const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const approvers: Approver[] = [{ id: 'alice', key: alice.pub }]
const binding: Binding = {
  tool: 'tasks\0tasks-example',
  command: 'delete',
  args: { ids: ['1', '2', '3', '4'] },
  principal: { account: 'agent', os_user: 'ci' },
  policy: 'pol_a',
}
const targets = [1, 2, 3, 4].map((i) => ({ id: String(i), version: 1 }))
const NOW = 1_700_000_000_000
const EXP = NOW + 3_600_000
const request = approvalRequest(binding, targets, 'tok1', EXP)
const requester = { account: 'agent', os_user: 'ci' }
const key = randomBytes(32)
const ring: KeyRing = { current: { id: null, key }, keys: new Map([[null, key]]) }
const both: ApprovalChannel[] = ['ssh', 'mcp-elicitation']
const on = (now = NOW, k: ReadonlyMap<string | null, Buffer> = ring.keys) => ({ channels: both, keys: k, now })
const yes = (r = request, at = NOW, g = ring) => mintElicitation(g, r, 'client:host', at)

describe('an elicitation approval', () => {
  it('counts once, named mcp-elicitation:<who>, for the request it was minted for', () => {
    const filed = yes()
    expect(isElicitation(filed)).toBe(true)
    expect(isElicitation(sshSign(alice, request.bytes))).toBe(false)
    expect(verifyElicitation(filed, request, ring.keys, NOW)).toEqual({ approver: 'mcp-elicitation:client:host' })
    expect(checkApprovals(request, [filed], approvers, requester, 1, on())).toEqual({
      ok: true,
      approvers: ['mcp-elicitation:client:host'],
      rejected: [],
    })
  })

  it('does not count while the channel is off (the default), whatever it verifies as', () => {
    expect(checkApprovals(request, [yes()], approvers, requester, 1)).toEqual({
      ok: false,
      approvers: [],
      rejected: [{ index: 0, reason: 'channel_disabled' }],
    })
    expect(checkApprovals(request, [yes()], approvers, requester, 1, { channels: ['ssh'], now: NOW }).ok).toBe(false)
  })

  it('with ssh off, an approver signature does not count; the elicitation does', () => {
    const only = { channels: ['mcp-elicitation'] as ApprovalChannel[], keys: ring.keys, now: NOW }
    expect(checkApprovals(request, [sshSign(alice, request.bytes), yes()], approvers, requester, 1, only)).toEqual({
      ok: true,
      approvers: ['mcp-elicitation:client:host'],
      rejected: [{ index: 0, reason: 'channel_disabled' }],
    })
  })

  it.each([
    ['another change (args)', approvalRequest({ ...binding, args: { ids: ['1'] } }, targets, 'tok1', EXP)],
    ['another token', approvalRequest(binding, targets, 'tok2', EXP)],
    [
      'another target version',
      approvalRequest(binding, [...targets.slice(0, 3), { id: '4', version: 2 }], 'tok1', EXP),
    ],
  ])('minted for %s, replayed here, does not count', (_, other) => {
    expect(other.id).not.toBe(request.id)
    expect(checkApprovals(request, [yes(other)], approvers, requester, 1, on())).toMatchObject({
      ok: false,
      rejected: [{ index: 0, reason: 'other_request' }],
    })
  })

  it('expires after its time to live, and never outlives its request', () => {
    expect(verifyElicitation(yes(), request, ring.keys, NOW + ELICITATION_TTL_MS - 1)).toHaveProperty('approver')
    expect(verifyElicitation(yes(), request, ring.keys, NOW + ELICITATION_TTL_MS)).toEqual({ reason: 'expired' })
    const late = EXP - 1000
    expect(verifyElicitation(yes(request, late), request, ring.keys, EXP)).toEqual({ reason: 'expired' })
    // Minted by a clock far ahead of the verifier's: not yet valid.
    expect(verifyElicitation(yes(request, NOW + 60_000), request, ring.keys, NOW)).toEqual({ reason: 'expired' })
    expect(checkApprovals(request, [yes()], approvers, requester, 1, on(NOW + ELICITATION_TTL_MS)).ok).toBe(false)
  })

  it('is refused when forged, tampered with, made with another key, or not one at all', () => {
    const filed = yes()
    const [body, mac] = filed.slice(ELICITATION_PREFIX.length).split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
    const forged = Buffer.from(JSON.stringify({ ...claims, approver: 'mcp-elicitation:boss' })).toString('base64url')
    const other = randomBytes(32)
    const cases: Array<[string, string]> = [
      [`${ELICITATION_PREFIX}${forged}.${mac}`, 'bad_mac'],
      [`${ELICITATION_PREFIX}${body}.${Buffer.alloc(32).toString('base64url')}`, 'bad_mac'],
      [`${ELICITATION_PREFIX}${body}.AAAA`, 'bad_mac'],
      [yes(request, NOW, { current: { id: null, key: other }, keys: new Map([[null, other]]) }), 'bad_mac'],
      [yes(request, NOW, { current: { id: 'k9', key }, keys: new Map([['k9', key]]) }), 'unknown_key'],
      [`${ELICITATION_PREFIX}!!!.${mac}`, 'not_an_approval'],
      [`${ELICITATION_PREFIX}${Buffer.from('null').toString('base64url')}.${mac}`, 'not_an_approval'],
      [`${ELICITATION_PREFIX}${body}`, 'not_an_approval'],
      [`${filed}.extra`, 'not_an_approval'],
    ]
    for (const [text, reason] of cases)
      expect(verifyElicitation(text, request, ring.keys, NOW), text).toEqual({ reason })
    // A ring that rotated keeps verifying what its older key MAC'd; without keys nothing verifies.
    const rotated = new Map<string | null, Buffer>([
      ['k2', other],
      [null, key],
    ])
    expect(verifyElicitation(filed, request, rotated, NOW)).toHaveProperty('approver')
    expect(checkApprovals(request, [filed], approvers, requester, 1, { channels: both, now: NOW }).rejected).toEqual([
      { index: 0, reason: 'unknown_key' },
    ])
  })

  it('counts as one approver at most: N of M still needs another person', () => {
    const second = mintElicitation(ring, request, 'someone-else', NOW)
    expect(checkApprovals(request, [yes(), second], approvers, requester, 2, on())).toMatchObject({
      ok: false,
      approvers: ['mcp-elicitation:client:host'],
      rejected: [{ index: 1, reason: 'duplicate_approver' }],
    })
    expect(
      checkApprovals(request, [yes(), sshSign(alice, request.bytes)], approvers, requester, 2, on()),
    ).toMatchObject({ ok: true, approvers: ['mcp-elicitation:client:host', 'alice'] })
  })
})
