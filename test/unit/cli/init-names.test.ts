import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { envelopeViolations } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { checkEngine } from '../../../src/cli/init/framework-spec.js'
import { toolNames } from '../../../src/cli/init/package-json.js'
import { writeStaged } from '../../../src/cli/init/stage.js'
import type { AgentError } from '../../../src/errors/agent-error.js'
import { ROOT } from '../../support/helpers.js'
import { runInProcess } from '../../support/in-process.js'

const dirs: string[] = []
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'init-unit-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('toolNames', () => {
  it('accepts what npm publishes and the templates can use, the bin being the unscoped part', () => {
    expect(toolNames('mytool')).toEqual({ name: 'mytool', bin: 'mytool' })
    expect(toolNames('my-tool2')).toEqual({ name: 'my-tool2', bin: 'my-tool2' })
    expect(toolNames('@acme/weather')).toEqual({ name: '@acme/weather', bin: 'weather' })
    expect(toolNames('@a.b-c_d/x')).toEqual({ name: '@a.b-c_d/x', bin: 'x' })
    expect(toolNames('@acme/http')?.bin).toBe('http')
    expect(toolNames(`t${'a'.repeat(63)}`)?.bin).toHaveLength(64)
  })

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
    'fs',
    '1tool',
    '-tool',
    'tool-',
    'a--b',
    'my tool',
    '',
    `t${'a'.repeat(64)}`,
    `@${'s'.repeat(200)}/${'a'.repeat(20)}`,
    '@scope/',
    '@/tool',
    '@Scope/tool',
    '@.scope/tool',
    '@_scope/tool',
    '@a/b/c',
    'scope/tool',
    '@scope',
    '@scope/my_tool',
  ])('refuses %j', (name) => {
    expect(toolNames(name)).toBeUndefined()
  })
})

describe('writeStaged', () => {
  const fill = async (stage: string) => {
    mkdirSync(join(stage, 'src'))
    writeFileSync(join(stage, 'src', 'a.ts'), 'a')
    writeFileSync(join(stage, 'package.json'), '{}')
  }
  const failing = async (stage: string) => {
    await fill(stage)
    throw new Error('half-way')
  }

  it('makes a new directory (and its parents) with the files, leaving no stage next to it', async () => {
    const root = temp()
    const dir = join(root, 'deep', 'tool')
    await writeStaged(dir, fill)
    expect(readdirSync(dir).sort()).toEqual(['package.json', 'src'])
    expect(readdirSync(join(root, 'deep'))).toEqual(['tool'])
    // The umask's mode, as a plain mkdir gives it, not mkdtemp's 0700.
    mkdirSync(join(root, 'plain'))
    expect(statSync(dir).mode & 0o777).toBe(statSync(join(root, 'plain')).mode & 0o777)
  })

  it('fills an existing empty directory in place (the same directory, e.g. the working one)', async () => {
    const dir = join(temp(), 'here')
    mkdirSync(dir)
    const ino = statSync(dir).ino
    await writeStaged(dir, fill)
    expect(statSync(dir).ino).toBe(ino)
    expect(readdirSync(dir).sort()).toEqual(['package.json', 'src'])
  })

  it('a failure half-way leaves nothing: no dir, no parents it made, no stage; an existing dir stays empty', async () => {
    const root = temp()
    await expect(writeStaged(join(root, 'new', 'deeper', 'tool'), failing)).rejects.toThrow('half-way')
    expect(readdirSync(root)).toEqual([])
    const dir = join(root, 'empty')
    mkdirSync(dir)
    await expect(writeStaged(dir, failing)).rejects.toThrow('half-way')
    expect(readdirSync(root)).toEqual(['empty'])
    expect(readdirSync(dir)).toEqual([])
    await writeStaged(dir, fill)
    expect(existsSync(join(dir, 'package.json'))).toBe(true)
  })
})

describe('checkEngine', () => {
  it('passes a supported Node.js and refuses an older one with E_CONFIG naming both', () => {
    const range = '^22.22.2 || ^24.15.0 || >=26'
    expect(() => checkEngine(range, '24.21.0')).not.toThrow()
    expect(() => checkEngine(range, '22.22.2')).not.toThrow()
    expect(() => checkEngine(undefined, '18.0.0')).not.toThrow()
    for (const old of ['20.20.2', '22.12.0', '24.1.0', '25.0.0']) {
      let error: AgentError | undefined
      try {
        checkEngine(range, old)
      } catch (e) {
        error = e as AgentError
      }
      expect(error?.code, old).toBe('E_CONFIG')
      expect(error?.details).toMatchObject({ reason: 'unsupported_node', got: `v${old}`, allowed: range })
    }
  })
})

type Failed = { ok: false; error: { code: string; details: Record<string, unknown> } }
const init = (args: string[]) => runInProcess(ROOT, ['init', ...args], { env: { HOME: temp() } })

function expectRefusedName(run: Awaited<ReturnType<typeof init>>, param: string, got: string): void {
  expect(run.code, run.stdout + run.stderr).toBe(2)
  expect(envelopeViolations(run.stdout, run.code)).toEqual([])
  expect((run.json as Failed).error).toMatchObject({
    code: 'E_VALIDATION',
    details: { param, got, allowed: expect.stringContaining('lowercase letters, digits and single hyphens') },
  })
}

// The whole command, in-process: what a half-way failure leaves is test/cli/scaffold/init.test.ts (its temp dir is
// the process's).
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
    expectRefusedName(await init([join(cwd, name)]), 'dir', name)
    expect(readdirSync(cwd)).toEqual([])
  })

  it.each(['@scope/', '@/tool', '@Scope/tool', '@_scope/tool', '@a/b/c', 'scope/tool', '@scope/my_tool'])(
    'as --name: %j',
    async (name) => {
      const cwd = temp()
      expectRefusedName(await init([join(cwd, 'tool'), '--name', name]), '--name', name)
      expect(readdirSync(cwd)).toEqual([])
    },
  )
})
