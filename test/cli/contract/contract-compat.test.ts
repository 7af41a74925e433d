import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ComparableReference } from '../../../src/build/compat.js'
import { editJson, useToolCopy } from '../../support/copy.js'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'

/*
 * agentcli-build --check-compat run as a process against a copy of the example. What counts as a break, and the
 * scaffolded CI, run in-process: test/unit/contract/contract-compat.test.ts.
 */
const box = useSandbox()
const copy = useToolCopy()
const BUILD = join(ROOT, 'bin/agentcli-build.js')

type Ref = ComparableReference & { commands: Array<Record<string, unknown> & ComparableReference['commands'][number]> }

async function currentReference(): Promise<Ref> {
  return env(await tasksInProcess(box(), ['reference'])).data as Ref
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const cmd = (ref: Ref, path: string) => ref.commands.find((c) => c.path === path)!

/**
 * A copy of the example without its bundle: --check-compat compares what `reference` says, which the bundle does
 * not change, and a build without esbuild's bundle takes a quarter of the time.
 */
const unbundled = () =>
  copy('examples/tasks', (dir) =>
    editJson(join(dir, 'package.json'), (pjson) => {
      ;(pjson.agentcli as Record<string, unknown>).bundle = false
    }),
  )

describe('agentcli-build --check-compat <previous reference.json>', () => {
  it('passes against the reference it was built from, and fails naming each break of an older one', async () => {
    const ref = await currentReference()
    const same = join(box().root, 'same.json')
    // Saved as `tool reference` prints it: the whole envelope.
    writeFileSync(same, JSON.stringify({ ok: true, schema_version: '1.0', data: ref }))
    const prev = clone(ref)
    prev.commands.push({ ...clone(cmd(ref, 'get')), path: 'archive' })
    cmd(prev, 'list').params.push({ ...clone(cmd(ref, 'list').params[0]!), name: 'sort', kind: 'flag' })
    const getSchema = cmd(prev, 'get').output_schema as { properties: Record<string, unknown>; required: string[] }
    getSchema.properties.owner = { type: 'string' }
    getSchema.required.push('owner')
    prev.error_codes.E_GONE = { exit: 3, retryable: false }
    prev.error_codes.E_NOT_FOUND = { ...prev.error_codes.E_NOT_FOUND!, retryable: true }
    const older = join(box().root, 'older.json')
    writeFileSync(older, JSON.stringify(prev))

    const dir = unbundled()
    const ok = spawnSync(process.execPath, [BUILD, '--check-compat', same, dir], { encoding: 'utf8' })
    expect(ok.stderr).toContain(`compatible with ${same}`)
    expect(ok.status).toBe(0)

    const bad = spawnSync(process.execPath, [BUILD, '--check-compat', older, dir], { encoding: 'utf8' })
    expect(bad.status).toBe(1)
    for (const line of [
      'breaking: command archive: removed',
      'breaking: flag list --sort: removed',
      'breaking: output_field get owner: removed',
      'breaking: error_code E_GONE: removed',
      'breaking: error_code E_NOT_FOUND: retryable true → false',
    ])
      expect(bad.stderr).toContain(line)
    expect(bad.stderr).toContain('5 breaking change(s)')
  })

  it('a missing or unreadable previous reference is a failure, not a pass', () => {
    const dir = unbundled()
    const junk = join(box().root, 'junk.json')
    writeFileSync(junk, '{"ok":true,"data":{}}')
    const run = spawnSync(process.execPath, [BUILD, '--check-compat', junk, dir], { encoding: 'utf8' })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('not a reference document')
    expect(spawnSync(process.execPath, [BUILD, '--check-compat'], { encoding: 'utf8' }).status).toBe(2)
  })
})
