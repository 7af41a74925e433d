// The system policy (/etc/<bin>/policy.json), in-process over a root-owned tree in a temp dir (pointed at by the
// test-only hook): accepted only when it and every directory up to the top belong to root and only root may write
// them, never through a link, refused (E_CONFIG, the path and the fix) otherwise; under it the user's file only
// tightens, adds no approver and cannot shadow it away; and the digest covers it. chown needs root (as here).
import { chmodSync, chownSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AgentError } from '../../../src/errors/agent-error.js'
import { openStateFile } from '../../../src/fs/state-file.js'
import { evaluate, type PolicyFacts } from '../../../src/policy/evaluate.js'
import {
  loadPolicy,
  POLICY_FILE,
  readSystemPolicy,
  SYSTEM_ROOT_FOR_TESTS,
  systemPolicyPath,
} from '../../../src/policy/load.js'
import { effectivePolicy, type PolicyDocument } from '../../../src/policy/policy.js'
import { UNDECLARED_RISK } from '../../../src/write/risk.js'

const AS_ROOT = process.getuid?.() === 0
const NOBODY = 65534
const ALICE = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOYjv6yZc0ZK8n5bH3c3o6b0s0bGv5i7l4y0b1b2b3b4 alice'
const MALLORY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMalloryMalloryMalloryMalloryMalloryMallory0 mallory'
const hook = globalThis as Record<symbol, unknown>
const facts: PolicyFacts = {
  command: 'delete',
  kind: 'write',
  risk: { ...UNDECLARED_RISK, action: 'delete' },
  targets: 5,
  size: undefined,
  profile: 'default',
  account: 'agent',
}
const SYSTEM: PolicyDocument = {
  approvers: [{ id: 'alice', key: ALICE }],
  rules: [{ id: 'deletes', when: { action: ['delete'] }, decision: 'approve' }],
}

function refusal(f: () => unknown): AgentError {
  try {
    f()
  } catch (error) {
    return error as AgentError
  }
  throw new Error('expected a refusal')
}

describe('where the system policy lives', () => {
  afterEach(() => void delete hook[SYSTEM_ROOT_FOR_TESTS])

  it('is /etc/<bin>/policy.json checked up to /, /private/etc on macOS, none on Windows', () => {
    expect(systemPolicyPath('tasks', 'linux')).toEqual({ path: '/etc/tasks/policy.json', top: '/' })
    expect(systemPolicyPath('tasks', 'darwin')).toEqual({ path: '/private/etc/tasks/policy.json', top: '/' })
    expect(systemPolicyPath('tasks', 'win32')).toBeUndefined()
    expect(systemPolicyPath('tasks')?.path).toBe(process.platform === 'win32' ? undefined : '/etc/tasks/policy.json')
    hook[SYSTEM_ROOT_FOR_TESTS] = '/srv/x/'
    expect(systemPolicyPath('tasks', 'linux')).toEqual({ path: '/srv/x/etc/tasks/policy.json', top: '/srv/x' })
  })

  it('is absent on this machine for a bin nobody installed', () => {
    expect(readSystemPolicy('agentcli-unit-no-such-tool')).toBeUndefined()
  })

  it.runIf(AS_ROOT)('walks up to /: a root-owned file under a world-writable /tmp is refused there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-walk-'))
    try {
      writeFileSync(join(dir, 'p.json'), '{}', { mode: 0o644 })
      chmodSync(dir, 0o755)
      const e = refusal(() => openStateFile(join(dir, 'p.json'), 'read', { owner: 'root', upTo: '/' }))
      expect(e).toMatchObject({ code: 'E_CONFIG', details: { path: tmpdir(), mode: '1777'.slice(1) } })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe.runIf(AS_ROOT)('a system policy in a root-owned tree', () => {
  let top: string
  let etc: string
  let file: string
  let conf: string
  beforeEach(() => {
    top = mkdtempSync(join(tmpdir(), 'agentcli-sys-'))
    chmodSync(top, 0o755)
    etc = join(top, 'etc', 'tasks')
    mkdirSync(etc, { recursive: true, mode: 0o755 })
    file = join(etc, POLICY_FILE)
    writeFileSync(file, JSON.stringify(SYSTEM), { mode: 0o644 })
    conf = join(top, 'home', 'conf')
    mkdirSync(conf, { recursive: true, mode: 0o700 })
    hook[SYSTEM_ROOT_FOR_TESTS] = top
  })
  afterEach(() => {
    delete hook[SYSTEM_ROOT_FOR_TESTS]
    rmSync(top, { recursive: true, force: true })
  })
  const user = (doc: PolicyDocument) => writeFileSync(join(conf, POLICY_FILE), JSON.stringify(doc), { mode: 0o600 })
  const refused = (where: string) => {
    const e = refusal(() => readSystemPolicy('tasks'))
    expect(e).toMatchObject({
      code: 'E_CONFIG',
      details: { path: file, refused: where, reason: 'system_policy_unsafe' },
    })
    expect(e.message).toContain(file)
    expect(String(e.details.fix)).toMatch(/root/)
    expect(() => loadPolicy(conf, {}, 'tasks')).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    return e
  }

  it('is accepted when root owns it and every directory, and only root writes them', () => {
    expect(readSystemPolicy('tasks')).toEqual(SYSTEM)
    expect(readSystemPolicy('other')).toBeUndefined()
    expect(readSystemPolicy('tasks', 'win32')).toBeUndefined()
  })

  it("is refused when the file is another user's, naming the fix", () => {
    chownSync(file, NOBODY, NOBODY)
    expect(refused(file).details.fix).toMatch(/^as root: chown root /)
  })

  it('is refused when group or others may write the file', () => {
    chmodSync(file, 0o664)
    expect(refused(file).details.fix).toMatch(/^as root: chmod go-w /)
    chmodSync(file, 0o646)
    refused(file)
  })

  it("is refused when a directory above it is another user's or writable by others, up to the top", () => {
    chownSync(etc, NOBODY, NOBODY)
    refused(etc)
    chownSync(etc, 0, 0)
    chmodSync(join(top, 'etc'), 0o775)
    refused(join(top, 'etc'))
    chmodSync(join(top, 'etc'), 0o755)
    chmodSync(top, 0o757)
    refused(top)
  })

  it('is refused when the file or a directory is a link', () => {
    renameSync(file, join(top, 'real.json'))
    symlinkSync(join(top, 'real.json'), file)
    refused(file)
    rmSync(file)
    renameSync(etc, join(top, 'real-dir'))
    symlinkSync(join(top, 'real-dir'), etc)
    renameSync(join(top, 'real.json'), join(top, 'real-dir', POLICY_FILE))
    refused(etc)
  })

  it('is refused when it is not a file, or this user cannot read it; other failures pass through', () => {
    rmSync(file)
    mkdirSync(file)
    refused(file)
    rmSync(file, { recursive: true })
    writeFileSync(file, JSON.stringify(SYSTEM), { mode: 0o600 })
    process.seteuid!(NOBODY)
    let e: AgentError
    try {
      e = refusal(() => readSystemPolicy('tasks'))
    } finally {
      process.seteuid!(0)
    }
    expect(e).toMatchObject({ code: 'E_CONFIG', details: { path: file, reason: 'system_policy_unreadable' } })
    rmSync(etc, { recursive: true })
    writeFileSync(etc, '')
    expect(refusal(() => readSystemPolicy('tasks'))).toMatchObject({ code: 'ENOTDIR' })
  })

  it('is judged with the user file: approvers only from it, a looser user rule ignored, a stricter one applied', () => {
    user({
      mode: 'shadow',
      approvers: [{ id: 'mallory', key: MALLORY }],
      rules: [{ id: 'loose', when: {}, decision: 'allow' }],
    })
    const p = loadPolicy(conf, {}, 'tasks')!
    expect(p.approvers).toEqual(SYSTEM.approvers)
    expect(p.mode).toBe('enforce')
    expect(evaluate(p, facts)).toMatchObject({ decision: 'approve', rule: 'deletes', shadow: false })
    user({ rules: [{ id: 'no-deletes', when: { action: ['delete'] }, decision: 'deny' }] })
    expect(evaluate(loadPolicy(conf, {}, 'tasks')!, facts)).toMatchObject({ decision: 'deny', rule: 'no-deletes' })
    // A system policy without approvers leaves none, whatever the user's file and the tool's defaults list.
    writeFileSync(file, JSON.stringify({ rules: SYSTEM.rules }))
    user({ approvers: [{ id: 'mallory', key: MALLORY }] })
    const tool = { agentcli: { policy: { approvers: [{ id: 'm2', key: MALLORY }] } } }
    expect(loadPolicy(conf, tool, 'tasks')!.approvers).toEqual([])
  })

  it('is covered by the digest; without one digests are as before', () => {
    const before = loadPolicy(conf, {}, 'tasks')!.digest
    writeFileSync(file, JSON.stringify({ ...SYSTEM, approvers: [] }))
    expect(loadPolicy(conf, {}, 'tasks')!.digest).not.toBe(before)
    rmSync(file)
    user({ rules: [] })
    expect(loadPolicy(conf, {}, 'tasks')!.digest).toBe(effectivePolicy(undefined, { rules: [] })!.digest)
    expect(effectivePolicy(undefined, { rules: [] }, {})!.digest).not.toBe(
      effectivePolicy(undefined, { rules: [] })!.digest,
    )
    expect(effectivePolicy(undefined, undefined, { mode: 'shadow' })!.mode).toBe('shadow')
  })
})
