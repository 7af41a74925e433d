import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, seed, storeBytes, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()

const secretPath = (b: Sandbox) => join(b.env.XDG_CONFIG_HOME!, 'tasks', 'confirm.secret')
const auditModes = (b: Sandbox) =>
  readFileSync(join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { mode: string }).mode)

describe('a write without --dry-run or --confirm is refused before any state is read', () => {
  it.each([
    ['edit 99 (no such task)', ['edit', '99', '--status', 'done'], 'tasks edit 99 --status done --dry-run'],
    ['delete 99 (no such task)', ['delete', '99'], 'tasks delete 99 --dry-run'],
    ['delete of ids that all exist', ['delete', '1', '2'], 'tasks delete 1 2 --dry-run'],
    ['sync with no API configured', ['sync'], 'tasks sync --dry-run'],
    ['update, with no release source reachable', ['update'], 'tasks update --dry-run'],
  ])('%s: E_CONFIRMATION_REQUIRED, exit 5, the dry-run to run, nothing read or written', async (_, args, next) => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ])
    const before = storeBytes(box())
    const run = await tasks(box(), args)
    expect(run.code, run.stdout).toBe(5)
    expect(env(run).error).toEqual({
      code: 'E_CONFIRMATION_REQUIRED',
      message: expect.stringContaining('run it with --dry-run first'),
      details: { dry_run_command: expect.stringMatching(new RegExp(`${next.split(' ').slice(1).join(' ')}$`)) },
      retryable: false,
    })
    expect(storeBytes(box())).toBe(before)
    // Nothing of the write machinery ran: no confirm secret was read or created; the refusal is audited.
    expect(existsSync(secretPath(box()))).toBe(false)
    expect(auditModes(box())).toEqual(['refused'])
  })

  it('the same calls with --dry-run answer what the state says (not found, no API configured)', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    expect((await tasks(box(), ['edit', '99', '--status', 'done', '--dry-run'])).code).toBe(3)
    expect((await tasks(box(), ['delete', '99', '--dry-run'])).code).toBe(3)
    expect(env(await tasks(box(), ['sync', '--dry-run'])).error.code).toBe('E_CONFIG')
  })

  it('a call that does not parse is E_USAGE first: the flags must parse before the flow can read them', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const unknown = await tasks(box(), ['edit', '99', '--status', 'done', '--bogus'])
    expect([unknown.code, env(unknown).error.code]).toEqual([2, 'E_USAGE'])
    const both = await tasks(box(), ['delete', '99', '--dry-run', '--confirm', 'ct_2.x.y'])
    expect([both.code, env(both).error.code]).toEqual([2, 'E_USAGE'])
    const badEnum = await tasks(box(), ['edit', '99', '--status', 'nope'])
    expect([badEnum.code, env(badEnum).error.code]).toEqual([2, 'E_VALIDATION'])
  })
})
