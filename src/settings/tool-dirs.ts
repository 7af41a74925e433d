import { builtin } from '../boot/builtin.js'
import { runEnv } from './run-env.js'
import { scopedEnv } from './scoped-env.js'

const { homedir, tmpdir } = builtin<typeof import('node:os')>('node:os')
const { join } = builtin<typeof import('node:path')>('node:path')

/** What a tool's directories follow from: its package.json's `oclif` section, the platform, the environment. */
export type DirsInput = {
  bin: string
  binAliases?: readonly string[] | undefined
  dirname: string
  platform: string
}

/** A tool's home, cache, config and data directories. */
export type ToolDirs = {
  /** The user's home directory. */
  home: string
  /** Where the tool caches (`<BIN>_CACHE_DIR`, else the platform's cache dir). */
  cacheDir: string
  /** Where the tool keeps its settings and secrets (`<BIN>_CONFIG_DIR`, else the platform's). */
  configDir: string
  /** Where the tool keeps its data, audit log and ledgers (`<BIN>_DATA_DIR`, else the platform's). */
  dataDir: string
}

/**
 * The tool's directories, computed here on every path: `<BIN>_CACHE_DIR`/`_CONFIG_DIR`/`_DATA_DIR` (and the same
 * for each bin alias; the prefix is `envPrefix`'s, the one the tool's settings use), else macOS's cache folder,
 * else `XDG_*_HOME`, else `%LOCALAPPDATA%` on Windows, else the home directory, as oclif's `Config` places them.
 * The entry sets them over what oclif computed, so a bin with `.` or `@` in its name reads one variable, not two.
 */
export function toolDirs(input: DirsInput, env: NodeJS.ProcessEnv = runEnv()): ToolDirs {
  const windows = input.platform === 'win32'
  const dirname = windows ? input.dirname.replace('/', '\\') : input.dirname
  const scoped = scopedEnv(input, env).scopedEnvVar
  const windowsHome = () => (env.HOMEDRIVE && env.HOMEPATH && join(env.HOMEDRIVE, env.HOMEPATH)) || env.USERPROFILE
  const home = env.HOME || (windows && windowsHome()) || homedir() || tmpdir()
  const dir = (category: 'cache' | 'config' | 'data') =>
    join(
      env[`XDG_${category.toUpperCase()}_HOME`] ||
        (windows && env.LOCALAPPDATA) ||
        join(home, category === 'data' ? '.local/share' : `.${category}`),
      dirname,
    )
  const macosCache = input.platform === 'darwin' ? join(home, 'Library', 'Caches', dirname) : undefined
  return {
    home,
    cacheDir: scoped('CACHE_DIR') || macosCache || dir('cache'),
    configDir: scoped('CONFIG_DIR') || dir('config'),
    dataDir: scoped('DATA_DIR') || dir('data'),
  }
}
