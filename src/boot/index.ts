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
import { holdSignals } from './early-signals.js'
import { FRAMEWORK_NODE_RANGE, inFrameworkRange, unmetEngines } from './engines.js'
import { rootPath } from './root-path.js'
import { applyCall, awaitCall, closeStdioAtExit, isWarmProcess, WARM_FLAG } from './warm.js'

// Built-ins come from process.getBuiltinModule, not `import`: the ES module facade of `node:fs` alone costs
// ≈ 2.5 ms (it reads every export, `fs.promises` included), a twentieth of a bundled start.
const { readFileSync, statSync } = builtin<typeof import('node:fs')>('node:fs')
const { isAscii } = builtin<typeof import('node:buffer')>('node:buffer')
const Module = builtin<typeof import('node:module')>('node:module')
const { dirname, join } = builtin<typeof import('node:path')>('node:path')
const { constants, Script } = builtin<typeof import('node:vm')>('node:vm')

/** Where `agentcli-build` writes a tool's bundle, relative to the tool's root. */
export const BUNDLE_FILE = 'dist/bundle.cjs'

type BundleExports = { run(root: string, options: RunOptions): Promise<never> }
type BundleStat = { size: number; mtimeMs: number }

/**
 * The whole of a tool's `bin/run.js`: start from the bundle when the tool has one (one file holding the tool,
 * agentcli and oclif, with a V8 code cache of what its runs compiled), else from the tool's modules.
 * `AGENTCLI_NO_BUNDLE=1` forces the modules, for stack traces that name source files.
 */
export async function start(root: string | URL, options: RunOptions = {}): Promise<never> {
  const held = holdSignals()
  // Before anything else is read or written: on a Node the tool does not support, the bundle (or a module) may
  // crash part-way, after state was touched. Answer one E_CONFIG envelope instead, from the modules. agentcli's
  // own range first, with no built-in module: an old Node may lack the very API this file loads them with.
  if (!inFrameworkRange(process.versions.node))
    return unsupportedNode(root, [FRAMEWORK_NODE_RANGE], { ...options, held })
  const dir = rootPath(root)
  const unmet = unmetEngines(toolNodeRange(dir))
  if (unmet.length > 0) return unsupportedNode(dir, unmet, { ...options, held })
  // A warm process for `tool mcp` (./warm.ts): its code loads now, its call comes later over the IPC channel.
  const warm = options.argv === undefined && isWarmProcess()
  const bundle = join(dir, BUNDLE_FILE)
  const stat = process.env.AGENTCLI_NO_BUNDLE === '1' ? undefined : statSync(bundle, { throwIfNoEntry: false })
  const loaded = stat ? tryBundle(bundle, stat, warm) : undefined
  let entry: BundleExports
  if (loaded) entry = loaded
  else {
    // From the modules, Node's own compile cache is what helps: some 200 files instead of one.
    moduleCompileCache(codeCacheDir(process.env))
    entry = await import('../runtime/entry.js')
  }
  if (warm) {
    const call = await awaitCall()
    // Stopped before it was handed a call (the pool closed, the parent died): nothing ran, nothing to say.
    if (!call) return endIdle(held)
    applyCall(call)
    closeStdioAtExit()
  }
  return entry.run(dir, { ...options, ...(loaded ? { bundle } : {}), held })
}

/**
 * A warm process that will never run a call ends at once, by its own SIGKILL: it has nothing to flush or to print
 * (no envelope is owed: no call was made), and only `exit()` of the session may call `process.exit`.
 */
function endIdle(held: ReturnType<typeof holdSignals>): Promise<never> {
  held.release()
  process.kill(process.pid, 'SIGKILL')
  return new Promise<never>(() => {})
}

/** The tool's own `engines.node`, if its package.json declares one. */
function toolNodeRange(dir: string): unknown {
  try {
    const pjson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { engines?: { node?: unknown } }
    return pjson.engines?.node
  } catch {
    // An unreadable package.json is oclif's to report, with the framework's own range already checked.
    return undefined
  }
}

async function unsupportedNode(root: string | URL, unmet: string[], options: RunOptions): Promise<never> {
  const [{ AgentError }, { run }] = await Promise.all([
    import('../errors/agent-error.js'),
    import('../runtime/entry.js'),
  ])
  const required = unmet.join(' and ')
  const fatal = new AgentError('E_CONFIG', `this tool needs Node ${required}; this is Node ${process.versions.node}`, {
    details: {
      setting: 'node',
      allowed: unmet,
      got: process.versions.node,
      fix: `run it with a Node in ${required} (e.g. the current LTS)`,
    },
  })
  return run(root, { ...options, fatal })
}

/**
 * A bundle that fails to load (damaged, or built for another Node) must not cost the user the command: the
 * modules are still there, so say so on stderr and run from them. Nothing has reached stdout yet.
 */
function tryBundle(file: string, stat: BundleStat, warm: boolean): BundleExports | undefined {
  try {
    const loaded = compileBundle(file, stat, warm)
    if (loaded && typeof loaded.run !== 'function') throw new Error('it does not export run()')
    return loaded
  } catch (error) {
    process.stderr.write(
      `agentcli: ${file} could not be loaded (${error instanceof Error ? error.message : String(error)}); running from the modules\n`,
    )
    return undefined
  }
}

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
function compileBundle(file: string, stat: BundleStat, warm: boolean): BundleExports | undefined {
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
  const source = readSource(file)
  dropLoaderWarning()
  const script = new Script(Module.wrap(source), {
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
 * agentcli-build writes ASCII bundles, read as latin1: a one-byte string (a two-byte one costs twice the memory and
 * the copy), no UTF-8 decoding. A bundle built before that, with non-ASCII text, is still read as UTF-8.
 */
function readSource(file: string): string {
  const bytes = readFileSync(file)
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
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
