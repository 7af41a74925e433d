import { runEnv } from './run-env.js'
import { toolEnv } from './tool-env.js'

/** oclif's `scopedEnvVar…` methods of a Config (what oclif and a command read of `<BIN>_<KEY>`). */
export type ScopedEnv = {
  /** The value of `<BIN>_<KEY>` (the first set among the bin and its aliases), if any. */
  scopedEnvVar(key: string): string | undefined
  /** The name of the variable for a key: `<BIN>_<KEY>`. */
  scopedEnvVarKey(key: string): string
  /** The names of the variable for a key under the bin and each alias. */
  scopedEnvVarKeys(key: string): string[]
  /** Whether `<BIN>_<KEY>` is `true` or `1`. */
  scopedEnvVarTrue(key: string): boolean
}

/**
 * The `scopedEnvVar…` methods with the settings' one prefix (`envPrefix`, through `toolEnv`) for the bin and each
 * bin alias. The session sets them over oclif's own, so `<BIN>_<KEY>` is spelled one way on every path and by
 * every reader (oclif's rule kept `.` in the name, which no shell can set). `env` defaults to the run's live
 * environment ({@link runEnv}: `process.env` unless the run was given its own), read at each call as oclif reads it.
 */
export function scopedEnv(input: { bin: string; binAliases?: readonly string[] | undefined }, env?: NodeJS.ProcessEnv) {
  const bins = [input.bin, ...(input.binAliases ?? [])].filter(Boolean)
  const keys = (key: string) => bins.map((bin) => toolEnv(bin).name(key))
  const value = (key: string) => {
    const vars = env ?? runEnv()
    const found = keys(key).find((name) => vars[name])
    return found === undefined ? undefined : vars[found]
  }
  return {
    scopedEnvVar: value,
    scopedEnvVarKey: (key: string) => toolEnv(input.bin).name(key),
    scopedEnvVarKeys: keys,
    scopedEnvVarTrue: (key: string) => ['1', 'true'].includes(value(key) ?? ''),
  } satisfies ScopedEnv
}
