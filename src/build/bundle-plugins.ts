import { readFile } from 'node:fs/promises'
import type { Plugin } from 'esbuild'

/**
 * Node built-ins that cost milliseconds to load (measured: `crypto` ≈ 4 ms, `child_process` ≈ 4 ms on a 25 ms
 * `node -e 0`) and that a read command never touches. In the bundle they load on first use instead of at start.
 */
export const LAZY_BUILTINS = ['crypto', 'child_process', 'readline', 'readline/promises'] as const

/**
 * Replace `require("node:crypto")` and friends with an object that loads the module on first use. esbuild reads
 * an imported module's keys when the bundle starts (`__toESM`), so the keys are listed at build time and each
 * one is a getter: listing them loads nothing, reading one loads the module.
 */
export function lazyBuiltins(names: readonly string[] = LAZY_BUILTINS): Plugin {
  const filter = new RegExp(`^(node:)?(${names.join('|')})$`)
  return {
    name: 'agentcli-lazy-builtins',
    setup(build) {
      build.onResolve({ filter }, (args) => ({ path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' }))
      build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
        const id = `node:${args.path}`
        const keys = Object.keys(process.getBuiltinModule(id) as object)
        return { loader: 'js', contents: lazyModuleSource(id, keys) }
      })
    },
  }
}

function lazyModuleSource(id: string, keys: string[]): string {
  return `let real
const load = () => (real ??= process.getBuiltinModule(${JSON.stringify(id)}))
const keys = ${JSON.stringify(keys)}
module.exports = new Proxy({}, {
  // esbuild's interop asks a CommonJS module whether it is an ES module; no built-in is, and asking loads nothing.
  get: (_, key) => (key === '__esModule' && !real ? undefined : load()[key]),
  has: (_, key) => key in load(),
  ownKeys: () => (real ? Reflect.ownKeys(real) : keys),
  getOwnPropertyDescriptor: (_, key) =>
    real
      ? { ...Reflect.getOwnPropertyDescriptor(real, key), configurable: true }
      : keys.includes(key)
        ? { configurable: true, enumerable: true, get: () => load()[key] }
        : undefined,
})
`
}

/**
 * oclif sorts each plugin's commands with `localeCompare`, and the first `localeCompare` of a process builds an
 * ICU collator (≈ 6 ms, a tenth of a bundled start). Command ids are lowercase ASCII words joined by `:` and
 * `-`, which code-point order sorts the same way. If oclif's source changes shape, nothing is replaced.
 */
export function plainIdSort(): Plugin {
  const from = '.sort((a, b) => a.id.localeCompare(b.id))'
  const to = '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))'
  return {
    name: 'agentcli-plain-id-sort',
    setup(build) {
      build.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/ }, async (args) => ({
        loader: 'js',
        contents: (await readFile(args.path, 'utf8')).replaceAll(from, to),
      }))
    },
  }
}
