// The profile the system policy pins (issue 24: `<BIN>_PROFILE` is a label the caller sets, so a rule on it held
// nobody who left it unset). In-process over a root-owned tree in a temp dir (the test-only hook): the pin is
// applied in one place (callerOf), so a write's principal, the audit and `context` see it; another profile is
// E_CONFIG profile_pinned before anything is read or written; no pin leaves everything as it was. chown needs root.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { caller, startAudit } from '../../../src/audit/open.js'
import { clearAudit, pendingAudit } from '../../../src/audit/pending.js'
import type { AgentError } from '../../../src/errors/agent-error.js'
import { evaluate } from '../../../src/policy/evaluate.js'
import { loadPolicy, POLICY_FILE, SYSTEM_ROOT_FOR_TESTS } from '../../../src/policy/load.js'
import { effectivePolicy, type PolicyDocument, type PolicyRule, parsePolicy } from '../../../src/policy/policy.js'
import { callerOf } from '../../../src/settings/caller.js'
import { toolEnv } from '../../../src/settings/tool-env.js'
import { judge } from '../../../src/write/gate.js'
import { defaultPrincipal } from '../../../src/write/principal.js'
import { type Risk, UNDECLARED_RISK } from '../../../src/write/risk.js'
import { env, seed, storeBytes, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

const AS_ROOT = process.getuid?.() === 0
const hook = globalThis as Record<symbol, unknown>
const credentials = { session: async () => ({ account: 'agent', scopes: null }) } as never
const PROD_DELETE: PolicyRule = {
  id: 'prod-delete',
  when: { action: ['delete'], profile: ['prod'] },
  decision: 'approve',
}
const DELETE: Risk = { ...UNDECLARED_RISK, action: 'delete' }

async function refusal(f: () => unknown): Promise<AgentError> {
  try {
    await f()
  } catch (error) {
    return error as AgentError
  }
  throw new Error('expected a refusal')
}

describe('a pin in a policy document', () => {
  it('is accepted only in the system policy, as a profile name', () => {
    expect(parsePolicy({ profile: 'prod' }, '/etc/tasks/policy.json', true)).toEqual({ profile: 'prod' })
    for (const bad of ['', 'a b', '-x', 7, null])
      expect(() => parsePolicy({ profile: bad }, 'sys', true), String(bad)).toThrow(/profile must be a name of 1-64/)
    // In the tool's defaults or the user's file a pin holds nobody (the user can edit it): refused, never trusted.
    expect(() => parsePolicy({ profile: 'prod' }, 'policy.json')).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', details: expect.objectContaining({ reason: 'invalid_policy' }) }),
    )
    expect(() => parsePolicy({ profile: 'prod' }, 'policy.json')).toThrow(/only in the system policy/)
  })

  it('reaches the effective policy from the system policy alone; without one the policy has no profile key', () => {
    expect(effectivePolicy(undefined, undefined, { profile: 'prod' })!.profile).toBe('prod')
    expect(effectivePolicy({ rules: [] }, { rules: [] }, {})).not.toHaveProperty('profile')
    expect(effectivePolicy({ rules: [] }, undefined)).not.toHaveProperty('profile')
    // The pin is part of the system policy, so its digest covers it.
    expect(effectivePolicy(undefined, undefined, { profile: 'prod' })!.digest).not.toBe(
      effectivePolicy(undefined, undefined, { profile: 'dev' })!.digest,
    )
  })
})

describe('the gate, given a principal whose profile is not the pinned one', () => {
  const gate = (profile: string | null) => ({
    policy: effectivePolicy({ rules: [PROD_DELETE] }, undefined, { profile: 'prod' })!,
    facts: {
      command: 'delete',
      kind: 'write',
      risk: DELETE,
      targets: 1,
      profile,
      account: 'agent',
    },
    bin: 'tasks',
    approvals: async () => ({}) as never,
    requester: { account: 'agent', os_user: 'ci' },
    resume: 'tasks delete 1',
  })

  it('refuses it (E_CONFIG profile_pinned, recorded as refused) and judges the pinned one', () => {
    const noted: unknown[] = []
    for (const profile of ['dev', null]) {
      expect(() => judge(gate(profile), undefined, (f) => noted.push(f))).toThrow(
        expect.objectContaining({
          code: 'E_CONFIG',
          details: expect.objectContaining({ reason: 'profile_pinned', pinned: 'prod', got: profile }),
        }),
      )
    }
    expect(noted).toEqual([{ mode: 'refused' }, { mode: 'refused' }])
    expect(judge(gate('prod'), undefined, () => {})).toMatchObject({ decision: 'approve', rule: 'prod-delete' })
  })
})

describe('with no system policy', () => {
  it('the profile is <BIN>_PROFILE, else default, as before', async () => {
    expect((await callerOf(toolEnv('tasks-no-pin', { TASKS_NO_PIN_PROFILE: 'dev' }), () => 'ann')).profile).toBe('dev')
    expect(await callerOf(toolEnv('tasks-no-pin', {}), () => 'ann')).toEqual({ profile: 'default', os_user: 'ann' })
    const p = await defaultPrincipal(credentials, toolEnv('tasks-no-pin', { TASKS_NO_PIN_PROFILE: 'prod' }))
    expect(p.profile).toBe('prod')
  })
})

describe.runIf(AS_ROOT)('a system policy that pins the profile', () => {
  let top: string
  let file: string
  const box = useSandbox()
  const pin = (doc: PolicyDocument) => writeFileSync(file, JSON.stringify(doc), { mode: 0o644 })
  beforeEach(() => {
    top = mkdtempSync(join(tmpdir(), 'agentcli-pin-'))
    chmodSync(top, 0o755)
    mkdirSync(join(top, 'etc', 'tasks'), { recursive: true, mode: 0o755 })
    file = join(top, 'etc', 'tasks', POLICY_FILE)
    pin({ profile: 'prod', rules: [PROD_DELETE] })
    hook[SYSTEM_ROOT_FOR_TESTS] = top
  })
  afterEach(() => {
    delete hook[SYSTEM_ROOT_FOR_TESTS]
    rmSync(top, { recursive: true, force: true })
  })
  const principal = (vars: Record<string, string>) => defaultPrincipal(credentials, toolEnv('tasks', vars))

  it('makes it the principal’s profile with <BIN>_PROFILE unset or the same, and the policy judges that', async () => {
    for (const vars of [{}, { TASKS_PROFILE: 'prod' }]) {
      const p = await principal(vars)
      expect(p.profile, JSON.stringify(vars)).toBe('prod')
      const policy = loadPolicy(join(top, 'none'), {}, 'tasks')!
      expect(policy.profile).toBe('prod')
      const facts = {
        command: 'delete',
        kind: 'write',
        risk: DELETE,
        targets: 1,
        size: undefined,
        profile: p.profile,
        account: p.account,
      }
      expect(evaluate(policy, facts)).toMatchObject({ decision: 'approve', rule: 'prod-delete' })
    }
    expect(await caller('tasks', () => 'ann')).toEqual({ profile: 'prod', os_user: 'ann' })
  })

  it('refuses <BIN>_PROFILE naming another profile: E_CONFIG profile_pinned, naming the pin and the variable', async () => {
    const e = await refusal(() => principal({ TASKS_PROFILE: 'dev' }))
    expect(e).toMatchObject({
      code: 'E_CONFIG',
      details: { reason: 'profile_pinned', setting: 'TASKS_PROFILE', pinned: 'prod', got: 'dev', path: file },
    })
    expect(e.message).toMatch(/TASKS_PROFILE=dev.*prod/)
    expect(String(e.details.fix)).toMatch(/unset TASKS_PROFILE/)
  })

  it('a system policy without a pin leaves <BIN>_PROFILE as it was', async () => {
    pin({ rules: [PROD_DELETE] })
    expect((await principal({ TASKS_PROFILE: 'dev' })).profile).toBe('dev')
    expect((await principal({})).profile).toBe('default')
  })

  it('a system policy that cannot be trusted refuses the caller too (fail closed)', async () => {
    chmodSync(file, 0o666)
    expect(await refusal(() => principal({}))).toMatchObject({
      code: 'E_CONFIG',
      details: { reason: 'system_policy_unsafe' },
    })
  })

  it('the audit records a refused profile as an attempt, with no profile, and then refuses', async () => {
    const dataDir = join(top, 'data')
    const saved = process.env.TASKS_PROFILE
    process.env.TASKS_PROFILE = 'dev'
    try {
      const e = await refusal(() =>
        startAudit({ dataDir, bin: 'tasks' } as never, { id: 'x', kind: 'local', argv: [] }),
      )
      expect(e).toMatchObject({ code: 'E_CONFIG', details: { reason: 'profile_pinned' } })
    } finally {
      if (saved === undefined) delete process.env.TASKS_PROFILE
      else process.env.TASKS_PROFILE = saved
    }
    expect(pendingAudit()).toMatchObject({ command: 'x', profile: null, os_user: expect.any(String) })
    // The workers share modules (isolate: false): leave no run's record open for the next file.
    clearAudit()
  })

  it('through the example tool: a delete is held with TASKS_PROFILE unset, refused with another; context says prod', async () => {
    const b = box()
    seed(b, [{ id: '1', title: 'a' }])
    const before = storeBytes(b)
    const dry = await tasks(b, ['delete', '1', '--dry-run'])
    expect(dry.code, dry.stdout).toBe(0)
    expect(env(dry).data.approval).toMatchObject({ rule: 'prod-delete' })
    const held = await tasks(b, ['delete', '1', '--confirm', env(dry).data.confirm_token])
    expect(held.code, held.stdout).toBe(9)
    expect(env(held).error.code).toBe('E_HUMAN_REQUIRED')
    const other = await tasks(b, ['delete', '1', '--dry-run'], { env: { ...b.env, TASKS_PROFILE: 'dev' } })
    expect(other.code, other.stdout).toBe(4)
    expect(env(other).error).toMatchObject({
      code: 'E_CONFIG',
      details: { reason: 'profile_pinned', pinned: 'prod', setting: 'TASKS_PROFILE' },
    })
    expect(storeBytes(b)).toBe(before)
    const ctx = await tasks(b, ['context'])
    expect(env(ctx).data).toMatchObject({ env: 'prod', environment: 'prod' })
    const audit = readFileSync(join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
    expect(audit.map((l) => JSON.parse(l).profile)).toEqual(['prod', 'prod', null])
  })
})
