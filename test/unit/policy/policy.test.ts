// The policy gate's decisions, in-process: a document is parsed strictly (a typo never lets a call through), the
// strictest applying rule wins, the operator's file is read owner-only and never through a link, and any change
// to either source changes the digest a token and an approval are bound to.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { evaluate, matches, type PolicyFacts } from '../../../src/policy/evaluate.js'
import { loadPolicy, POLICY_FILE, readOperatorPolicy } from '../../../src/policy/load.js'
import { effectivePolicy, type PolicyDocument, parsePolicy } from '../../../src/policy/policy.js'
import { UNDECLARED_RISK } from '../../../src/write/risk.js'

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOYjv6yZc0ZK8n5bH3c3o6b0s0bGv5i7l4y0b1b2b3b4 alice'
const facts: PolicyFacts = {
  command: 'delete',
  kind: 'write',
  risk: { ...UNDECLARED_RISK, action: 'delete' },
  targets: 5,
  size: undefined,
  profile: 'default',
  account: 'agent',
}
/** A bin no machine has a system policy for (/etc/<it>/policy.json does not exist). */
const NO_SYSTEM = 'agentcli-unit-no-such-tool'
const policy = (doc: PolicyDocument) => effectivePolicy(doc, undefined)!

describe('parsePolicy', () => {
  it('accepts a full document', () => {
    const doc = {
      mode: 'shadow',
      approvers: [{ id: 'alice', key: KEY, account: 'alice' }],
      rules: [
        {
          id: 'r',
          decision: 'approve',
          approvals: 2,
          when: {
            command: ['delete'],
            kind: ['write'],
            action: ['delete'],
            blast_radius: ['set'],
            reversible: false,
            targets_over: 3,
            size_over: 0,
            profile: ['prod'],
            account: ['agent'],
          },
        },
      ],
    }
    expect(parsePolicy(doc, 'p')).toBe(doc)
  })

  it.each([
    [[], 'must be a JSON object'],
    [{ extra: 1 }, 'unknown key "extra"'],
    [{ mode: 'off' }, 'mode must be'],
    [{ rules: {} }, 'rules must be a list'],
    [{ approvers: {} }, 'approvers must be a list'],
    [{ rules: [1] }, 'rules[0] must be an object'],
    [{ rules: [{ id: 'r', decision: 'allow', when: {}, x: 1 }] }, 'unknown key "x"'],
    [{ rules: [{ id: '', decision: 'allow', when: {} }] }, 'id must be'],
    [{ rules: [{ id: 'r', decision: 'maybe', when: {} }] }, 'decision must be'],
    [{ rules: [{ id: 'r', decision: 'allow', approvals: 2, when: {} }] }, 'on an approve rule'],
    [{ rules: [{ id: 'r', decision: 'approve', approvals: 0, when: {} }] }, 'approvals must be'],
    [{ rules: [{ id: 'r', decision: 'deny' }] }, 'when must be an object'],
    [{ rules: [{ id: 'r', decision: 'deny', when: { comand: ['x'] } }] }, 'unknown condition "comand"'],
    [{ rules: [{ id: 'r', decision: 'deny', when: { command: [] } }] }, 'non-empty list'],
    [{ rules: [{ id: 'r', decision: 'deny', when: { command: 'delete' } }] }, 'non-empty list'],
    [{ rules: [{ id: 'r', decision: 'deny', when: { action: ['destroy'] } }] }, '"destroy" is not one of'],
    [{ rules: [{ id: 'r', decision: 'deny', when: { reversible: 'no' } }] }, 'true or false'],
    [{ rules: [{ id: 'r', decision: 'deny', when: { targets_over: -1 } }] }, 'whole number'],
    [{ approvers: [1] }, 'approvers[0] must be an object'],
    [{ approvers: [{ id: 'a', key: KEY, x: 1 }] }, 'unknown key "x"'],
    [{ approvers: [{ id: '', key: KEY }] }, 'id must be'],
    [{ approvers: [{ id: 'a', key: 'ssh-rsa AAAA' }] }, 'ssh-ed25519 public key'],
    [{ approvers: [{ id: 'a', key: KEY, account: 1 }] }, 'account must be a string'],
    [{ approval: [] }, 'approval must be an object'],
    [{ approval: { channel: ['ssh'] } }, 'approval has an unknown key "channel"'],
    [{ approval: { channels: [] } }, 'approval.channels must be a non-empty list'],
    [{ approval: { channels: 'ssh' } }, 'approval.channels must be a non-empty list'],
    [{ approval: { channels: ['ssh', 'email'] } }, '"email" is not one of ssh, mcp-elicitation'],
    [{ approval: { channels: ['ssh', 'ssh'] } }, 'lists a channel twice'],
    [
      {
        approvers: [
          { id: 'a', key: KEY },
          { id: 'a', key: KEY },
        ],
      },
      'listed twice',
    ],
  ])('refuses %j (%s) with E_CONFIG', (doc, why) => {
    let error: { code?: string; message?: string; details?: { reason?: string } } = {}
    try {
      parsePolicy(doc, 'p')
    } catch (e) {
      error = e as typeof error
    }
    expect(error.code).toBe('E_CONFIG')
    expect(error.details?.reason).toBe('invalid_policy')
    expect(error.message).toContain(why)
  })
})

describe('effectivePolicy', () => {
  it('is undefined without any source; joins rules and approvers; shadow only when every source asks', () => {
    expect(effectivePolicy(undefined, undefined)).toBeUndefined()
    const tool: PolicyDocument = { mode: 'shadow', rules: [{ id: 'a', when: {}, decision: 'allow' }] }
    const op: PolicyDocument = { approvers: [{ id: 'x', key: KEY }], rules: [{ id: 'b', when: {}, decision: 'deny' }] }
    const both = effectivePolicy(tool, op)!
    expect(both.mode).toBe('enforce')
    expect(both.rules.map((r) => r.id)).toEqual(['a', 'b'])
    expect(both.approvers).toHaveLength(1)
    expect(effectivePolicy(tool, undefined)!.mode).toBe('shadow')
    expect(effectivePolicy(undefined, { mode: 'enforce' })!.mode).toBe('enforce')
  })

  it('takes approval channels from the system policy alone: the tool and the user file cannot turn one on', () => {
    const on: PolicyDocument = { approval: { channels: ['ssh', 'mcp-elicitation'] } }
    expect(parsePolicy(on, 'p')).toBe(on)
    expect(parsePolicy({ approval: {} }, 'p')).toEqual({ approval: {} })
    expect(effectivePolicy(on, on)!.channels).toEqual(['ssh'])
    expect(effectivePolicy(on, on, {})!.channels).toEqual(['ssh'])
    expect(effectivePolicy(undefined, undefined, { approval: {} })!.channels).toEqual(['ssh'])
    expect(effectivePolicy(undefined, undefined, on)!.channels).toEqual(['ssh', 'mcp-elicitation'])
    // The operator may also turn signatures off, and the user cannot turn them back on.
    const only = { approval: { channels: ['mcp-elicitation'] } } satisfies PolicyDocument
    expect(effectivePolicy(undefined, { approval: { channels: ['ssh'] } }, only)!.channels).toEqual(['mcp-elicitation'])
  })

  it('digests both sources: any change to either is another digest', () => {
    const tool: PolicyDocument = { rules: [{ id: 'a', when: {}, decision: 'approve' }] }
    const d = effectivePolicy(tool, undefined)!.digest
    expect(d).toMatch(/^pol_[0-9a-f]{32}$/)
    expect(effectivePolicy(tool, {})!.digest).not.toBe(d)
    expect(effectivePolicy({ rules: [{ id: 'a', when: {}, decision: 'allow' }] }, undefined)!.digest).not.toBe(d)
    expect(effectivePolicy(undefined, tool)!.digest).not.toBe(d)
  })
})

describe('evaluate', () => {
  it('allows by default, with no rule', () => {
    expect(evaluate(policy({}), facts)).toEqual({ decision: 'allow', rule: null, approvals: 0, shadow: false })
  })

  it('takes the strictest applying rule, named by the first to make it, and the most approvals asked', () => {
    const p = policy({
      rules: [
        { id: 'ok', when: {}, decision: 'allow' },
        { id: 'two', when: { targets_over: 3 }, decision: 'approve', approvals: 2 },
        { id: 'one', when: {}, decision: 'approve' },
        { id: 'never', when: { profile: ['prod'] }, decision: 'deny' },
      ],
    })
    expect(evaluate(p, facts)).toEqual({ decision: 'approve', rule: 'two', approvals: 2, shadow: false })
    expect(evaluate(p, { ...facts, profile: 'prod' })).toMatchObject({ decision: 'deny', rule: 'never', approvals: 0 })
    expect(evaluate(p, { ...facts, targets: 3 })).toMatchObject({ rule: 'one', approvals: 1 })
    expect(evaluate(policy({ mode: 'shadow', rules: [{ id: 'x', when: {}, decision: 'deny' }] }), facts).shadow).toBe(
      true,
    )
  })

  it('matches each condition, and a size rule never before the size is known', () => {
    expect(matches({ command: ['edit'] }, facts)).toBe(false)
    expect(matches({ kind: ['local'] }, facts)).toBe(false)
    expect(matches({ action: ['create'] }, facts)).toBe(false)
    expect(matches({ blast_radius: ['all'] }, facts)).toBe(false)
    expect(matches({ reversible: true }, facts)).toBe(false)
    expect(matches({ reversible: false }, facts)).toBe(true)
    expect(matches({ targets_over: 5 }, facts)).toBe(false)
    expect(matches({ size_over: 0 }, facts)).toBe(false)
    expect(matches({ size_over: 0 }, { ...facts, size: 1 })).toBe(true)
    expect(matches({ account: ['agent'] }, facts)).toBe(true)
    expect(matches({ account: ['agent'] }, { ...facts, account: null })).toBe(false)
  })
})

describe('the operator policy file', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentcli-policy-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  const write = (text: string, mode = 0o600) => {
    writeFileSync(join(dir, POLICY_FILE), text, { mode })
    chmodSync(join(dir, POLICY_FILE), mode)
  }

  it('is absent, read owner-only, or refused as invalid JSON', () => {
    expect(readOperatorPolicy(dir)).toBeUndefined()
    expect(loadPolicy(dir, {}, NO_SYSTEM)).toBeUndefined()
    write('{"mode":"enforce"}')
    expect(readOperatorPolicy(dir)).toEqual({ mode: 'enforce' })
    write('{')
    expect(() => readOperatorPolicy(dir)).toThrow(/not valid JSON/)
  })

  it('is refused when others can read or write it (loosened), or when it is a link (swapped)', () => {
    write('{}', 0o644)
    expect(() => readOperatorPolicy(dir)).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    write('{}', 0o620)
    expect(() => readOperatorPolicy(dir)).toThrow(expect.objectContaining({ code: 'E_CONFIG' }))
    rmSync(join(dir, POLICY_FILE))
    mkdirSync(join(dir, 'elsewhere'))
    writeFileSync(join(dir, 'elsewhere', 'p.json'), '{}', { mode: 0o600 })
    symlinkSync(join(dir, 'elsewhere', 'p.json'), join(dir, POLICY_FILE))
    expect(() => readOperatorPolicy(dir)).toThrow(/symbolic link/)
  })

  it('joins the tool defaults of package.json, and a changed file changes the digest', () => {
    const pjson = { agentcli: { policy: { rules: [{ id: 'a', when: {}, decision: 'approve' }] } } }
    const before = loadPolicy(dir, pjson, NO_SYSTEM)!
    expect(before.rules).toHaveLength(1)
    write('{"rules":[{"id":"b","when":{},"decision":"allow"}]}')
    expect(loadPolicy(dir, pjson, NO_SYSTEM)!.digest).not.toBe(before.digest)
    expect(() => loadPolicy(dir, { agentcli: { policy: { rules: 'x' } } }, NO_SYSTEM)).toThrow(/package.json/)
  })
})
