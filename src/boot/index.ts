import type { RunOptions } from '../runtime/entry.js'
import { builtin } from './builtin.js'
import { BUNDLE_FILE } from './bundle-file.js'
import { codeCacheDir, moduleCompileCache } from './code-cache.js'
import { holdSignals } from './early-signals.js'
import { FRAMEWORK_NODE_RANGE, inFrameworkRange, unmetEngines } from './engines.js'
import { type BundleExports, type BundleStat, compileBundle } from './load-bundle.js'
import { rootPath } from './root-path.js'
import { applyCall, awaitCall, closeStdioAtExit, isWarmProcess } from './warm.js'

// Built-ins come from process.getBuiltinModule, not `import`: the ES module facade of `node:fs` alone costs
// ≈ 2.5 ms (it reads every export, `fs.promises` included), a twentieth of a bundled start.
const { readFileSync, statSync } = builtin<typeof import('node:fs')>('node:fs')
const { join } = builtin<typeof import('node:path')>('node:path')

/**
 * The whole of a tool's `bin/run.js`: start from the bundle when the tool has one (one file holding the tool,
 * agentcli and oclif, with a V8 code cache of what its runs compiled), else from the tool's modules.
 * `AGENTCLI_NO_BUNDLE=1` forces the modules, for stack traces that name source files.
 */
export async function start(root: string | URL, options: RunOptions = {}): Promise<number> {
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
 * (no envelope is owed: no call was made), and only the session's exit (runtime/exit.ts) may call `process.exit`.
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

async function unsupportedNode(root: string | URL, unmet: string[], options: RunOptions): Promise<number> {
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
