// Confirm tokens bind the account, the tool and the state; idempotency is per principal. In-process
// (test/support/in-process.ts), moved from the spawn tier with every assertion kept; what needs a process of its own
// (a shifted clock preload, a hook reading process.env, another OS user, concurrent processes, a job worker, a lock
// held in real time) stays in test/cli/write/write-trust.test.ts.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { mintToken } from '../../../src/confirm/token.js'
import { env, ROOT, seed, storeBytes, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, tasksInProcess as tasks } from '../../support/in-process.js'

const box = useSandbox()
// An injected secret must look random (a patterned one is refused, docs/fleet.md).
const SHARED = '3c8185dfc330c3fe243b4263dbc3ce1711b5ba866d70d4b8ee1c61b287321a75'

async function dryRun(b: Sandbox, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const run = await tasks(b, [...args, '--dry-run'], { env: extraEnv })
  expect(run.code, run.stdout + run.stderr).toBe(0)
  return env(run).data.confirm_token as string
}

function expectRefused(run: ToolRun, reason: string): void {
  expect(run.code, run.stdout + run.stderr).toBe(6)
  expect(env(run).error).toMatchObject({ code: 'E_CONFLICT', retryable: false, details: { reason } })
  // The next step, as SKILL.md promises: the same call's dry-run, without the token.
  const next = env(run).error.details.dry_run_command as string
  expect(next).toMatch(/ --dry-run$/)
  expect(next).not.toMatch(/--confirm|ct_/)
}

function dataDir(b: Sandbox): string {
  return join(b.env.XDG_DATA_HOME!, 'tasks')
}

function configDir(b: Sandbox): string {
  return join(b.env.XDG_CONFIG_HOME!, 'tasks')
}

function auditLines(b: Sandbox): Array<Record<string, unknown>> {
  const path = join(dataDir(b), 'audit.jsonl')
  if (!existsSync(path)) return []
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
}

/** A stored login, as `login resume` leaves it (the session names the account and its scopes). */
function storedLogin(b: Sandbox, account: string, scopes: string[]): void {
  mkdirSync(configDir(b), { recursive: true, mode: 0o700 })
  writeFileSync(join(configDir(b), 'session.json'), JSON.stringify({ account, scopes }), { mode: 0o600 })
}

describe('a token binds the acting account and its permission context', () => {
  it('an injected account (TASKS_TOKEN/TASKS_ACCOUNT) cannot confirm as another, nor with another token', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const ann = { TASKS_TOKEN: 'tok-ann-1', TASKS_ACCOUNT: 'ann' }
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'], ann)
    const before = storeBytes(box())
    for (const other of [
      { TASKS_TOKEN: 'tok-bob-1', TASKS_ACCOUNT: 'bob' },
      { TASKS_TOKEN: 'tok-ann-1', TASKS_ACCOUNT: 'bob' },
      { TASKS_TOKEN: 'tok-other', TASKS_ACCOUNT: 'ann' },
      {},
    ]) {
      expectRefused(
        await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token], { env: other }),
        'other_account',
      )
    }
    expect(storeBytes(box())).toBe(before)
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token], { env: ann })
    expect(run.code, run.stdout).toBe(0)
    const lines = auditLines(box())
    expect(lines.at(-1)).toMatchObject({ mode: 'confirm', account: 'ann', exit_code: 0 })
    expect(lines.filter((l) => l.mode === 'refused').map((l) => l.account)).toEqual(['bob', 'bob', 'ann', null])
  })

  it('a stored login: another account, or the same account with other scopes, is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    storedLogin(box(), 'ann', ['tasks:read'])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    storedLogin(box(), 'bob', ['tasks:read'])
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'other_account')
    storedLogin(box(), 'ann', ['tasks:read', 'tasks:admin'])
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'other_account')
    storedLogin(box(), 'ann', ['tasks:read'])
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(run.code, run.stdout).toBe(0)
    expect(auditLines(box()).map((l) => [l.mode, l.account])).toEqual([
      ['dry_run', 'ann'],
      ['refused', 'bob'],
      ['refused', 'ann'],
      ['confirm', 'ann'],
    ])
  })
})

describe('a token has one spelling, and cannot come from the future', () => {
  it('the spellings of the last MAC character that decode to the same bytes are all refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const base = alphabet.indexOf(token.at(-1)!) & ~3
    const siblings = [0, 1, 2, 3].map((i) => token.slice(0, -1) + alphabet[base + i]).filter((t) => t !== token)
    expect(siblings).toHaveLength(3)
    const before = storeBytes(box())
    for (const sibling of siblings)
      expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', sibling]), 'tampered')
    expect(storeBytes(box())).toBe(before)
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])).code).toBe(0)
  })
})

describe('a token binds the tool', () => {
  it('with one secret shared by two tools, a token of one is refused by the other', async () => {
    const shared = { TASKS_CONFIRM_SECRET: SHARED, FIXTURE_CONFIRM_SECRET: SHARED }
    const token = await dryRun(box(), ['create', '--title', 'x'], shared)
    const foreign = await fixture(box(), ['create', '--title', 'x', '--confirm', token], { env: shared })
    expectRefused(foreign, 'other_tool')
    // The fixture's own token, same secret, same call: accepted (the refusal was the tool, nothing else).
    const own = await fixture(box(), ['create', '--title', 'x', '--dry-run'], { env: shared })
    const ok = await fixture(box(), ['create', '--title', 'x', '--confirm', env(own).data.confirm_token], {
      env: shared,
    })
    expect(ok.code, ok.stdout).toBe(0)
    expectRefused(
      await tasks(box(), ['create', '--title', 'x', '--confirm', env(own).data.confirm_token], { env: shared }),
      'other_tool',
    )
    expect(env(await tasks(box(), ['list'], { env: shared })).data.count).toBe(0)
  })
})

describe('the check order leaks nothing', () => {
  it('a target deleted between dry-run and confirm is state drift (exit 6) naming it, not E_NOT_FOUND', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const del = await dryRun(box(), ['delete', '1'])
    expect((await tasks(box(), ['delete', '1', '--confirm', del])).code).toBe(0)
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expectRefused(run, 'state_drift')
    expect(env(run).error.details.drift).toEqual([{ id: '1', version_then: 1, version_now: null, gone: true }])
    expect(env(run).error.message).toContain('1')
  })

  it('a drifted version names the target with its versions then and now', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--title', 'mine'])
    const other = await dryRun(box(), ['edit', '1', '--status', 'done'])
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', other])).code).toBe(0)
    const run = await tasks(box(), ['edit', '1', '--title', 'mine', '--confirm', token])
    expectRefused(run, 'state_drift')
    expect(env(run).error.details.drift).toEqual([{ id: '1', version_then: 1, version_now: 2, gone: false }])
    // Run the dry_run_command as printed (the tool is on PATH here): a fresh preview and token for the same call.
    const next = (env(run).error.details.dry_run_command as string).split(' ')
    expect(next.slice(0, 5)).toEqual(['tasks', 'edit', '1', '--title', 'mine'])
    const again = await tasks(box(), next.slice(1))
    expect(env(again).data.confirm_token).toMatch(/^ct_3\./)
  })
})

describe('no environment variable moves the clock', () => {
  it('the shipped code carries no clock override', () => {
    for (const file of ['dist/write-command.js', 'dist/write/plan.js', 'examples/tasks/dist/bundle.cjs'])
      expect(readFileSync(join(ROOT, file), 'utf8')).not.toContain('AGENTCLI_NOW')
  })
})

describe('the single-use ledger fails closed', () => {
  it('a deleted ledger is recreated and still single-use', async () => {
    const token = await dryRun(box(), ['create', '--title', 'x'])
    rmSync(join(dataDir(box()), 'confirm-ledger'), { recursive: true, force: true })
    expect((await tasks(box(), ['create', '--title', 'x', '--confirm', token])).code).toBe(0)
    expectRefused(await tasks(box(), ['create', '--title', 'x', '--confirm', token]), 'already_used')
  })
})

describe('the confirm secret in a directory others can write', () => {
  it('is refused with E_CONFIG and the fix, a group-writable one too', async () => {
    await dryRun(box(), ['create', '--title', 'x'])
    chmodSync(configDir(box()), 0o777)
    const run = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      details: { path: configDir(box()), mode: '777', fix: expect.stringMatching(/^chmod (700|go-w) /) },
    })
    chmodSync(configDir(box()), 0o770)
    const group = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(group.code).toBe(4)
    expect(env(group).error).toMatchObject({
      code: 'E_CONFIG',
      details: { path: configDir(box()), mode: '770', fix: expect.stringContaining(configDir(box())) },
    })
    chmodSync(configDir(box()), 0o700)
    expect((await tasks(box(), ['create', '--title', 'x', '--dry-run'])).code).toBe(0)
  })
})

describe('idempotency is per principal and not poisoned by a failure that changed nothing', () => {
  it("another account, another profile, no token or a forged token never get ann's recorded result", async () => {
    const ann = { TASKS_TOKEN: 'tok-ann', TASKS_ACCOUNT: 'ann' }
    const token = await dryRun(box(), ['create', '--title', 'once', '--idempotency-key', 'k1'], ann)
    const first = await tasks(box(), ['create', '--title', 'once', '--idempotency-key', 'k1', '--confirm', token], {
      env: ann,
    })
    expect(first.code).toBe(0)
    const bare = ['create', '--title', 'once', '--idempotency-key', 'k1']
    for (const other of [{ TASKS_TOKEN: 'tok-bob', TASKS_ACCOUNT: 'bob' }, { ...ann, TASKS_PROFILE: 'prod' }, {}]) {
      const run = await tasks(box(), bare, { env: other })
      expect(run.code, run.stdout).toBe(5)
      expect(env(run).meta.replayed).toBeUndefined()
    }
    expectRefused(await tasks(box(), [...bare, '--confirm', 'ct_forged'], { env: ann }), 'tampered')
    const bob = { TASKS_TOKEN: 'tok-bob', TASKS_ACCOUNT: 'bob' }
    expectRefused(await tasks(box(), [...bare, '--confirm', token], { env: bob }), 'other_account')
    // Ann herself gets the replay, and the audit log says it was one.
    const replay = await tasks(box(), bare, { env: ann })
    expect(replay.code).toBe(0)
    expect(env(replay).meta.replayed).toBe(true)
    expect(env(replay).data).toEqual(env(first).data)
    expect(auditLines(box()).at(-1)).toMatchObject({ mode: 'replay', account: 'ann', result_code: 'OK' })
    expect(env(await tasks(box(), ['list'])).data.count).toBe(1)
  })

  it('a store error before any write leaves the key and the token usable', async () => {
    const token = await dryRun(box(), ['create', '--title', 't', '--idempotency-key', 'k2'])
    const idem = join(dataDir(box()), 'idempotency')
    writeFileSync(idem, 'not a directory')
    const args = ['create', '--title', 't', '--idempotency-key', 'k2', '--confirm', token]
    const failed = await tasks(box(), args)
    expect(failed.code).toBe(1)
    expect(env(failed).error).toMatchObject({ code: 'E_IO', details: { fix: expect.any(String) } })
    rmSync(idem)
    const retry = await tasks(box(), args)
    expect(retry.code, retry.stdout).toBe(0)
    expect(env(retry).meta.replayed).toBeUndefined()
    expect(env(await tasks(box(), ['list'])).data.count).toBe(1)
  })
})

describe('a token binding without the secret', () => {
  it('a token minted with a guessed secret for the exact binding is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await dryRun(box(), ['edit', '1', '--status', 'done'])
    const { token } = mintToken(
      Buffer.alloc(32, 7),
      {
        tool: 'tasks\0tasks-example',
        command: 'edit',
        args: { id: '1', status: 'done' },
        principal: { account: null, scopes: null, profile: 'default', os_user: 'root', credential: null },
      },
      [{ id: '1', version: 1 }],
      Date.now(),
      600_000,
    )
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'tampered')
  })
})
