import type { RunOptions } from '../runtime/entry.js'
import { builtin } from './builtin.js'
import {
  cacheFileName,
  cacheWord,
  codeCacheDir,
  moduleCompileCache,
  nextHeader,
  readCodeCache,
  runKey,
  WARM_CACHE_WORD,
  writeCodeCache,
} from './code-cache.js'
import { WARM_FLAG } from './warm.js'
import { readWrapped } from './wrapped-source.js'

// Built-ins through process.getBuiltinModule, as everywhere in the boot (./index.ts says why).
const { statSync } = builtin<typeof import('node:fs')>('node:fs')
const Module = builtin<typeof import('node:module')>('node:module')
const { dirname, join } = builtin<typeof import('node:path')>('node:path')
const { constants, Script } = builtin<typeof import('node:vm')>('node:vm')

/** What a tool's bundle exports: the entry's `run`. */
export type BundleExports = { run(root: string, options: RunOptions): Promise<number> }
/** The bundle file's size and modification time, which name its code cache. */
export type BundleStat = { size: number; mtimeMs: number }

/**
 * Compile and run the bundle as a CommonJS module registered under its own path (oclif's explicit command
 * strategy then `require`s this very instance for its commands). Node's own compile cache stores code compiled
 * before the first line runs, which for a bundle is little more than its outer function; the cache written here
 * is taken when the process exits, so it holds every function the run compiled (and those the cache it read gave).
 */
export function loadBundle(file: string, stat: BundleStat = statSync(file)): BundleExports | undefined {
  return compileBundle(file, stat, false)
}

/** {@link loadBundle}, or for a warm process (`warm`): one that does not know its command yet and writes nothing. */
export function compileBundle(file: string, stat: BundleStat, warm: boolean): BundleExports | undefined {
  // Dynamic import() from a vm script needs the main context's loader; without it, start from the modules.
  const loader = constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
  if (loader === undefined) return undefined
  const { size, mtimeMs } = stat
  // A warm process writes nothing until it is handed a call (its server may be removing the home it runs in): it
  // uses the cache directory its server's own start made, if there is one.
  const dir = codeCacheDir(process.env, !warm)
  // What the bundle loads later as modules (zod for `--fields` and schemas, the MCP SDK, …) is compiled once too.
  if (!warm) moduleCompileCache(dir)
  const argv = process.argv.slice(2)
  // The command's own cache; a command without one yet starts from the common cache (what every run compiles). A
  // warm process does not know its command yet: it has a cache of its own.
  const word = warm ? WARM_CACHE_WORD : cacheWord(argv)
  const cacheFile = dir ? join(dir, cacheFileName(file, size, mtimeMs, word)) : undefined
  const own = cacheFile ? readCodeCache(cacheFile) : undefined
  const common = dir ? join(dir, cacheFileName(file, size, mtimeMs)) : undefined
  const from = own?.data || !common || common === cacheFile ? own : readCodeCache(common)
  const source = readWrapped(file)
  dropLoaderWarning()
  const script = new Script(source, {
    filename: file,
    cachedData: from?.data,
    importModuleDynamically: loader,
  })
  // Rewritten when this run's command (or flags) may compile functions the cache lacks: the new cache holds
  // what the old one gave V8 and what this run added, so every command a user runs ends up covered.
  const rejected = from === own && script.cachedDataRejected === true
  const header = cacheFile && !warm ? nextHeader(own, rejected, runKey(argv)) : undefined
  if (cacheFile && header) process.once('exit', () => writeCodeCache(cacheFile, script.createCachedData(), header))
  // A warm process learns its argv later (src/boot/warm.ts sets it in process.argv); one that never ran a call
  // (its pool stopped it) compiled nothing worth keeping.
  if (cacheFile && warm)
    process.once('exit', () => {
      const ran = process.argv.slice(2)
      const late = ran[0] === WARM_FLAG ? undefined : nextHeader(own, rejected, runKey(ran))
      if (late) writeCodeCache(cacheFile, script.createCachedData(), late)
    })
  const module = new Module(file)
  module.filename = file
  module.loaded = true
  const require = Module.createRequire(file)
  require.cache[file] = module
  try {
    script.runInThisContext()(module.exports, require, module, file, dirname(file))
  } catch (error) {
    delete require.cache[file]
    throw error
  }
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
