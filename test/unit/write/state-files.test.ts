import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { mintToken } from '../../../src/confirm/token.js'
import { CAN_SWITCH_USER, giveToNobody, NOBODY, tasksAsNobody } from '../../support/as-nobody.js'
import { env, seed, storeBytes, storePath, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()
const KNOWN = 'ab'.repeat(32)
const dataDir = (b: Sandbox) => join(b.env.XDG_DATA_HOME!, 'tasks')
const configDir = (b: Sandbox) => join(b.env.XDG_CONFIG_HOME!, 'tasks')

/** A file outside the tool's dirs, as an attacker would point a link at it. */
function outside(b: Sandbox, name: string, text: string): string {
  const path = join(b.root, name)
  writeFileSync(path, text, { mode: 0o600 })
  return path
}

function expectConfig(run: ToolRun, path: string): void {
  expect(run.code, run.stdout).toBe(4)
  expect(env(run).error).toMatchObject({ code: 'E_CONFIG', details: { path, fix: expect.any(String) } })
}

describe('state files are never followed through links', () => {
  it('a linked audit.jsonl: the write is refused before it happens and the target gets nothing', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const victim = outside(box(), 'victim', 'precious\n')
    symlinkSync(victim, join(dataDir(box()), 'audit.jsonl'))
    const before = storeBytes(box())
    const run = await tasks(box(), ['create', '--title', 'injected-line', '--dry-run'])
    expectConfig(run, join(dataDir(box()), 'audit.jsonl'))
    expect(run.stderr).toContain('audit.jsonl')
    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(storeBytes(box())).toBe(before)
  })

  it('a linked confirm.secret whose value is known: no token is minted with it, a forged one is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    mkdirSync(configDir(box()), { recursive: true, mode: 0o700 })
    symlinkSync(outside(box(), 'known.secret', `${KNOWN}\n`), join(configDir(box()), 'confirm.secret'))
    const secret = join(configDir(box()), 'confirm.secret')
    expectConfig(await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run']), secret)
    const { token } = mintToken(
      Buffer.from(KNOWN, 'hex'),
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
    const before = storeBytes(box())
    expectConfig(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), secret)
    expect(storeBytes(box())).toBe(before)
  })

  it('a linked data dir: nothing is read or written through it', async () => {
    const real = join(box().root, 'elsewhere')
    mkdirSync(real, { mode: 0o700 })
    writeFileSync(join(real, 'tasks.json'), '{"planted":true}', { mode: 0o600 })
    mkdirSync(box().env.XDG_DATA_HOME!, { recursive: true })
    symlinkSync(real, dataDir(box()))
    expectConfig(await tasks(box(), ['list']), dataDir(box()))
    expectConfig(await tasks(box(), ['create', '--title', 'x', '--dry-run']), dataDir(box()))
    expect(readdirSync(real)).toEqual(['tasks.json'])
    expect(readFileSync(join(real, 'tasks.json'), 'utf8')).toBe('{"planted":true}')
  })

  it('a linked store file is refused, its target untouched', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const target = outside(box(), 'store.json', readFileSync(storePath(box()), 'utf8'))
    renameSync(storePath(box()), `${storePath(box())}.moved`)
    symlinkSync(target, storePath(box()))
    const before = readFileSync(target, 'utf8')
    expectConfig(await tasks(box(), ['get', '1']), storePath(box()))
    expect(readFileSync(target, 'utf8')).toBe(before)
  })
})

describe.runIf(CAN_SWITCH_USER)('owners and modes, checked as an unprivileged user', () => {
  it('the ordinary flow works when everything is the user’s own', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    giveToNobody(box())
    const dry = await tasksAsNobody(box(), ['edit', '1', '--status', 'done', '--dry-run'])
    expect(dry.code, dry.stdout + dry.stderr).toBe(0)
    const token = env(dry).data.confirm_token as string
    const run = await tasksAsNobody(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(
      readFileSync(join(dataDir(box()), 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(2)
  })

  it('a confirm.secret another user owns is refused, even when its mode is 0600', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    mkdirSync(configDir(box()), { recursive: true, mode: 0o700 })
    const secret = join(configDir(box()), 'confirm.secret')
    writeFileSync(secret, `${KNOWN}\n`, { mode: 0o600 })
    giveToNobody(box())
    chownSync(secret, 0, 0)
    const run = await tasksAsNobody(box(), ['edit', '1', '--status', 'done', '--dry-run'])
    expect(run.code, run.stdout).toBe(4)
    expect(env(run).error).toMatchObject({ code: 'E_CONFIG', details: { path: secret, owner: '0' } })
  })

  it('a group-writable data dir is refused with the fix; after the fix the write goes through', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    giveToNobody(box())
    chmodSync(dataDir(box()), 0o770)
    const before = storeBytes(box())
    const run = await tasksAsNobody(box(), ['create', '--title', 'x', '--dry-run'])
    expect(run.code, run.stdout).toBe(4)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      details: { path: dataDir(box()), mode: '770', fix: `chmod go-w ${dataDir(box())}` },
    })
    expect(storeBytes(box())).toBe(before)
    chmodSync(dataDir(box()), 0o700)
    expect((await tasksAsNobody(box(), ['create', '--title', 'x', '--dry-run'])).code).toBe(0)
    expect(NOBODY.uid).not.toBe(process.getuid?.())
  })
})
