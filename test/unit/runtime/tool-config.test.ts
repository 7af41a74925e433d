import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { oclifConfig, type ToolPjson, toolConfig } from '../../../src/runtime/tool-config.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-tool-config-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const FIELDS = [
  'root',
  'name',
  'version',
  'bin',
  'dirname',
  'platform',
  'arch',
  'windows',
  'userAgent',
  'home',
  'cacheDir',
  'configDir',
  'dataDir',
] as const

/** A tool root with this bin, and the package.json both configs are computed from. */
function tool(bin: string, binAliases?: string[]): { root: string; pjson: ToolPjson } {
  const root = mkdtempSync(join(work, 'tool-'))
  const pjson = {
    name: 'some-tool',
    version: '1.2.3',
    oclif: { bin, ...(binAliases ? { binAliases } : {}), commands: './commands' },
  }
  writeFileSync(join(root, 'package.json'), JSON.stringify(pjson))
  mkdirSync(join(root, 'commands'))
  return { root, pjson }
}

/** Ours and oclif's, in one environment (oclif reads only process.env). */
async function both(bin: string, env: Record<string, string>, binAliases?: string[]) {
  const saved = process.env
  process.env = { PATH: saved.PATH, ...env }
  try {
    const { root, pjson } = tool(bin, binAliases)
    const ours = toolConfig(root, pjson)
    const theirs = await oclifConfig(ours)
    const pick = (c: object) => Object.fromEntries(FIELDS.map((f) => [f, (c as Record<string, unknown>)[f]]))
    return { ours, theirs, picked: { ours: pick(ours), theirs: pick(theirs) } }
  } finally {
    process.env = saved
  }
}

describe('the tool config: one computation, whether or not oclif’s Config is loaded', () => {
  it('matches oclif’s Config field for field, without XDG variables, for bins with `.`, `@` and `-`', async () => {
    for (const bin of ['tasks', 'my-tool', '@acme/tool', 'my.tool', 'a.b-c@d']) {
      const { picked, ours, theirs } = await both(bin, { HOME: join(work, 'home') })
      expect(picked.ours, bin).toEqual(picked.theirs)
      expect(ours.configDir, bin).toBe(join(work, 'home', '.config', 'some-tool'))
      // The `<BIN>_<KEY>` readers are the same function on both.
      expect(ours.scopedEnvVarKey('DATA_DIR'), bin).toBe(theirs.scopedEnvVarKey('DATA_DIR'))
      expect(ours.scopedEnvVarKeys('DATA_DIR'), bin).toEqual(theirs.scopedEnvVarKeys('DATA_DIR'))
    }
  })

  it('reads `<BIN>_DATA_DIR` and a bin alias’s variable the same way on both', async () => {
    const dotted = await both('my.tool', { HOME: work, MY_TOOL_DATA_DIR: '/d' })
    expect([dotted.ours.dataDir, dotted.theirs.dataDir]).toEqual(['/d', '/d'])
    const alias = await both('tasks', { HOME: work, TK_CACHE_DIR: '/alias' }, ['tk'])
    expect([alias.ours.cacheDir, alias.theirs.cacheDir]).toEqual(['/alias', '/alias'])
  })

  it('loads oclif’s Config once, on first ask, and hands back one that is oclif’s already as it is', async () => {
    const { root, pjson } = tool('tasks')
    const ours = toolConfig(root, pjson)
    const first = await oclifConfig(ours)
    expect(await oclifConfig(ours)).toBe(first)
    expect(await oclifConfig(first)).toBe(first)
    expect(typeof first.findCommand).toBe('function')
    expect('findCommand' in ours).toBe(false)
  })
})
