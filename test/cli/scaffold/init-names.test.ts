import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { envelopeViolations, runTool } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

const AGENTCLI_BIN = join(ROOT, 'bin/agentcli.js')

let dirs: string[] = []
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs = []
})
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-init-names-'))
  dirs.push(dir)
  return dir
}
type Failed = { ok: false; error: { code: string; details: Record<string, unknown> } }
const init = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  runTool(AGENTCLI_BIN, ['init', ...args], { cwd, env: { HOME: temp(), ...env } })

function expectRefusedName(run: Awaited<ReturnType<typeof init>>, param: string, got: string): void {
  expect(run.code, run.stdout + run.stderr).toBe(2)
  expect(envelopeViolations(run.stdout, run.code)).toEqual([])
  expect((run.json as Failed).error).toMatchObject({
    code: 'E_VALIDATION',
    details: { param, got, allowed: expect.stringContaining('lowercase letters, digits and single hyphens') },
  })
}

describe('agentcli init refuses a name it could not use, before writing anything', () => {
  it.each([
    'my_tool',
    'my.tool',
    'a..b',
    'node_modules',
    'favicon.ico',
    'MyTool',
    '.hidden',
    '_private',
    'http',
    'a--b',
    `t${'a'.repeat(214)}`,
  ])('as the directory name: %j', async (name) => {
    const cwd = temp()
    expectRefusedName(await init(cwd, [name]), 'dir', name)
    expect(readdirSync(cwd)).toEqual([])
  })

  it.each(['@scope/', '@/tool', '@Scope/tool', '@_scope/tool', '@a/b/c', 'scope/tool', '@scope/my_tool'])(
    'as --name: %j',
    async (name) => {
      const cwd = temp()
      expectRefusedName(await init(cwd, ['tool', '--name', name]), '--name', name)
      expect(readdirSync(cwd)).toEqual([])
    },
  )
})

describe('agentcli init leaves nothing behind when it fails half-way', () => {
  it('a failure after the files are written: no tool, no parents, no stage; the retry works', async () => {
    const cwd = temp()
    // A temp dir that is a file: the skill cannot be rendered, after every other file was written.
    const notADir = join(temp(), 'file')
    writeFileSync(notADir, '')
    const broken = { TMPDIR: notADir }
    const failed = await init(cwd, [join('tools', 'mytool')], broken)
    expect(failed.code, failed.stdout).toBe(1)
    expect((failed.json as Failed).error).toMatchObject({
      code: 'E_IO',
      details: { path: join(cwd, 'tools', 'mytool'), fix: expect.any(String) },
    })
    expect(readdirSync(cwd)).toEqual([])
    const empty = join(cwd, 'empty')
    mkdirSync(empty)
    expect((await init(empty, ['.'], broken)).code).toBe(1)
    expect(readdirSync(cwd)).toEqual(['empty'])
    expect(readdirSync(empty)).toEqual([])
    const retry = await init(cwd, [join('tools', 'mytool')])
    expect(retry.code, retry.stdout).toBe(0)
    expect(readdirSync(join(cwd, 'tools'))).toEqual(['mytool'])
    expect(readdirSync(join(cwd, 'tools', 'mytool'))).toContain('package.json')
  })
})
