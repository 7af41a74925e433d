// Approvals across a fleet, on real PostgreSQL and Redis: a change previewed on machine A is approved from machine
// B by a person with their own SSH key (filed in the shared store), and applied on machine C, once; an approval
// filed by the requester's own key does not count anywhere.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ENGINES, envelope, type Machine, machines, newKey, onMachine, useFleet } from '../../support/fleet.js'
import { sshKeys } from '../../support/ssh-keys.js'

const fleet = useFleet()
const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const agent = keys.make('agent')

/** The same five tasks and the same operator policy on a machine (a fleet's machines share both). */
function prepare(m: Machine): string {
  const data = join(m.box.env.XDG_DATA_HOME!, 'tasks')
  mkdirSync(data, { recursive: true })
  const at = '2026-01-02T03:04:05.000Z'
  const tasks = ['1', '2', '3', '4', '5'].map((id) => ({
    id,
    title: `t${id}`,
    status: 'open',
    created_at: at,
    updated_at: at,
    version: 1,
  }))
  writeFileSync(join(data, 'tasks.json'), JSON.stringify({ schema: 1, next_id: 6, tasks }))
  const config = join(m.box.env.XDG_CONFIG_HOME!, 'tasks')
  mkdirSync(config, { recursive: true, mode: 0o700 })
  const policy = join(config, 'policy.json')
  writeFileSync(policy, JSON.stringify({ approvers: [{ id: 'alice', key: alice.pub }] }), { mode: 0o600 })
  chmodSync(policy, 0o600)
  return join(data, 'tasks.json')
}

describe.each(ENGINES)('fleet approvals on %s', (engine) => {
  it('previewed on A, approved from B, applied on C; once', async () => {
    const [a, b, c] = machines(3, fleet.url(engine), `k1:${newKey()}`)
    const stores = [a!, b!, c!].map(prepare)
    const dry = envelope(await onMachine(a!, ['delete', '1', '2', '3', '4', '--dry-run']))
    const { confirm_token: token, approval } = dry.data as { confirm_token: string; approval: { request: string } }
    const held = await onMachine(c!, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(held.code, held.stdout).toBe(9)
    // The agent files a signature by its own key (on its own machine): it is no approver's.
    expect((await onMachine(a!, ['approve', approval.request, '--key', agent.path])).code).toBe(0)
    expect((await onMachine(c!, ['delete', '1', '2', '3', '4', '--confirm', token])).code).toBe(9)
    const signed = await onMachine(b!, ['approve', approval.request, '--key', alice.path])
    expect(signed.code, signed.stdout).toBe(0)
    const applied = await onMachine(c!, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(applied.code, applied.stdout).toBe(0)
    expect(envelope(applied).data.summary.ok_count).toBe(4)
    const again = await onMachine(a!, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(envelope(again).error.details.reason).toBe('already_used')
    expect(JSON.parse((await import('node:fs')).readFileSync(stores[0]!, 'utf8')).tasks).toHaveLength(5)
  }, 90_000)
})
