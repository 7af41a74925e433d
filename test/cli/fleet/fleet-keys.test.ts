import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sandbox } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { tokenKeyId } from '../../../src/confirm/token.js'
import { parseKeyRing } from '../../../src/fleet/key-ring.js'
import { envelope, type Machine, newKey, onMachine, seedTask } from '../../support/fleet.js'

const boxes: Array<{ cleanup(): void }> = []
afterAll(() => {
  for (const b of boxes) b.cleanup()
})

/** A machine without a state store: the key ring works the same with the files. */
function machine(secret: Record<string, string>): Machine {
  const box = sandbox('agentcli-keys-')
  boxes.push(box)
  const m = { box, env: { ...box.env, ...secret } }
  seedTask(m)
  return m
}

async function dryRun(m: Machine): Promise<string> {
  const run = await onMachine(m, ['delete', '1', '--dry-run'])
  expect(run.code, run.stdout).toBe(0)
  return envelope(run).data.confirm_token
}

describe('the injected confirm secret (key ring)', () => {
  const k1 = newKey()
  const k2 = newKey()

  it('rotation: a token signed by the previous key still confirms; the new key signs; a dropped key verifies nothing', async () => {
    const token = await dryRun(machine({ TASKS_CONFIRM_SECRET: `k1:${k1}` }))
    expect(tokenKeyId(token)).toBe('k1')
    const rotated = machine({ TASKS_CONFIRM_SECRET: `k2:${k2},k1:${k1}` })
    const ok = await onMachine(rotated, ['delete', '1', '--confirm', token])
    expect(ok.code, ok.stdout).toBe(0)
    const fresh = await dryRun(machine({ TASKS_CONFIRM_SECRET: `k2:${k2},k1:${k1}` }))
    expect(tokenKeyId(fresh)).toBe('k2')
    const retired = machine({ TASKS_CONFIRM_SECRET: `k2:${k2}` })
    const old = await dryRun(machine({ TASKS_CONFIRM_SECRET: `k1:${k1}` }))
    const refused = await onMachine(retired, ['delete', '1', '--confirm', old])
    expect(refused.code).toBe(6)
    expect(envelope(refused).error.details.reason).toBe('unknown_key')
    expect(await onMachine(retired, ['delete', '1', '--confirm', fresh]).then((r) => r.code)).toBe(0)
  }, 60_000)

  it('the key id is covered by the MAC: a token relabelled to another key of the ring is tampered', async () => {
    const token = await dryRun(machine({ TASKS_CONFIRM_SECRET: `k1:${k1}` }))
    const [, payload, mac] = token.split('.')
    // The body starts with the key id's length, then the id: relabel "k1" as "k2".
    const bytes = Buffer.from(payload!, 'base64url')
    expect(bytes.subarray(0, 3).toString('latin1')).toBe('\u0002k1')
    bytes[2] = '2'.charCodeAt(0)
    const forged = `ct_3.${bytes.toString('base64url')}.${mac}`
    expect(tokenKeyId(forged)).toBe('k2')
    const run = await onMachine(machine({ TASKS_CONFIRM_SECRET: `k2:${k2},k1:${k1}` }), [
      'delete',
      '1',
      '--confirm',
      forged,
    ])
    expect(run.code).toBe(6)
    expect(envelope(run).error.details.reason).toBe('tampered')
    // A token without a key id is not verified by a ring whose keys all have ids.
    const bare = await dryRun(machine({ TASKS_CONFIRM_SECRET: k1 }))
    expect(tokenKeyId(bare)).toBeNull()
    const noId = await onMachine(machine({ TASKS_CONFIRM_SECRET: `k1:${k1}` }), ['delete', '1', '--confirm', bare])
    expect(envelope(noId).error.details.reason).toBe('unknown_key')
  }, 60_000)

  it('an injected secret never weakens tokens: short, patterned, malformed or ambiguous rings are E_CONFIG', async () => {
    for (const bad of [
      'abcd',
      '00'.repeat(32),
      'ab'.repeat(40),
      `k1:${k1},${k2}`,
      `k1:${k1},k1:${k2}`,
      `bad id:${k1}`,
      `k1:${'zz'.repeat(32)}`,
    ]) {
      const run = await onMachine(machine({ TASKS_CONFIRM_SECRET: bad }), ['delete', '1', '--dry-run'])
      expect(run.code, bad).toBe(4)
      expect(envelope(run).error.code, bad).toBe('E_CONFIG')
      expect(run.stdout).not.toContain(bad.slice(0, 20))
    }
    expect(() => parseKeyRing(' , ', '$X')).toThrow(/no key/)
  }, 60_000)

  it('a secret file for secret managers: 0400 works on every machine; readable by others, or both set, is refused', async () => {
    const dir = sandbox('agentcli-secret-')
    boxes.push(dir)
    const path = join(dir.root, 'secrets', 'confirm')
    mkdirSync(join(dir.root, 'secrets'), { mode: 0o700 })
    writeFileSync(path, `k9:${k1}\n`, { mode: 0o400 })
    const token = await dryRun(machine({ TASKS_CONFIRM_SECRET_FILE: path }))
    expect(tokenKeyId(token)).toBe('k9')
    const other = await onMachine(machine({ TASKS_CONFIRM_SECRET_FILE: path }), ['delete', '1', '--confirm', token])
    expect(other.code, other.stdout).toBe(0)
    chmodSync(path, 0o644)
    const readable = await onMachine(machine({ TASKS_CONFIRM_SECRET_FILE: path }), ['delete', '1', '--dry-run'])
    expect(envelope(readable).error).toMatchObject({ code: 'E_CONFIG' })
    expect(envelope(readable).error.details.fix).toContain('chmod 400')
    chmodSync(path, 0o400)
    const both = await onMachine(machine({ TASKS_CONFIRM_SECRET_FILE: path, TASKS_CONFIRM_SECRET: k1 }), [
      'delete',
      '1',
      '--dry-run',
    ])
    expect(envelope(both).error.code).toBe('E_CONFIG')
    const missing = await onMachine(machine({ TASKS_CONFIRM_SECRET_FILE: `${path}.absent` }), [
      'delete',
      '1',
      '--dry-run',
    ])
    expect(envelope(missing).error.code).toBe('E_CONFIG')
  }, 60_000)
})

describe('key ids in tokens and the shared audit sink (in-process)', () => {
  const binding = { tool: 't', command: 'c', args: {}, principal: { account: 'a' } }

  it('tokenKeyId reads the id a token names, null without one, undefined for what is not a token', async () => {
    const { mintToken, verifyToken } = await import('../../../src/confirm/token.js')
    const key = Buffer.from(newKey(), 'hex')
    const withId = mintToken(key, binding, [], 1_000, 60_000, 'k7').token
    expect(tokenKeyId(withId)).toBe('k7')
    expect(verifyToken(key, withId, binding, 2_000).ok).toBe(true)
    expect(tokenKeyId(mintToken(key, binding, [], 1_000, 60_000).token)).toBeNull()
    expect(tokenKeyId(mintToken(key, binding, [], 1_000, 60_000, null).token)).toBeNull()
    expect(tokenKeyId('nope')).toBeUndefined()
    expect(tokenKeyId('ct_3.!!!.x')).toBeUndefined()
    expect(tokenKeyId(`ct_3.${Buffer.from([5, 65]).toString('base64url')}.x`)).toBeUndefined()
    expect(tokenKeyId(`ct_3.${Buffer.from([0]).toString('base64url')}.x`)).toBeNull()
    // A key id of bytes no key ring writes fails the body check even under a valid MAC.
    const { createHmac } = await import('node:crypto')
    const body = Buffer.from(withId.split('.')[1]!, 'base64url')
    body[1] = 0
    const encoded = body.toString('base64url')
    const mac = createHmac('sha256', key).update(`agentcli-confirm-v3.${encoded}`).digest('base64url')
    expect(verifyToken(key, `ct_3.${encoded}.${mac}`, binding, 2_000)).toMatchObject({ ok: false, reason: 'tampered' })
  })

  it('appendAudit sends the record to the shared log, adds the local file when asked, and falls back to it', async () => {
    const { appendAudit } = await import('../../../src/audit/writer.js')
    const { readFileSync: read, existsSync } = await import('node:fs')
    const box = sandbox('agentcli-audit-')
    boxes.push(box)
    const path = join(box.root, 'audit.jsonl')
    const sent: unknown[] = []
    const draft = {
      path,
      command: 'delete',
      args: [],
      account: null,
      mode: 'confirm' as const,
      token_id: 'x',
    }
    const outcome = { result_code: 'OK', exit_code: 0, duration_ms: 1 }
    await appendAudit({ ...draft, shared: { append: async (r) => void sent.push(r), alsoFile: false } }, outcome)
    expect(sent).toHaveLength(1)
    expect(sent[0]).not.toHaveProperty('shared')
    expect(existsSync(path)).toBe(false)
    await appendAudit({ ...draft, shared: { append: async (r) => void sent.push(r), alsoFile: true } }, outcome)
    expect(read(path, 'utf8').trim().split('\n')).toHaveLength(1)
    const failing = {
      append: async () => {
        throw new Error('store down')
      },
      alsoFile: false,
    }
    await appendAudit({ ...draft, shared: failing }, outcome)
    expect(read(path, 'utf8').trim().split('\n')).toHaveLength(2)
  })
})
