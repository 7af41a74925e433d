// The third approval channel, through the real bin and the official client: a change the policy holds is asked of
// a person in the host's form only when the root-owned system policy turns `mcp-elicitation` on (a root-owned tree
// in a temp dir, pointed at by the test-only preload test/fixtures/system-root.mjs). The person sees the exact
// change; a yes for this request applies it once and is audited as `mcp-elicitation:<client or subject>`, counts
// as one approver of N and for five minutes only; a no is E_FORBIDDEN; an answer naming another request, the
// channel off or turned on only in the user's file, a client that cannot elicit, and a filed approval copied to
// another change all leave the change held (E_HUMAN_REQUIRED), nothing applied.
import { createHash } from 'node:crypto'
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type Sandbox, sandbox } from 'agentcli/testing'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { useColdTasks } from '../../support/cold-tasks.js'
import { CLOCK_PRELOAD, env, ROOT, seed, storeBytes, tasks } from '../../support/helpers.js'
import { httpClient, startHttp } from '../../support/mcp-http.js'
import { openSession, type Session, sc } from '../../support/mcp-session.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'

// Not about the warm pool: the servers start none (cold-tasks.ts).
useColdTasks()

const PRELOAD = pathToFileURL(join(ROOT, 'test/fixtures/system-root.mjs')).href
const ON = { approval: { channels: ['ssh', 'mcp-elicitation'] } }
const IDS = ['1', '2', '3', '4']

// One system tree, one sandbox and two stdio servers for the whole file (a client that elicits, whose person's
// answers each test sets, and one that cannot): the system policy is read afresh for every held call, so each test
// writes the one it needs, seeds its store, and starts with no approval filed and no user policy.
let top: string
let shared: { box: Sandbox; yes?: Session; plain?: Session } | undefined
let answer: (p: Asked) => Answer = () => ({ action: 'cancel' })
let asked: Asked[] = []
beforeAll(async () => {
  top = mkdtempSync(join(tmpdir(), 'agentcli-elicit-'))
  chmodSync(top, 0o755)
  mkdirSync(join(top, 'etc', 'tasks'), { recursive: true, mode: 0o755 })
  shared = { box: sandbox() }
  shared.yes = await openSession(withSystem(shared.box), {
    elicit: (p) => {
      asked.push(p)
      return answer(p)
    },
  })
  shared.plain = await openSession(withSystem(shared.box))
})
afterAll(async () => {
  await shared?.yes?.close()
  await shared?.plain?.close()
  shared?.box.cleanup()
  rmSync(top, { recursive: true, force: true })
})
beforeEach(() => {
  rmSync(join(dataDir(box()), 'approvals'), { recursive: true, force: true })
  rmSync(join(box().env.XDG_CONFIG_HOME!, 'tasks', 'policy.json'), { force: true })
})
const box = (): Sandbox => {
  if (!shared) throw new Error('the shared sandbox exists only while the tests run')
  return shared.box
}

/** The root-owned system policy (this test runs as root, so what it writes is root's). */
const system = (doc: object) =>
  writeFileSync(join(top, 'etc', 'tasks', 'policy.json'), JSON.stringify(doc), { mode: 0o644 })
const withSystem = (b: Sandbox): Sandbox => ({
  ...b,
  env: { ...b.env, NODE_OPTIONS: `--import=${PRELOAD}`, TEST_SYSTEM_ROOT: top },
})
const dataDir = (b: Sandbox) => join(b.env.XDG_DATA_HOME!, 'tasks')
const filed = (b: Sandbox) => {
  try {
    return readdirSync(join(dataDir(b), 'approvals'))
  } catch {
    return []
  }
}
const five = (b: Sandbox) =>
  seed(
    b,
    ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `t${id}` })),
  )

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }
// biome-ignore lint/suspicious/noExplicitAny: elicitation params are loosely typed
type Asked = any

/**
 * The shared session whose person answers every form with `answer(params)` (or, without it, the one that cannot
 * elicit), recording what they were shown in this test; closing it leaves it to the next test.
 */
async function session(_b: Sandbox, reply?: (p: Asked) => Answer) {
  asked = []
  if (reply) answer = reply
  const s = (reply ? shared?.yes : shared?.plain)!
  return { s: { ...s, close: async () => undefined }, asked }
}

/** The request id the form names. */
const idIn = (p: Asked) => /Request: (ar_[0-9a-f]{24})/.exec(p.message)![1]!

async function dryRun(s: Awaited<ReturnType<typeof session>>['s'], ids = IDS) {
  const dry = sc(await s.client.callTool({ name: 'delete', arguments: { ids, dry_run: true } }))
  expect(dry.ok, JSON.stringify(dry)).toBe(true)
  return dry.data as { confirm_token: string; approval: { request_id: string; request: string } }
}

describe('approvals through the MCP host (elicitation)', () => {
  it('with the channel on in the system policy: the person sees the exact change, a yes applies it once, audited', async () => {
    system(ON)
    five(box())
    // The person types the id, with a stray space.
    const { s, asked } = await session(box(), (p) => ({
      action: 'accept',
      content: { approve: true, request_id: ` ${idIn(p)} ` },
    }))
    try {
      const { confirm_token: token, approval } = await dryRun(s)
      const done = sc(await s.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
      expect(done.ok, JSON.stringify(done)).toBe(true)
      expect(asked).toHaveLength(1)
      const message = String(asked[0].message)
      expect(message).toContain('Command: tasks delete')
      expect(message).toContain('Targets (4): 1, 2, 3, 4')
      expect(message).toContain('CANNOT BE UNDONE')
      expect(message).toContain(`Request: ${approval.request_id}`)
      expect(asked[0].requestedSchema.required).toEqual(['approve', 'request_id'])
      expect(env(await tasks(box(), ['list'])).data.items.map((t: { id: string }) => t.id)).toEqual(['5'])
      const audit = readFileSync(join(dataDir(box()), 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      expect(audit.at(-1)).toMatchObject({
        approved_by: ['mcp-elicitation:client:agentcli-test'],
        approval_request: approval.request_id,
      })
      // The token is single-use: the same confirm again is refused, with no second form.
      const again = sc(await s.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
      expect(again.error).toMatchObject({ details: { reason: 'already_used' } })
      expect(asked).toHaveLength(1)
    } finally {
      await s.close()
    }
  }, 90_000)

  it('counts as one approver: a rule asking for two still needs a listed approver, then applies', async () => {
    const keys = sshKeys()
    const alice = keys.make('alice')
    system({
      ...ON,
      approvers: [{ id: 'alice', key: alice.pub }],
      rules: [{ id: 'two', when: { command: ['delete'] }, decision: 'approve', approvals: 2 }],
    })
    five(box())
    const { s, asked } = await session(box(), (p) => ({
      action: 'accept',
      content: { approve: true, request_id: idIn(p) },
    }))
    try {
      const { confirm_token: token, approval } = await dryRun(s)
      const before = storeBytes(box())
      const call = async () => sc(await s.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
      // Two forms answered yes (one per call): still one approver.
      for (let i = 0; i < 2; i++)
        expect((await call()).error).toMatchObject({
          code: 'E_HUMAN_REQUIRED',
          details: { reason: 'approvals_short', approvals_required: 2, approvals_valid: 1 },
        })
      expect(asked).toHaveLength(2)
      expect(String(asked[1].message)).toContain('Approvals: 1 of 2 so far')
      expect(storeBytes(box())).toBe(before)
      const { decodeRequest } = await import('../../../src/approvals/request.js')
      const { fileApprovalStore } = await import('../../../src/approvals/store.js')
      const r = decodeRequest(approval.request)!
      await fileApprovalStore(dataDir(box())).add(r.id, sshSign(alice, r.bytes))
      const done = await call()
      expect(done.ok, JSON.stringify(done)).toBe(true)
      const audit = readFileSync(join(dataDir(box()), 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
      // The store lists approvals in the order of their file names (digests): compare as a set.
      expect(JSON.parse(audit.at(-1)!).approved_by.sort()).toEqual(['alice', 'mcp-elicitation:client:agentcli-test'])
    } finally {
      await s.close()
      keys.dispose()
    }
  }, 90_000)

  it('an answer counts for five minutes only (the token lives ten): later, the same confirm is short of it', async () => {
    const keys = sshKeys()
    const alice = keys.make('alice')
    system({
      ...ON,
      approvers: [{ id: 'alice', key: alice.pub }],
      rules: [{ id: 'two', when: { command: ['delete'] }, decision: 'approve', approvals: 2 }],
    })
    five(box())
    const { s } = await session(box(), (p) => ({ action: 'accept', content: { approve: true, request_id: idIn(p) } }))
    try {
      const { confirm_token: token, approval } = await dryRun(s)
      const held = sc(await s.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
      expect(held.error).toMatchObject({ details: { approvals_valid: 1 } })
      const { decodeRequest } = await import('../../../src/approvals/request.js')
      const { fileApprovalStore } = await import('../../../src/approvals/store.js')
      const r = decodeRequest(approval.request)!
      await fileApprovalStore(dataDir(box())).add(r.id, sshSign(alice, r.bytes))
      const before = storeBytes(box())
      const confirm = (shift: number) =>
        tasks(withSystem(box()), ['delete', ...IDS, '--confirm', token], {
          env: {
            NODE_OPTIONS: `--import=${PRELOAD} --import=${pathToFileURL(CLOCK_PRELOAD).href}`,
            TEST_CLOCK_SHIFT_MS: String(shift),
          },
        })
      const late = await confirm(6 * 60_000)
      expect(late.code, late.stdout).toBe(9)
      expect(env(late).error.details).toMatchObject({
        reason: 'approvals_short',
        approvals_valid: 1,
        not_counted: [{ index: expect.any(Number), reason: 'expired' }],
      })
      expect(storeBytes(box())).toBe(before)
      const inTime = await confirm(60_000)
      expect(inTime.code, inTime.stdout).toBe(0)
    } finally {
      await s.close()
      keys.dispose()
    }
  }, 90_000)

  it('a no is E_FORBIDDEN; a dismissal or an answer naming another request leaves it held; nothing applied', async () => {
    system(ON)
    five(box())
    const answers: Array<(p: Asked) => Answer> = [
      () => ({ action: 'decline' }),
      (p) => ({ action: 'accept', content: { approve: false, request_id: idIn(p) } }),
      () => ({ action: 'cancel' }),
      () => ({ action: 'accept', content: { approve: true, request_id: 'ar_000000000000000000000000' } }),
    ]
    let next = 0
    const { s, asked } = await session(box(), (p) => answers[next++]!(p))
    try {
      const { confirm_token: token } = await dryRun(s)
      const before = storeBytes(box())
      const call = async () => sc(await s.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
      for (const reason of ['approval_declined', 'approval_declined']) {
        const r = await call()
        expect(r.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason } })
      }
      for (let i = 0; i < 2; i++) {
        const r = await call()
        expect(r.error).toMatchObject({ code: 'E_HUMAN_REQUIRED', details: { action: 'approve', approvals_valid: 0 } })
      }
      expect(asked).toHaveLength(4)
      expect(filed(box())).toEqual([])
      expect(storeBytes(box())).toBe(before)
    } finally {
      await s.close()
    }
  }, 90_000)

  it.each([
    ['off in the system policy', { rules: [] }, undefined],
    ['on only in the user file', {}, ON],
  ])(
    '%s: no form, E_HUMAN_REQUIRED with the request',
    async (_, sys, user) => {
      system(sys)
      five(box())
      if (user) {
        const conf = join(box().env.XDG_CONFIG_HOME!, 'tasks')
        mkdirSync(conf, { recursive: true, mode: 0o700 })
        writeFileSync(join(conf, 'policy.json'), JSON.stringify(user), { mode: 0o600 })
      }
      const { s, asked } = await session(box(), (p) => ({
        action: 'accept',
        content: { approve: true, request_id: idIn(p) },
      }))
      try {
        const { confirm_token: token, approval } = await dryRun(s)
        const before = storeBytes(box())
        const r = sc(await s.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
        expect(r.error).toMatchObject({
          code: 'E_HUMAN_REQUIRED',
          details: { action: 'approve', request: approval.request, request_id: approval.request_id },
        })
        expect(asked).toEqual([])
        expect(storeBytes(box())).toBe(before)
      } finally {
        await s.close()
      }
    },
    90_000,
  )

  it('a client that cannot elicit gets E_HUMAN_REQUIRED; an approval filed for one change, copied to another, does not count', async () => {
    system(ON)
    seed(
      box(),
      ['1', '2', '3', '4', '5', '6', '7', '8', '9'].map((id) => ({ id, title: `t${id}` })),
    )
    const { s: yes } = await session(box(), (p) => ({
      action: 'accept',
      content: { approve: true, request_id: idIn(p) },
    }))
    const { s: plain } = await session(box())
    try {
      const a = await dryRun(yes)
      expect(
        sc(await yes.client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: a.confirm_token } })).ok,
      ).toBe(true)
      const other = ['5', '6', '7', '8']
      const b = await dryRun(plain, other)
      // The agent copies the person's approval of the first change into the second change's request.
      const from = join(dataDir(box()), 'approvals', a.approval.request_id)
      cpSync(from, join(dataDir(box()), 'approvals', b.approval.request_id), { recursive: true })
      const before = storeBytes(box())
      const r = sc(await plain.client.callTool({ name: 'delete', arguments: { ids: other, confirm: b.confirm_token } }))
      expect(r.error).toMatchObject({
        code: 'E_HUMAN_REQUIRED',
        details: { request_id: b.approval.request_id, not_counted: [{ index: 0, reason: 'other_request' }] },
      })
      expect(storeBytes(box())).toBe(before)
    } finally {
      await yes.close()
      await plain.close()
    }
  }, 90_000)

  it('over authenticated HTTP (2026-07-28) the approver is the subject whose host asked the person', async () => {
    system(ON)
    five(box())
    const tokens = join(box().root, 'tokens')
    writeFileSync(tokens, `sha256:${createHash('sha256').update('tok-ann').digest('hex')} ann\n`, { mode: 0o600 })
    const server = await startHttp(withSystem(box()), ['--auth-tokens', tokens])
    const asked: Asked[] = []
    const client = await httpClient(server.url, {
      modern: true,
      token: 'tok-ann',
      elicit: ((p: Asked) => {
        asked.push(p)
        return { action: 'accept', content: { approve: true, request_id: idIn(p) } }
      }) as never,
    })
    try {
      const dry = sc(await client.callTool({ name: 'delete', arguments: { ids: IDS, dry_run: true } }))
      const token = dry.data.confirm_token as string
      const done = sc(await client.callTool({ name: 'delete', arguments: { ids: IDS, confirm: token } }))
      expect(done.ok, JSON.stringify(done)).toBe(true)
      expect(asked).toHaveLength(1)
      const audit = readFileSync(join(dataDir(box()), 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
      const last = JSON.parse(audit.at(-1)!)
      expect(last.approved_by).toEqual(['mcp-elicitation:local#ann'])
    } finally {
      await client.close()
      await server.stop()
    }
  }, 90_000)
})
