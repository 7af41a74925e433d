import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Config } from '@oclif/core'
import { afterAll, describe, expect, it } from 'vitest'
import { oclifConfig, toolConfig } from '../../../src/runtime/tool-config.js'
import { scopedEnv } from '../../../src/settings/scoped-env.js'
import { toolDirs } from '../../../src/settings/tool-dirs.js'
import { envPrefix, toolEnv } from '../../../src/settings/tool-env.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-dirs-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A tool root with this bin (and aliases), as oclif's `Config.load` reads it. */
function toolRoot(bin: string, binAliases?: string[]): string {
  const root = mkdtempSync(join(work, 'tool-'))
  const oclif = { bin, ...(binAliases ? { binAliases } : {}), commands: './commands' }
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'some-tool', version: '1.2.3', oclif }))
  mkdirSync(join(root, 'commands'))
  return root
}

/** oclif's directories and ours, for one environment (process.env swapped in for oclif, which reads no other). */
async function both(bin: string, env: Record<string, string>, binAliases?: string[]) {
  const saved = process.env
  process.env = { PATH: saved.PATH, ...env }
  try {
    const config = await Config.load({ root: toolRoot(bin, binAliases), userPlugins: false })
    const oclif = { home: config.home, cacheDir: config.cacheDir, configDir: config.configDir, dataDir: config.dataDir }
    return { oclif, ours: toolDirs(config, process.env), config }
  } finally {
    process.env = saved
  }
}

const BINS = ['tasks', 'my-tool', '@acme/tool', 'my.tool', 'a.b-c@d']

describe('the tool’s directories: one function on every path', () => {
  it('are where oclif’s Config puts them, without any XDG variable, whatever the bin is called', async () => {
    const home = join(work, 'home')
    for (const bin of BINS) {
      const { oclif, ours } = await both(bin, { HOME: home })
      expect(ours, bin).toEqual(oclif)
      expect(ours.configDir, bin).toBe(join(home, '.config', 'some-tool'))
      expect(ours.dataDir, bin).toBe(join(home, '.local/share', 'some-tool'))
    }
  })

  it('follow XDG variables as oclif does', async () => {
    const xdg = { HOME: join(work, 'h'), XDG_CONFIG_HOME: '/x/c', XDG_DATA_HOME: '/x/d', XDG_CACHE_HOME: '/x/k' }
    for (const bin of BINS) {
      const { oclif, ours } = await both(bin, xdg)
      expect(ours, bin).toEqual(oclif)
      expect(ours.cacheDir).toBe('/x/k/some-tool')
    }
  })

  it('read `<BIN>_CONFIG_DIR` with the prefix of the tool’s settings: oclif’s spelling wherever a shell can set it', async () => {
    for (const bin of ['tasks', 'my-tool', '@acme/tool']) {
      const key = `${envPrefix(bin)}CONFIG_DIR`
      const { oclif, ours } = await both(bin, { HOME: work, [key]: '/over/here' })
      expect([key, ours.configDir], bin).toEqual([key, '/over/here'])
      expect(ours, bin).toEqual(oclif)
    }
    expect(envPrefix('@acme/tool')).toBe('ACME_TOOL_')
    // oclif would read `MY.TOOL_DATA_DIR`, which no POSIX shell can export; the settings' spelling is the one read.
    const { ours } = await both('my.tool', { HOME: work, MY_TOOL_DATA_DIR: '/d' })
    expect([envPrefix('my.tool'), ours.dataDir]).toEqual(['MY_TOOL_', '/d'])
    expect(toolEnv('my.tool', { MY_TOOL_DATA_DIR: '/d' }).raw('DATA_DIR')).toBe('/d')
  })

  it('honour a bin alias’s variable, as oclif does', async () => {
    const { oclif, ours } = await both('tasks', { HOME: work, TK_CACHE_DIR: '/alias/cache' }, ['tk'])
    expect(ours.cacheDir).toBe('/alias/cache')
    expect(ours).toEqual(oclif)
  })

  it('on macOS and Windows, as oclif places them', () => {
    const input = { bin: 'tasks', dirname: 'tasks' }
    const mac = toolDirs({ ...input, platform: 'darwin' }, { HOME: '/Users/u' })
    expect(mac.cacheDir).toBe('/Users/u/Library/Caches/tasks')
    expect(mac.configDir).toBe('/Users/u/.config/tasks')
    const win = toolDirs({ ...input, platform: 'win32' }, { USERPROFILE: '/p', LOCALAPPDATA: '/l' })
    expect([win.home, win.dataDir]).toEqual(['/p', join('/l', 'tasks')])
  })

  it('`scopedEnvVar…`: oclif’s names for `-` and `@` bins (and aliases), the settings’ prefix for a `.` bin', async () => {
    for (const bin of ['tasks', 'my-tool', '@acme/tool']) {
      const { config } = await both(bin, { HOME: work }, ['tk'])
      const ours = scopedEnv(config, { TK_DEBUG: 'true' })
      expect(ours.scopedEnvVarKeys('DEBUG'), bin).toEqual(config.scopedEnvVarKeys('DEBUG'))
      expect(ours.scopedEnvVarKey('DEBUG'), bin).toBe(config.scopedEnvVarKey('DEBUG'))
      expect([ours.scopedEnvVar('DEBUG'), ours.scopedEnvVarTrue('DEBUG')]).toEqual(['true', true])
    }
    const dotted = scopedEnv({ bin: 'my.tool' }, { MY_TOOL_DEBUG: '1' })
    expect([dotted.scopedEnvVarKey('DEBUG'), dotted.scopedEnvVarTrue('DEBUG')]).toEqual(['MY_TOOL_DEBUG', true])
  })

  it('oclif’s own load reads a `.` bin’s settings with that prefix too: BINPATH, NPM_REGISTRY, theme.json', async () => {
    const root = toolRoot('my.tool')
    const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    const configDir = mkdtempSync(join(work, 'config-'))
    writeFileSync(join(configDir, 'theme.json'), JSON.stringify({ command: 'red' }))
    const env = {
      HOME: work,
      MY_TOOL_BINPATH: '/opt/my.tool/bin/run',
      MY_TOOL_NPM_REGISTRY: 'https://registry.example',
      MY_TOOL_CONFIG_DIR: configDir,
    }
    const saved = process.env
    process.env = { PATH: saved.PATH, ...env }
    try {
      const config = await oclifConfig(toolConfig(root, pjson))
      // Read while oclif loads (before, under `MY.TOOL_…`, a name no shell sets): not only once it has loaded.
      expect([config.binPath, config.npmRegistry, config.configDir]).toEqual([
        '/opt/my.tool/bin/run',
        'https://registry.example',
        configDir,
      ])
      expect(config.theme?.command).toBe('red')
    } finally {
      process.env = saved
    }
  })
})
