import { readFile } from 'node:fs/promises'
import { relative, sep } from 'node:path'
import type { Plugin } from 'esbuild'
import { SOURCE_PATCHES, type SourcePatch } from './source-patches.js'

/**
 * Node built-ins that cost milliseconds to load (measured: `crypto` ≈ 4 ms, `child_process` ≈ 4 ms on a 25 ms
 * `node -e 0`) and that a read command never touches. In the bundle they load on first use instead of at start.
 */
export const LAZY_BUILTINS = ['crypto', 'child_process', 'readline', 'readline/promises', 'fs/promises'] as const

/**
 * Replace `require("node:crypto")` and friends with an object that loads the module on first use. esbuild's
 * interop (`__toESM`) copies the own keys of an imported CommonJS module into a new object for each module that
 * imports it, a getter and a descriptor per key: for node:crypto's ≈ 80 keys, ≈ 25 KB of the young generation
 * per importer, which put a `list` (two importers) past its size and made it pay a scavenge (≈ 0.7 ms). So until
 * the module is loaded it has no own keys, and the copy's prototype (its own prototype, which the copy takes) is
 * a second object that reads every key from the loaded module: a named import resolves through it. Listing and
 * copying load nothing; reading a key loads the module. Once loaded, the real keys are copied as before.
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
const keys = new Set(${JSON.stringify(keys)})
// What a copy made before the load inherits from: each of the module's keys, read from the loaded module.
const inherited = new Proxy({}, {
  get: (_, key) => (keys.has(key) ? load()[key] : undefined),
  has: (_, key) => keys.has(key),
})
module.exports = new Proxy({}, {
  // esbuild's interop asks a CommonJS module whether it is an ES module; no built-in is, and asking loads nothing.
  get: (_, key) => (key === '__esModule' && !real ? undefined : load()[key]),
  has: (_, key) => key in load(),
  getPrototypeOf: () => (real ? Object.getPrototypeOf(real) : inherited),
  ownKeys: () => (real ? Reflect.ownKeys(real) : []),
  getOwnPropertyDescriptor: (_, key) =>
    real ? { ...Reflect.getOwnPropertyDescriptor(real, key), configurable: true } : undefined,
})
`
}

/**
 * Apply the source patches (see `SOURCE_PATCHES`) as esbuild loads each patched file. The build fails when a
 * patch's text does not occur exactly as often as it says, or when a patched file was never loaded: either
 * means the package changed shape, and a patch must not silently stop applying.
 */
export function sourcePatches(patches: readonly SourcePatch[] = SOURCE_PATCHES): Plugin {
  const byTarget = new Map<string, SourcePatch[]>()
  for (const patch of patches) {
    const target = `${patch.package}/${patch.file}`
    byTarget.set(target, [...(byTarget.get(target) ?? []), patch])
  }
  const pattern = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('/', '[\\\\/]')
  const filter = new RegExp(`[\\\\/]node_modules[\\\\/](${[...byTarget.keys()].map(pattern).join('|')})$`)
  return {
    name: 'agentcli-source-patches',
    setup(build) {
      const applied = new Set<SourcePatch>()
      build.onStart(() => applied.clear())
      build.onLoad({ filter }, async (args) => {
        const target = filter.exec(args.path)![1]!.replaceAll('\\', '/')
        let contents = await readFile(args.path, 'utf8')
        const errors: { text: string }[] = []
        for (const patch of byTarget.get(target) ?? []) {
          const found = contents.split(patch.find).length - 1
          if (found !== (patch.count ?? 1)) {
            errors.push({
              text: notApplied(patch, `its text occurs ${found} times in ${args.path}, not ${patch.count ?? 1}`),
            })
            continue
          }
          contents = contents.replaceAll(patch.find, patch.replace)
          applied.add(patch)
        }
        return errors.length > 0 ? { errors } : { loader: 'js', contents }
      })
      build.onEnd((result) => {
        if (result.errors.length > 0) return
        const missing = patches.filter((patch) => !applied.has(patch))
        return { errors: missing.map((patch) => ({ text: notApplied(patch, 'the file was never loaded') })) }
      })
    },
  }
}

function notApplied(patch: SourcePatch, reason: string): string {
  return `source patch ${patch.name} (${patch.package}/${patch.file}) no longer applies: ${reason}; update src/build/source-patches.ts`
}

/**
 * The framework's modules do their work in functions and classes; a module none of whose exports a run can reach
 * (the write path for a read, the fleet, jobs…) is left out of what the bundle evaluates at load, where esbuild
 * would otherwise keep it for a top-level call such as `Flags.boolean(…)`.
 */
export function pureFramework(dist: string): Plugin {
  return {
    name: 'agentcli-pure-framework',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (!inside(args.importer, dist) || args.pluginData === 'pure') return undefined
        const found = await build.resolve(args.path, {
          importer: args.importer,
          resolveDir: args.resolveDir,
          kind: args.kind,
          pluginData: 'pure',
        })
        return inside(found.path, dist) ? { ...found, sideEffects: false } : undefined
      })
    },
  }
}

/**
 * `semver`'s functions, evaluated when first called: its regular expressions are built when the module is
 * evaluated, and a run asks semver only about a version that is not plain (src/update/plain-version.ts) or to sort.
 */
export function lazySemver(): Plugin {
  const filter = /^semver\/functions\/(valid|gt|lt|rcompare)\.js$/
  return {
    name: 'agentcli-lazy-semver',
    setup(build) {
      build.onResolve({ filter }, (args) =>
        args.namespace === 'lazy-semver'
          ? undefined
          : { path: args.path, namespace: 'lazy-semver', pluginData: args.resolveDir },
      )
      build.onLoad({ filter: /.*/, namespace: 'lazy-semver' }, (args) => ({
        loader: 'js',
        resolveDir: args.pluginData as string,
        // esbuild bundles the inner require as a function it calls on first use.
        contents: `module.exports = (...args) => require(${JSON.stringify(args.path)})(...args)\n`,
      }))
    },
  }
}

function inside(file: string, dir: string): boolean {
  const rel = relative(dir, file)
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep)
}
