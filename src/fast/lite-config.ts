import { builtin } from '../boot/builtin.js'
import { scopedEnv } from '../settings/scoped-env.js'
import { toolDirs } from '../settings/tool-dirs.js'
import { notProvided } from './fallback.js'

const { arch } = builtin<typeof import('node:os')>('node:os')

type Pjson = { name?: string; version?: string; oclif?: Record<string, unknown> } & Record<string, unknown>

/** The part of oclif's `Config` a fast route may read: what {@link liteConfig} computes, as oclif computes it. */
export type LiteConfig = {
  root: string
  name: string
  version: string
  pjson: Pjson
  bin: string
  binAliases: string[] | undefined
  dirname: string
  platform: NodeJS.Platform
  arch: string
  windows: boolean
  home: string
  cacheDir: string
  configDir: string
  dataDir: string
  userAgent: string
  scopedEnvVar(key: string): string | undefined
  scopedEnvVarKey(key: string): string
  scopedEnvVarKeys(key: string): string[]
  scopedEnvVarTrue(key: string): boolean
  runHook(event: string, options: unknown): Promise<{ successes: unknown[]; failures: unknown[] }>
}

/** Keys read by language machinery (`await`, `JSON.stringify`, inspection), not by a command: never a fallback. */
const MACHINERY = new Set(['then', 'toJSON', 'constructor', 'inspect'])

/**
 * A config for a fast route, computed as oclif's `Config.load` computes these fields on Linux (the only platform
 * the route table is used on); the directories and `scopedEnvVar…` by `toolDirs` and `scopedEnv`, the functions
 * both paths use. Any other property of oclif's `Config` is not provided: reading it hands the run to oclif's
 * path, before anything was printed.
 */
export function liteConfig(root: string, pjson: Pjson): LiteConfig {
  const oclif = pjson.oclif ?? {}
  const name = String(pjson.name)
  const version = String(pjson.version || '0.0.0')
  const bin = String(oclif.bin || name)
  const binAliases = oclif.binAliases as string[] | undefined
  const dirname = String(oclif.dirname || name)
  const platform = process.platform
  const cpu = arch() === 'ia32' ? 'x86' : arch()
  const dirs = toolDirs({ bin, binAliases, dirname, platform })
  const config: LiteConfig = {
    root,
    name,
    version,
    pjson,
    bin,
    binAliases,
    dirname,
    platform,
    arch: cpu,
    windows: false,
    ...dirs,
    userAgent: `${name}/${version} ${platform}-${cpu} node-${process.version}`,
    ...scopedEnv({ bin, binAliases }),
    // The route table holds only tools without oclif hooks or plugins: every hook runs nothing.
    runHook: async () => ({ successes: [], failures: [] }),
  }
  return new Proxy(config, {
    get(target, key, receiver) {
      if (typeof key === 'symbol' || key in target || MACHINERY.has(key)) return Reflect.get(target, key, receiver)
      return notProvided(`config.${key}`)
    },
  })
}
