import type { Config } from '@oclif/core'
import { builtin } from '../boot/builtin.js'
import { type ScopedEnv, scopedEnv } from '../settings/scoped-env.js'
import { type ToolDirs, toolDirs } from '../settings/tool-dirs.js'
import { describeTopics } from './topics.js'

const { arch } = builtin<typeof import('node:os')>('node:os')

/** A tool's package.json as the framework reads it. */
export type ToolPjson = { name?: string; version?: string; oclif?: Record<string, unknown> } & Record<string, unknown>

/**
 * What a command sees as `this.config`: the tool's identity, its directories and its `<BIN>_<KEY>` readers, all
 * computed by {@link toolConfig}. oclif's own `Config` (every command, topics, plugins, hooks) is loaded only by
 * what needs it, through {@link oclifConfig}.
 */
export type ToolConfig = ToolDirs &
  ScopedEnv & {
    /** The tool's root directory (where its package.json is). */
    root: string
    /** The package name. */
    name: string
    /** The package version. */
    version: string
    /** The tool's package.json. */
    pjson: ToolPjson
    /** The command name (`oclif.bin`, else the package name). */
    bin: string
    /** Other names the tool answers to (`oclif.binAliases`). */
    binAliases?: string[] | undefined
    /** The directory name of its config, data and cache dirs (`oclif.dirname`, else the package name). */
    dirname: string
    /** `process.platform`. */
    platform: string
    /** The CPU architecture (`x64`, `arm64`, `x86`). */
    arch: string
    /** Whether it runs on Windows. */
    windows: boolean
    /** `<name>/<version> <platform>-<arch> node-<version>`, for upstream requests. */
    userAgent: string
  }

const loaders = new WeakMap<object, () => Promise<Config>>()

/**
 * The tool's config, computed from its package.json as oclif's `Config.load` computes these fields; the
 * directories and the `scopedEnvVar…` readers by `toolDirs` and `scopedEnv`, which are also set over oclif's own
 * when oclif's `Config` is loaded ({@link oclifConfig}): one computation on every path.
 */
export function toolConfig(root: string, pjson: ToolPjson): ToolConfig {
  const oclif = pjson.oclif ?? {}
  const name = String(pjson.name)
  const version = String(pjson.version || '0.0.0')
  const bin = String(oclif.bin || name)
  const binAliases = oclif.binAliases as string[] | undefined
  const dirname = String(oclif.dirname || name)
  const platform: string = process.platform
  const cpu = arch() === 'ia32' ? 'x86' : arch()
  const readers = scopedEnv({ bin, binAliases })
  const config: ToolConfig = {
    root,
    name,
    version,
    pjson,
    bin,
    binAliases,
    dirname,
    platform,
    arch: cpu,
    windows: platform === 'win32',
    ...toolDirs({ bin, binAliases, dirname, platform }),
    userAgent: `${name}/${version} ${platform}-${cpu} node-${process.version}`,
    ...readers,
  }
  let loaded: Promise<Config> | undefined
  loaders.set(config, () => {
    loaded ??= loadOclifConfig(root, pjson, readers)
    return loaded
  })
  return config
}

/**
 * oclif's `Config` with the tool's env readers and directories set over its own: the same values as
 * {@link toolConfig}. The readers (the tool config's own) go on before `load()`, which reads DEBUG, DISABLE_THEME,
 * BINPATH, NPM_REGISTRY and the directories (theme.json in the config dir) through them: a bin whose name oclif
 * spells otherwise (`my.tool`) is read with the settings' prefix there too. The directories go on after it.
 */
async function loadOclifConfig(root: string, pjson: ToolPjson, readers: ScopedEnv): Promise<Config> {
  const { Config } = await import('@oclif/core/config')
  const config = new Config({ root, userPlugins: false, pjson: pjson as never })
  Object.assign(config, readers)
  await config.load()
  Object.assign(config, toolDirs(config))
  describeTopics(config)
  return config
}

/**
 * oclif's `Config` of this run, for what needs more than {@link ToolConfig}: every command (`reference`, the job
 * worker), topics, plugins, hooks. Loaded once, on first call; a config that is already oclif's is returned as is.
 */
export async function oclifConfig(config: ToolConfig | Config): Promise<Config> {
  const load = loaders.get(config)
  return load ? load() : (config as Config)
}
