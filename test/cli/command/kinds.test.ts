import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, fixture, seed, tasks, useSandbox } from '../../support/helpers.js'

/*
 * Kinds where a process is needed: a hook reading process.env, `mcp` waiting on a stdin that only a child has
 * closed. The rest runs in-process: test/unit/command/kinds.test.ts.
 */
const box = useSandbox()

type Ref = { commands: Array<{ path: string; type: string }>; command_kinds: Record<string, string> }

/** Every file and directory under `dir` with a digest of its bytes: a changed, new or removed entry shows. */
function snapshot(dir: string, skip: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    if (!existsSync(d) || d === skip) return
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      if (path === skip) continue
      const stat = statSync(path)
      if (stat.isDirectory()) {
        out[`${path}/`] = 'dir'
        walk(path)
      } else out[path] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
  }
  walk(dir)
  return out
}

describe('audit of every non-read call', () => {
  it('a local call that never reached the command (a failing init hook) is audited with its outcome', async () => {
    const hook = await fixture(box(), ['job', 'cancel', '--id', 'nope'], { env: { FIXTURE_HOOK_THROW: '1' } })
    expect(env(hook).error.code).toBe('E_INTERNAL')
    const path = join(box().env.XDG_DATA_HOME!, 'agentcli-fixture', 'audit.jsonl')
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toEqual([
      expect.objectContaining({ command: 'job cancel', kind: 'local', result_code: 'E_INTERNAL' }),
    ])
  })
})

describe('read commands change nothing outside the cache dir', () => {
  it('every read command of the example, with and without state, leaves config and data dirs as they were', async () => {
    const b = box()
    seed(b, [{ id: '1', title: 'first' }])
    // Some state a read might be tempted to touch: a confirm secret, a ledger entry, an audit log, a login.
    const token = env(await tasks(b, ['create', '--title', 'x', '--dry-run'])).data.confirm_token
    expect((await tasks(b, ['create', '--title', 'x', '--confirm', token])).code).toBe(0)
    writeFileSync(join(b.env.XDG_CONFIG_HOME!, 'tasks', 'config.json'), '{"theme":"dark"}')
    const ref = env(await tasks(b, ['reference'])).data as Ref
    const reads = ref.commands.filter((c) => c.type === 'read').map((c) => c.path)
    const args: Record<string, string[]> = {
      get: ['get', '1'],
      'job status': ['job', 'status', '--id', 'job_0123456789abcdef0123'],
      'job result': ['job', 'result', '--id', 'job_0123456789abcdef0123'],
    }
    const cache = b.env.XDG_CACHE_HOME!
    for (const path of reads) {
      const before = snapshot(b.root, cache)
      const run = await tasks(b, args[path] ?? path.split(' '))
      if (path !== 'export') expect(envelopeViolations(run.stdout, run.code), path).toEqual([])
      expect(snapshot(b.root, cache), `${path} changed state`).toEqual(before)
    }
    expect(reads.length).toBeGreaterThanOrEqual(10)
  })
})
