import { existsSync, readFileSync, statSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { constants, Script } from 'node:vm'
import type { RunOptions } from '../entry.js'
import { cacheFileName, codeCacheDir, readCodeCache, writeCodeCache } from './code-cache.js'

/** Where `agentcli-build` writes a tool's bundle, relative to the tool's root. */
export const BUNDLE_FILE = 'dist/bundle.cjs'

type BundleExports = { run(root: string, options: RunOptions): Promise<never> }

/**
 * The whole of a tool's `bin/run.js`: start from the bundle when the tool has one (one file holding the tool,
 * agentcli and oclif, with a V8 code cache of everything the first run compiled), else from the tool's modules.
 * `AGENTCLI_NO_BUNDLE=1` forces the modules, for stack traces that name source files.
 */
export async function start(root: string | URL, options: RunOptions = {}): Promise<never> {
  const dir = typeof root === 'string' && !root.startsWith('file:') ? root : fileURLToPath(root)
  const bundle = join(dir, BUNDLE_FILE)
  const loaded = process.env.AGENTCLI_NO_BUNDLE === '1' || !existsSync(bundle) ? undefined : loadBundle(bundle)
  if (loaded) return loaded.run(dir, { ...options, bundle })
  const { run } = await import('../entry.js')
  return run(dir, options)
}

/**
 * Compile and run the bundle as a CommonJS module registered under its own path (oclif's explicit command
 * strategy then `require`s this very instance for its commands). Node's own compile cache stores code compiled
 * before the first line runs, which for a bundle is little more than its outer function; the cache written here
 * is taken when the process exits, so it holds every function the run compiled.
 */
export function loadBundle(file: string): BundleExports | undefined {
  // Dynamic import() from a vm script needs the main context's loader; without it, start from the modules.
  const loader = constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
  if (loader === undefined) return undefined
  const { size, mtimeMs } = statSync(file)
  const dir = codeCacheDir()
  const cacheFile = dir ? join(dir, cacheFileName(file, size, mtimeMs)) : undefined
  const cachedData = cacheFile ? readCodeCache(cacheFile) : undefined
  const source = readFileSync(file, 'utf8')
  dropLoaderWarning()
  const script = new Script(Module.wrap(source), { filename: file, cachedData, importModuleDynamically: loader })
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected === true))
    process.once('exit', () => writeCodeCache(cacheFile, script.createCachedData()))
  const module = new Module(file)
  module.filename = file
  module.loaded = true
  const require = createRequire(file)
  require.cache[file] = module
  script.runInThisContext()(module.exports, require, module, file, dirname(file))
  return module.exports as BundleExports
}

/**
 * Node flags the main-context loader as experimental on the first dynamic import; that notice is about how we
 * load the bundle, not about the user's command, so exactly that warning is dropped (stdout never sees it anyway).
 */
function dropLoaderWarning(): void {
  const emit = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return
    ;(emit as (...args: unknown[]) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
}
