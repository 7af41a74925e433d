import { randomBytes } from 'node:crypto'
import { createRequestStateCodec } from '@modelcontextprotocol/server'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { KeyRing } from '../../../src/confirm/secret.js'
import { principalKey, taskKey } from '../../../src/mcp/_tasks-map.js'
import {
  type FlowState,
  flowStateOf,
  STATE_TTL_SECONDS,
  stateKey,
  stateSealer,
} from '../../../src/mcp/request-state.js'

const TOOL = 'tasks\0@example/tasks'
const ann = principalKey({ issuer: 'https://idp.example', subject: 'ann' }, 1000)
const bob = principalKey({ issuer: 'https://idp.example', subject: 'bob' }, 1000)
const local = principalKey(undefined, 1000)
const approve: FlowState = { kind: 'approve', token: 'ct1.token', tool: 'create' }

/** A ring as the fleet's injected secret parses it: the first key signs, every key verifies. */
const ringOf = (...keys: Array<[string | null, Buffer]>): KeyRing => ({
  current: { id: keys[0]![0], key: keys[0]![1] },
  keys: new Map(keys),
})
/** A server of the tool: its own sealer (its own codecs) over a copy of the ring it loaded. */
const server = (ring: KeyRing, identity = TOOL) =>
  stateSealer(createRequestStateCodec, async () => structuredClone(ring), identity)
const refused = (p: Promise<unknown>) =>
  p.then(
    () => 'verified',
    (error: Error) => error.message,
  )

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the sealed state of an input-required round', () => {
  const machine = ringOf([null, randomBytes(32)])

  it('comes back as it was minted, for the principal it was minted for', async () => {
    const a = server(machine)
    const state = await a.mint(approve, ann)
    // The local file's key has no id: the SDK's own wire string, nothing ahead of it.
    expect(state).toMatch(/^v1\.[\w-]+\.[\w-]+$/)
    await expect(a.verify(state, ann)).resolves.toEqual(approve)
    await expect(a.verify(await a.mint(approve, local), local)).resolves.toEqual(approve)
  })

  it('tampered (MAC, body, the suite’s suffix, no prefix, garbage) is refused', async () => {
    const a = server(machine)
    const state = await a.mint(approve, ann)
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
    expect(await refused(a.verify(flip(state, state.length - 2), ann))).toBe('mac')
    expect(await refused(a.verify(flip(state, 8), ann))).toBe('mac')
    // The conformance suite's tampered-state scenario appends to the state.
    expect(await refused(a.verify(`${state}-TAMPERED`, ann))).not.toBe('verified')
    expect(await refused(a.verify(state.slice(3), ann))).toBe('malformed')
    expect(await refused(a.verify('', ann))).toBe('malformed')
  })

  it('minted for one subject, presented by another (or by the local user) is refused', async () => {
    const a = server(machine)
    const state = await a.mint(approve, ann)
    expect(await refused(a.verify(state, bob))).toBe('principal')
    expect(await refused(a.verify(state, local))).toBe('principal')
    // The same subject name from another issuer is another principal.
    const other = principalKey({ issuer: 'https://other.example', subject: 'ann' }, 1000)
    expect(await refused(a.verify(state, other))).toBe('principal')
  })

  it(`expires ${STATE_TTL_SECONDS} s after it was minted`, async () => {
    const a = server(machine)
    const now = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(now)
    const state = await a.mint(approve, ann)
    vi.spyOn(Date, 'now').mockReturnValue(now + STATE_TTL_SECONDS * 1000)
    await expect(a.verify(state, ann)).resolves.toEqual(approve)
    vi.spyOn(Date, 'now').mockReturnValue(now + (STATE_TTL_SECONDS + 1) * 1000)
    expect(await refused(a.verify(state, ann))).toBe('expired')
  })

  it('minted by server A is good on server B of the same tool and ring (a stateless retry elsewhere)', async () => {
    const shared = ringOf(['k1', randomBytes(32)])
    const state = await server(shared).mint(approve, ann)
    await expect(server(shared).verify(state, ann)).resolves.toEqual(approve)
    expect(await refused(server(shared).verify(state, bob))).toBe('principal')
    // A server of a process's own random key (what was used before) cannot.
    expect(await refused(server(ringOf(['k1', randomBytes(32)])).verify(state, ann))).toBe('mac')
  })

  it("another tool sharing the ring cannot replay this tool's state", async () => {
    const shared = ringOf(['k1', randomBytes(32)])
    const state = await server(shared).mint(approve, ann)
    expect(await refused(server(shared, 'notes\0@example/notes').verify(state, ann))).toBe('mac')
  })

  it('rotation: minted with the current key, named by its id; any key of the ring verifies; an unknown id is refused', async () => {
    const k1 = randomBytes(32)
    const k2 = randomBytes(32)
    const before = server(ringOf(['k1', k1]))
    const after = server(ringOf(['k2', k2], ['k1', k1]))
    const old = await before.mint(approve, ann)
    expect(old.startsWith('k1~v1.')).toBe(true)
    await expect(after.verify(old, ann)).resolves.toEqual(approve)
    const fresh = await after.mint(approve, ann)
    expect(fresh.startsWith('k2~v1.')).toBe(true)
    await expect(after.verify(fresh, ann)).resolves.toEqual(approve)
    expect(await refused(before.verify(fresh, ann))).toBe('key')
    // Another key id in front of a genuine state: verified under that key, so its MAC fails.
    expect(await refused(after.verify(`k2${old.slice(2)}`, ann))).toBe('mac')
    expect(await refused(after.verify(old.slice(3), ann))).toBe('key')
  })

  it('is sealed with a key of its own: never the confirm secret itself, nor the task-id key', async () => {
    const secret = randomBytes(32)
    const key = stateKey(secret, TOOL)
    expect(key).toHaveLength(32)
    expect(key.equals(secret)).toBe(false)
    expect(key.equals(taskKey(secret))).toBe(false)
    expect(key.equals(stateKey(secret, 'notes\0@example/notes'))).toBe(false)
    // A state MACed with the secret itself (what a confirm token is MACed with) does not verify.
    const raw = await createRequestStateCodec({ key: secret }).mint({ flow: approve, principal: ann })
    expect(await refused(server(ringOf([null, secret])).verify(raw, ann))).toBe('mac')
  })
})

describe('the flow a verified state names', () => {
  it('is read for the tool it was minted for only', () => {
    const resume: FlowState = { kind: 'resume', resume: 'tasks login resume --id cp_1', tool: 'login' }
    const policy: FlowState = { kind: 'policy', request: 'ar1.x', resume: 'tasks delete 1 --confirm t', tool: 'delete' }
    expect(flowStateOf(approve, 'create')).toEqual(approve)
    expect(flowStateOf(resume, 'login')).toEqual(resume)
    expect(flowStateOf(policy, 'delete')).toEqual(policy)
    // A genuine state echoed on another tool's call is no state.
    expect(flowStateOf(approve, 'delete')).toBeUndefined()
  })

  it('is nothing when it is not one of the flows', () => {
    for (const value of [
      undefined,
      null,
      'v1.raw',
      { kind: 'approve', tool: 'create' },
      { kind: 'resume', resume: 1, tool: 'create' },
      { kind: 'policy', request: 'ar1.x', tool: 'create' },
      { kind: 'policy', resume: 'tasks x', tool: 'create' },
      { kind: 'other', tool: 'create' },
    ])
      expect(flowStateOf(value, 'create'), JSON.stringify(value)).toBeUndefined()
  })
})
