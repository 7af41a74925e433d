// What agentcli-build --check-compat counts as a break (compatBreaks over the example's own reference) and the
// scaffolded CI that runs it. In-process (test/support/in-process.ts), moved from the spawn tier with every assertion
// kept; the agentcli-build runs stay in test/cli/contract/contract-compat.test.ts.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type ComparableReference, compatBreaks } from '../../../src/build/compat.js'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

const box = useSandbox()

type Ref = ComparableReference & { commands: Array<Record<string, unknown> & ComparableReference['commands'][number]> }

async function currentReference(): Promise<Ref> {
  return env(await tasks(box(), ['reference'])).data as Ref
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const cmd = (ref: Ref, path: string) => ref.commands.find((c) => c.path === path)!

describe('agentcli-build --check-compat <previous reference.json>', () => {
  it('the scaffolded CI runs it against the last release', () => {
    const ci = readFileSync(join(ROOT, 'templates/init/_github/workflows/ci.yml'), 'utf8')
    expect(ci).toContain('fetch-depth: 0')
    expect(ci).toContain('git describe --tags --abbrev=0')
    expect(ci).toMatch(/node bin\/run\.js reference --compact > "\$RUNNER_TEMP\/last-reference\.json"/)
    expect(ci).toContain('npx agentcli-build --check-compat "$RUNNER_TEMP/last-reference.json" .')
  })
})

describe('what counts as a break (compatBreaks)', () => {
  it('adding is never a break: a new command, optional flag, output field or error code', async () => {
    const now = await currentReference()
    const prev = clone(now)
    prev.commands = prev.commands.filter((c) => c.path !== 'show')
    cmd(prev, 'create').params = cmd(prev, 'create').params.filter((p) => p.name !== 'name')
    const ctx = cmd(prev, 'context').output_schema as { properties: Record<string, unknown>; required: string[] }
    delete ctx.properties.contract_version
    ctx.required = ctx.required.filter((k) => k !== 'contract_version')
    delete prev.error_codes.E_TIMEOUT
    expect(compatBreaks(prev, now)).toEqual([])
  })

  it('changing meaning is a break: flag type, newly required, default, enum value removed, command kind, field type', async () => {
    const now = await currentReference()
    const prev = clone(now)
    const list = cmd(prev, 'list')
    const limit = list.params.find((p) => p.name === 'limit')!
    limit.default = 50
    const status = list.params.find((p) => p.name === 'status')!
    status.options = [...status.options!, 'archived']
    cmd(prev, 'get').type = 'local'
    ;(cmd(prev, 'get').output_schema as { properties: { version: { type: string } } }).properties.version.type =
      'string'
    const title = cmd(prev, 'create').params.find((p) => p.name === 'title')!
    title.type = 'integer'
    const next = clone(now)
    cmd(next, 'get').params[0]!.required = true
    cmd(next, 'list').params.push({ ...clone(limit), name: 'owner', required: true })
    expect(compatBreaks(prev, next).map((b) => `${b.kind} ${b.subject}: ${b.change}`)).toEqual(
      expect.arrayContaining([
        'flag list --limit: default 50 → 20',
        'flag list --status: values removed: archived',
        'flag list --owner: added as required',
        'command get: type local → read',
        'output_field get version: type string → integer',
        'flag create --title: type integer → string',
      ]),
    )
  })

  it("a command's schema_version major bump allows its breaks; a top-level major bump allows all", async () => {
    const now = await currentReference()
    const prev = clone(now)
    const getSchema = cmd(prev, 'get').output_schema as { properties: Record<string, unknown> }
    getSchema.properties.owner = { type: 'string' }
    prev.commands.push({ ...clone(cmd(now, 'list')), path: 'gone' })
    expect(compatBreaks(prev, now).map((b) => b.subject)).toEqual(['get owner', 'gone'])
    cmd(prev, 'get').schema_version = '0.3'
    expect(compatBreaks(prev, now).map((b) => b.subject)).toEqual(['gone'])
    expect(compatBreaks({ ...prev, schema_version: '0.9' }, now)).toEqual([])
  })

  it('removing what was deprecated is allowed once the announced version is reached, not before', async () => {
    const now = await currentReference()
    const prev = clone(now)
    prev.commands.push({
      ...clone(cmd(now, 'show')),
      path: 'older',
      deprecated: { message: 'x', replaced_by: 'get', removed_in: '0.1.0' },
    })
    prev.commands.push({
      ...clone(cmd(now, 'show')),
      path: 'later',
      deprecated: { message: 'x', replaced_by: 'get', removed_in: '1.0.0' },
    })
    const ctx = cmd(prev, 'context').output_schema as { properties: Record<string, unknown> }
    ctx.properties.profile = { type: 'string' }
    prev.commands.find((c) => c.path === 'context')!.deprecated_fields = [
      { path: 'profile', message: 'x', replaced_by: 'env', removed_in: '2.0' },
    ]
    // The tool is 0.1.0: `older` is due, `later` is not; a field goes only with its schema's major (2.0).
    expect(compatBreaks(prev, now).map((b) => `${b.subject}: ${b.change}`)).toEqual([
      'context profile: removed',
      'later: removed',
    ])
  })

  it('an error code whose exit changed is a break', async () => {
    const now = await currentReference()
    const prev = clone(now)
    prev.error_codes.E_CONFLICT = { ...prev.error_codes.E_CONFLICT!, exit: 9 }
    expect(compatBreaks(prev, now)).toEqual([{ kind: 'error_code', subject: 'E_CONFLICT', change: 'exit 9 → 6' }])
  })
})
