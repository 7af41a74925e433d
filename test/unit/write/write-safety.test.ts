import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { fileApprovalStore } from '../../../src/approvals/store.js'
import { mintToken } from '../../../src/confirm/token.js'
import { env, seed, storeBytes, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'
import { approverFor } from '../../support/ssh-keys.js'

/*
 * The write flow's safety, in-process (test/support/in-process.ts): what races between processes and a shifted
 * clock show stays in test/cli/write/write-safety.test.ts.
 */
const box = useSandbox()

async function dryRun(b: Sandbox, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const run = await tasks(b, [...args, '--dry-run'], { env: extraEnv })
  expect(run.code, run.stdout).toBe(0)
  return env(run).data.confirm_token as string
}

function configDir(b: Sandbox): string {
  return join(b.env.XDG_CONFIG_HOME!, 'tasks')
}

function auditLines(b: Sandbox): Array<Record<string, unknown>> {
  try {
    return readFileSync(join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
  } catch {
    return []
  }
}

function expectRefused(run: ToolRun, reason: string): void {
  expect(run.code, run.stdout).toBe(6)
  expect(env(run).error).toMatchObject({ code: 'E_CONFLICT', retryable: false, details: { reason } })
}

describe('the dry-run → confirm flow', () => {
  it('no token → exit 5, the store byte-identical, and the exact dry-run command', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const before = storeBytes(box())
    const run = await tasks(box(), ['edit', '1', '--status', 'done'])
    expect(run.code).toBe(5)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIRMATION_REQUIRED',
      details: { dry_run_command: 'tasks edit 1 --status done --dry-run' },
    })
    expect(storeBytes(box())).toBe(before)
  })

  it('--dry-run changes nothing and returns a ct_ token expiring in the future, in UTC', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const before = storeBytes(box())
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'])
    expect(storeBytes(box())).toBe(before)
    const data = env(run).data
    expect(data.confirm_token).toMatch(/^ct_/)
    expect(data.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(data.expires_at)).toBeGreaterThan(Date.now())
    expect(data.preview.changes).toEqual([
      {
        action: 'update',
        resource: 'task',
        id: '1',
        before: expect.objectContaining({ status: 'open', version: 1 }),
        after: { title: 'a', status: 'done' },
      },
    ])
  })

  it('--confirm with the token applies exactly the previewed change', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(run.code).toBe(0)
    expect(env(run).data).toMatchObject({ id: '1', status: 'done', version: 2 })
    expect(env(await tasks(box(), ['get', '1'])).data.status).toBe('done')
  })

  it('--dry-run with --confirm is E_USAGE', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run', '--confirm', 'ct_x'])
    expect(run.code).toBe(2)
  })

  it("a missing target is the dry-run's answer: without a flag the token is asked for first, reading nothing", async () => {
    expect((await tasks(box(), ['edit', '9', '--status', 'done'])).code).toBe(5)
    expect((await tasks(box(), ['edit', '9', '--status', 'done', '--dry-run'])).code).toBe(3)
  })
})

describe('tokens are refused, and nothing is written', () => {
  it('one flipped character → tampered', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const before = storeBytes(box())
    for (const at of [10, token.length - 5]) {
      const c = token[at]!
      const flipped = token.slice(0, at) + (c === 'A' ? 'B' : 'A') + token.slice(at + 1)
      expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', flipped]), 'tampered')
    }
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', 'ct_garbage']), 'tampered')
    expect(storeBytes(box())).toBe(before)
  })

  it('a token minted by recomputing the binding without the secret → tampered', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await dryRun(box(), ['edit', '1', '--status', 'done'])
    const guess = Buffer.alloc(32, 7)
    const binding = {
      tool: 'tasks\0tasks-example',
      command: 'edit',
      args: { id: '1', status: 'done' },
      principal: { account: null, scopes: null, profile: 'default', os_user: 'root', credential: null },
    }
    const { token } = mintToken(guess, binding, [{ id: '1', version: 1 }], Date.now(), 600_000)
    const before = storeBytes(box())
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'tampered')
    expect(storeBytes(box())).toBe(before)
  })

  it('a token from another command → other_command', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    expectRefused(await tasks(box(), ['delete', '1', '--confirm', token]), 'other_command')
    expect(env(await tasks(box(), ['get', '1'])).ok).toBe(true)
  })

  it('the same command with other arguments → args_changed', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const before = storeBytes(box())
    expectRefused(
      await tasks(box(), ['edit', '1', '--status', 'done', '--title', 'b', '--confirm', token]),
      'args_changed',
    )
    expect(storeBytes(box())).toBe(before)
  })

  it('the task changed between dry-run and confirm → state_drift', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--title', 'mine'])
    const other = await dryRun(box(), ['edit', '1', '--status', 'done'])
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', other])).code).toBe(0)
    const before = storeBytes(box())
    expectRefused(await tasks(box(), ['edit', '1', '--title', 'mine', '--confirm', token]), 'state_drift')
    expect(storeBytes(box())).toBe(before)
  })

  it('a target that disappeared → state_drift naming it, its version then and now', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ])
    const token = await dryRun(box(), ['delete', '1', '2'])
    const other = await dryRun(box(), ['delete', '2'])
    expect((await tasks(box(), ['delete', '2', '--confirm', other])).code).toBe(0)
    const run = await tasks(box(), ['delete', '1', '2', '--confirm', token])
    expectRefused(run, 'state_drift')
    expect(env(run).error.details.drift).toEqual([{ id: '2', version_then: 1, version_now: null, gone: true }])
    expect(env(await tasks(box(), ['get', '1'])).ok).toBe(true)
  })

  it('a reused token → already_used', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['create', '--title', 'x'])
    expect((await tasks(box(), ['create', '--title', 'x', '--confirm', token])).code).toBe(0)
    const before = storeBytes(box())
    expectRefused(await tasks(box(), ['create', '--title', 'x', '--confirm', token]), 'already_used')
    expect(storeBytes(box())).toBe(before)
  })

  it('a token made with a rotated secret → tampered', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    writeFileSync(join(configDir(box()), 'confirm.secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 })
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'tampered')
  })

  it('a token minted for another profile → other_account', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'], { TASKS_PROFILE: 'staging' })
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'other_account')
  })
})

describe('the confirm secret', () => {
  it('is 0600 in a 0700 dir after first use', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await dryRun(box(), ['edit', '1', '--status', 'done'])
    expect(statSync(join(configDir(box()), 'confirm.secret')).mode & 0o777).toBe(0o600)
    expect(statSync(configDir(box())).mode & 0o777).toBe(0o700)
  })

  it('a secret readable by others is refused with a fix, never rotated', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await dryRun(box(), ['edit', '1', '--status', 'done'])
    const path = join(configDir(box()), 'confirm.secret')
    const secret = readFileSync(path, 'utf8')
    chmodSync(path, 0o644)
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'])
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({ code: 'E_CONFIG', details: { path, fix: `chmod 600 ${path}` } })
    expect(readFileSync(path, 'utf8')).toBe(secret)
  })

  it('a corrupt secret is E_IO with a fix', async () => {
    mkdirSync(configDir(box()), { recursive: true, mode: 0o700 })
    writeFileSync(join(configDir(box()), 'confirm.secret'), 'not hex', { mode: 0o600 })
    const run = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(run.code).toBe(1)
    expect(env(run).error.code).toBe('E_IO')
    expect(env(run).error.details.fix).toContain('remove')
  })

  it('can be injected through TASKS_CONFIRM_SECRET, to dry-run on one machine and confirm on another', async () => {
    const shared = '65208b5b8a97412d76fcc147a7b10f158c1dc05a34c3599d1e2f370a5a61351f'
    const token = await dryRun(box(), ['create', '--title', 'x'], { TASKS_CONFIRM_SECRET: shared })
    expectRefused(await tasks(box(), ['create', '--title', 'x', '--confirm', token]), 'tampered')
    const run = await tasks(box(), ['create', '--title', 'x', '--confirm', token], {
      env: { TASKS_CONFIRM_SECRET: shared },
    })
    expect(run.code).toBe(0)
  })

  it('a consumed-token ledger replaced by a file fails closed: E_IO, nothing applied, the token still good', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const ledger = join(box().env.XDG_DATA_HOME!, 'tasks', 'confirm-ledger')
    writeFileSync(ledger, 'not a directory')
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const before = storeBytes(box())
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(run.code).toBe(1)
    expect(env(run).error).toMatchObject({
      code: 'E_IO',
      details: { path: ledger, fix: expect.stringContaining('remove') },
    })
    expect(storeBytes(box())).toBe(before)
    rmSync(ledger)
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])).code).toBe(0)
  })
})

describe('idempotency', () => {
  it('a retried confirm or create with the same key returns the recorded result without executing again', async () => {
    const token = await dryRun(box(), ['create', '--title', 'once', '--idempotency-key', 'k1'])
    const first = await tasks(box(), ['create', '--title', 'once', '--idempotency-key', 'k1', '--confirm', token])
    expect(first.code).toBe(0)
    const again = await tasks(box(), ['create', '--title', 'once', '--idempotency-key', 'k1', '--confirm', token])
    expect(again.code).toBe(0)
    expect(env(again).meta.replayed).toBe(true)
    expect(env(again).data).toEqual(env(first).data)
    const plain = await tasks(box(), ['create', '--title', 'once', '--request-id', 'k1'])
    expect(env(plain).data).toEqual(env(first).data)
    expect(env(await tasks(box(), ['list'])).data.count).toBe(1)
  })

  it('the same key with other arguments is E_CONFLICT', async () => {
    const token = await dryRun(box(), ['create', '--title', 'once', '--idempotency-key', 'k2'])
    await tasks(box(), ['create', '--title', 'once', '--idempotency-key', 'k2', '--confirm', token])
    const run = await tasks(box(), ['create', '--title', 'other', '--idempotency-key', 'k2', '--dry-run'])
    expectRefused(run, 'idempotency_key_reused')
  })
})

describe('batches', () => {
  it('one failed item fails the envelope with its code and lists every item', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ])
    const dry = await tasks(box(), ['delete', '1', '99', '2', '--dry-run'])
    expect(env(dry).data.preview.rejected).toEqual([
      { id: '99', error: { code: 'E_NOT_FOUND', message: 'task 99 not found' } },
    ])
    const run = await tasks(box(), ['delete', '1', '99', '2', '--confirm', env(dry).data.confirm_token])
    expect(run.code).toBe(3)
    expect(env(run).ok).toBe(false)
    expect(env(run).error.details).toMatchObject({
      partial: true,
      summary: { ok_count: 2, error_count: 1 },
      results: [
        { id: '1', ok: true, action: 'deleted' },
        { id: '2', ok: true, action: 'deleted' },
        { id: '99', ok: false, error: { code: 'E_NOT_FOUND' } },
      ],
    })
    expect(env(await tasks(box(), ['list'])).data.count).toBe(0)
  })

  it('all items succeeding is ok with results and summary', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ])
    const token = await dryRun(box(), ['delete', '1', '2'])
    const run = await tasks(box(), ['delete', '1', '2', '--confirm', token])
    expect(env(run).data).toEqual({
      results: [
        { id: '1', ok: true, action: 'deleted' },
        { id: '2', ok: true, action: 'deleted' },
      ],
      summary: { ok_count: 2, error_count: 0 },
    })
  })

  it('an approval covers exactly the previewed set: it does not carry over to a batch with other ids', async () => {
    const b = box()
    seed(
      b,
      ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `task ${id}` })),
    )
    const dataDir = join(b.env.XDG_DATA_HOME!, 'tasks')
    // More than three deletes need an approval (the example's policy); the operator names the approver.
    const approver = approverFor(configDir(b), dataDir)
    const held = async (ids: string[]) => {
      const data = env(await tasks(b, ['delete', ...ids, '--dry-run'])).data
      return { token: data.confirm_token as string, approval: data.approval as { request_id: string; request: string } }
    }
    const approved = await held(['1', '2', '3', '4'])
    await approver.approve(approved.approval.request)
    const changed = await held(['1', '2', '3', '5'])
    expect(changed.approval.request_id).not.toBe(approved.approval.request_id)
    const before = storeBytes(b)
    // The approved token on the changed set: the token is bound to its arguments.
    expectRefused(await tasks(b, ['delete', '1', '2', '3', '5', '--confirm', approved.token]), 'args_changed')
    // The changed set's own token: no approval for it, even with the approved set's signature filed under it.
    const [signature] = readdirSync(join(dataDir, 'approvals', approved.approval.request_id))
    const store = fileApprovalStore(dataDir)
    await store.add(
      changed.approval.request_id,
      readFileSync(join(dataDir, 'approvals', approved.approval.request_id, signature!), 'utf8'),
    )
    const run = await tasks(b, ['delete', '1', '2', '3', '5', '--confirm', changed.token])
    expect(run.code, run.stdout).toBe(9)
    expect(env(run).error).toMatchObject({
      code: 'E_HUMAN_REQUIRED',
      details: {
        reason: 'approval_required',
        request_id: changed.approval.request_id,
        summary: { targets: ['1', '2', '3', '5'] },
        approvals_valid: 0,
        not_counted: [{ index: 0, reason: 'bad_signature' }],
      },
    })
    expect(storeBytes(b)).toBe(before)
    // The approved set itself goes through, once: task 5 stays.
    expect((await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', approved.token])).code).toBe(0)
    expect(JSON.parse(storeBytes(b)).tasks.map((t: { id: string }) => t.id)).toEqual(['5'])
  })

  it('a batch where nothing exists fails its dry-run at once, minting no token', async () => {
    const run = await tasks(box(), ['delete', '7', '8', '--dry-run'])
    expect(run.code).toBe(3)
    expect(env(run).error.details.summary).toEqual({ ok_count: 0, error_count: 2 })
    expect((await tasks(box(), ['delete', '7', '8'])).code).toBe(5)
  })
})

describe('the audit log', () => {
  it('records dry-run, confirm and refusal with redacted args, never the token, even with --quiet', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await tasks(box(), ['edit', '1', '--status', 'done', '--quiet'])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token, '--quiet'])
    const lines = auditLines(box())
    expect(lines.map((l) => [l.mode, l.result_code, l.exit_code])).toEqual([
      ['refused', 'E_CONFIRMATION_REQUIRED', 5],
      ['dry_run', 'OK', 0],
      ['confirm', 'OK', 0],
    ])
    expect(lines[2]).toMatchObject({
      command: 'edit',
      args: ['1', '--status', 'done', '--confirm', '<token>', '--quiet'],
      token_id: expect.any(String),
    })
    expect(typeof lines[2]!.duration_ms).toBe('number')
    expect(readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')).not.toContain(token)
  })

  it('read commands write no audit record', async () => {
    await tasks(box(), ['list'])
    expect(auditLines(box())).toEqual([])
  })
})

describe('reference for writes', () => {
  it('marks writes and shows --dry-run then --confirm in their examples', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    for (const path of ['create', 'edit', 'delete']) {
      const c = ref.commands.find((x: { path: string }) => x.path === path)
      expect(c.type).toBe('write')
      expect(c.examples[0]).toContain('--dry-run')
      expect(c.examples[1]).toContain('--confirm')
      expect(c.errors).toEqual(
        expect.arrayContaining(['E_CONFIRMATION_REQUIRED', 'E_CONFLICT', 'E_CONFIG', 'E_IO', 'E_TIMEOUT']),
      )
    }
  })
})
