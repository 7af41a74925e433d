// Approvals counted for exactly one change: signatures by real ssh-keygen keys over the request's bytes. An
// approval for another change, target set, version, policy, tool, principal or token does not count; neither does
// a forged, unknown, self-given or repeated one; N-of-M needs N distinct approvers.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkApprovals } from '../../../src/approvals/check.js'
import { approvalRequest, decodeRequest, REQUEST_TARGETS } from '../../../src/approvals/request.js'
import { fileApprovalStore } from '../../../src/approvals/store.js'
import type { Binding } from '../../../src/confirm/token.js'
import type { Approver } from '../../../src/policy/policy.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'

const keys = sshKeys()
afterAll(() => keys.dispose())
const [alice, bob, carol, mallory] = ['alice', 'bob', 'carol', 'mallory'].map((n) => keys.make(n)) as [
  ReturnType<typeof keys.make>,
  ReturnType<typeof keys.make>,
  ReturnType<typeof keys.make>,
  ReturnType<typeof keys.make>,
]
const approvers: Approver[] = [
  { id: 'alice', key: alice.pub },
  { id: 'bob', key: bob.pub, account: 'bob@corp' },
  { id: 'carol', key: carol.pub },
]
const binding: Binding = {
  tool: 'tasks\0tasks-example',
  command: 'delete',
  args: { ids: ['1', '2', '3', '4'] },
  principal: { account: 'agent', os_user: 'ci' },
  policy: 'pol_a',
}
const targets = [1, 2, 3, 4].map((i) => ({ id: String(i), version: 1 }))
const EXP = 1_800_000_000_000
const request = approvalRequest(binding, targets, 'tok1', EXP)
const requester = { account: 'agent', os_user: 'ci' }
const sign = (k = alice, r = request) => sshSign(k, r.bytes)

describe('approval requests', () => {
  it('travel as one word and decode to the same bytes and id', () => {
    const back = decodeRequest(request.encoded)!
    expect(back.id).toBe(request.id)
    expect(back.bytes.equals(request.bytes)).toBe(true)
    expect(request.id).toMatch(/^ar_[0-9a-f]{24}$/)
    expect(decodeRequest('nope')).toBeUndefined()
    expect(decodeRequest('ar1.!!!')).toBeUndefined()
    expect(decodeRequest(`ar1.${Buffer.from('{"v":2}').toString('base64url')}`)).toBeUndefined()
    expect(decodeRequest(`ar1.${Buffer.from('{"v":1,"command":"x"}').toString('base64url')}`)).toBeUndefined()
  })

  it('name at most a bound of targets in clear and bind every one by digest', () => {
    const many = Array.from({ length: REQUEST_TARGETS + 5 }, (_, i) => ({ id: `t${i}`, version: 1 }))
    const r = approvalRequest({ tool: binding.tool, command: 'delete', args: {}, principal: {} }, many, 'tok1', EXP)
    expect(r.request.targets).toHaveLength(REQUEST_TARGETS)
    expect(r.request.target_count).toBe(REQUEST_TARGETS + 5)
    expect(r.request.policy).toBe('')
    const long = { ids: Array.from({ length: 1000 }, (_, i) => String(i)) }
    const big = approvalRequest({ ...binding, args: long }, targets, 'tok1', EXP).request
    expect(big.args).toBeNull()
    const other = approvalRequest({ ...binding, args: { ids: [...long.ids, 'x'] } }, targets, 'tok1', EXP).request
    expect(other.args_digest).not.toBe(big.args_digest)
    const moved = approvalRequest(binding, [...many.slice(0, -1), { id: 't104', version: 2 }], 'tok1', EXP)
    expect(moved.request.targets_digest).not.toBe(approvalRequest(binding, many, 'tok1', EXP).request.targets_digest)
  })
})

describe('checkApprovals', () => {
  it('counts a valid approver signature over exactly this request', () => {
    expect(checkApprovals(request, [sign()], approvers, requester, 1)).toEqual({
      ok: true,
      approvers: ['alice'],
      rejected: [],
    })
  })

  it('refuses no approval at all', () => {
    expect(checkApprovals(request, [], approvers, requester, 1).ok).toBe(false)
  })

  it.each([
    ['another change (args)', { ...binding, args: { ids: ['1'] } }, targets, 'tok1', EXP],
    ['another target set', binding, targets.slice(0, 3), 'tok1', EXP],
    ['another version', binding, [...targets.slice(0, 3), { id: '4', version: 2 }], 'tok1', EXP],
    ['another policy', { ...binding, policy: 'pol_b' }, targets, 'tok1', EXP],
    ['another tool', { ...binding, tool: 'other\0other' }, targets, 'tok1', EXP],
    ['another principal', { ...binding, principal: { account: 'eve' } }, targets, 'tok1', EXP],
    ['another token', binding, targets, 'tok2', EXP],
    ['another expiry', binding, targets, 'tok1', EXP + 1],
  ] as const)('does not count an approval for %s', (_, b, t, tok, exp) => {
    const other = approvalRequest(b as Binding, t, tok, exp)
    expect(other.id).not.toBe(request.id)
    const check = checkApprovals(request, [sign(alice, other)], approvers, requester, 1)
    expect(check).toEqual({ ok: false, approvers: [], rejected: [{ index: 0, reason: 'bad_signature' }] })
  })

  it('does not count a forged, unknown-key, self-given or repeated approval', () => {
    const body = Buffer.from(sign().split('\n').slice(1, -2).join(''), 'base64')
    body[body.length - 1]! ^= 1
    const tampered = `-----BEGIN SSH SIGNATURE-----\n${body.toString('base64')}\n-----END SSH SIGNATURE-----\n`
    const self = { account: 'bob@corp', os_user: 'x' }
    expect(checkApprovals(request, ['junk', tampered, sign(mallory)], approvers, requester, 1).rejected).toEqual([
      { index: 0, reason: 'not_a_signature' },
      { index: 1, reason: 'bad_signature' },
      { index: 2, reason: 'unknown_key' },
    ])
    expect(checkApprovals(request, [sign(bob)], approvers, self, 1)).toMatchObject({
      ok: false,
      rejected: [{ index: 0, reason: 'self_approval' }],
    })
    // An approver with no account is the requester when their id is the requester's OS user.
    expect(checkApprovals(request, [sign(alice)], approvers, { account: null, os_user: 'alice' }, 1).ok).toBe(false)
    // Over HTTP the account and OS user are the server's: the authenticated subject who asked is the requester too,
    // by the approver's account (bob@corp) or, without one, by id (alice); another subject's approver counts.
    const server = { account: 'svc', os_user: 'svc' }
    expect(checkApprovals(request, [sign(bob)], approvers, { ...server, subject: 'bob@corp' }, 1)).toMatchObject({
      ok: false,
      rejected: [{ index: 0, reason: 'self_approval' }],
    })
    expect(checkApprovals(request, [sign(alice)], approvers, { ...server, subject: 'alice' }, 1).ok).toBe(false)
    expect(checkApprovals(request, [sign(alice)], approvers, { ...server, subject: 'bob@corp' }, 1).ok).toBe(true)
    expect(checkApprovals(request, [sign(alice)], approvers, { ...server, subject: null }, 1).ok).toBe(true)
    expect(checkApprovals(request, [sign(), sign()], approvers, requester, 2)).toMatchObject({
      ok: false,
      approvers: ['alice'],
      rejected: [{ index: 1, reason: 'duplicate_approver' }],
    })
  })

  it('needs N distinct approvers of the M listed', () => {
    expect(checkApprovals(request, [sign(alice), sign(carol)], approvers, requester, 3).ok).toBe(false)
    expect(checkApprovals(request, [sign(alice), sign(carol), sign(bob)], approvers, requester, 3)).toMatchObject({
      ok: true,
      approvers: ['alice', 'carol', 'bob'],
    })
  })
})

describe('the file approval store', () => {
  it('files signatures under their request, once each, and refuses a link or a bad id', async () => {
    const data = join(keys.dir, 'data')
    const store = fileApprovalStore(data)
    expect(await store.list(request.id)).toEqual([])
    await store.add(request.id, 'sig-a')
    await store.add(request.id, 'sig-a')
    await store.add(request.id, 'sig-b')
    writeFileSync(join(data, 'approvals', request.id, 'stray.tmp'), 'not filed')
    expect((await store.list(request.id)).sort()).toEqual(['sig-a', 'sig-b'])
    await expect(store.add('../x', 's')).rejects.toThrow(/not an approval request id/)
    const other = 'ar_000000000000000000000000'
    mkdirSync(join(data, 'approvals', other), { mode: 0o700 })
    symlinkSync('/etc/hostname', join(data, 'approvals', other, 'x.sig'))
    await expect(store.list(other)).rejects.toMatchObject({ code: 'E_CONFIG' })
  })
})
