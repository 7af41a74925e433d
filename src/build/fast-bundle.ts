import { rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Plugin } from 'esbuild'
import { FAST_FILES } from '../fast/boot.js'
import { CHUNK_DIR } from '../fast/chunk.js'
import { findSources } from './bundle-entry.js'
import { LAZY_BUILTINS, lazyBuiltins } from './bundle-plugins.js'
import { buildChunks, CHUNK_FROM, chunkEntry } from './fast-chunks.js'
import { routeTable, tableText, whyToolNotFast } from './fast-routes.js'

// biome-ignore lint/suspicious/noExplicitAny: command classes as oclif holds them
type Loose = Record<string, any>

/** What the fast bundle build needs from the main one. */
export type FastBuild = {
  root: string
  pjson: Loose
  target: string
  identifier: string
  external: string[]
  options: Pick<import('esbuild').BuildOptions, 'define' | 'banner' | 'target' | 'charset'>
}

/** What it wrote: the fast routes, and why each other command is not one. */
export type FastReport = { routes: string[]; skipped: Record<string, string>; bytes: number }

/**
 * The oclif modules the fast bundle keeps, as they are (its flag and argument builders, parser, validator and
 * their helpers); each of their imports of the rest of oclif is one of {@link SHIMS}. A module outside both
 * lists (after an oclif upgrade) means no fast path for the tool, never a fast path that evaluates oclif.
 */
const KEPT = new Set([
  'lib/flags.js',
  'lib/args.js',
  'lib/parser/index.js',
  'lib/parser/parse.js',
  'lib/parser/validate.js',
  'lib/parser/errors.js',
  'lib/parser/help.js',
  'lib/util/util.js',
  'lib/util/fs.js',
])
const SHIMS: Record<string, string> = {
  'lib/errors': 'lite-errors.js',
  'lib/cache': 'shims/cache.js',
  'lib/logger': 'shims/logger.js',
  'lib/ux/theme': 'shims/theme.js',
  'lib/ux/list': 'shims/unavailable.js',
  'lib/ux': 'shims/unavailable.js',
  'lib/help': 'shims/unavailable.js',
}

/**
 * Write `dist/fast-routes.json` (the commands the build proves simple, see `whyNotFast`) and `dist/fast.cjs`
 * (those commands' modules and the fast runner, with `@oclif/core` replaced by the lite one). A tool with no
 * provable route, or whose oclif no longer fits the shims, gets neither: every run takes oclif's path.
 */
export async function bundleFast(esbuild: typeof import('esbuild'), build: FastBuild): Promise<FastReport> {
  const { root } = build
  const table = join(root, FAST_FILES.table)
  const outfile = join(root, FAST_FILES.bundle)
  rmSync(table, { force: true })
  rmSync(outfile, { force: true })
  rmSync(join(root, CHUNK_DIR), { recursive: true, force: true })
  const require = createRequire(join(root, 'package.json'))
  const framework = dirname(require.resolve('agentcli/package.json'))
  // The built-ins are part of agentcli itself.
  const builtins = join(framework, 'dist', 'builtins')
  const commands = (await import(pathToFileURL(build.target).href))[build.identifier] as Record<string, Loose>
  const sources = await findSources(esbuild, root, build.target, build.external, commands)
  // The built-ins read the tool's whole config and manifest; a command defined inline in the target has no
  // module of its own to load alone.
  const eligible = (id: string) => {
    const file = sources.get(id)?.file
    return file !== undefined && file !== resolve(build.target) && !inside(file, builtins)
  }
  const { table: routes, skipped } = routeTable(build.pjson, commands, eligible)
  const ids = Object.keys(routes.routes)
  const none = { routes: [], skipped, bytes: 0 }
  // A tool refused as a whole (its hooks, plugins…) gets no fast path at all, not even `--version`.
  if (whyToolNotFast(build.pjson)) return none
  const routeSources = ids.map((id) => [id, sources.get(id)!] as [string, { file: string; name: string }])
  // Many routes: each command module a chunk of its own (./fast-chunks.ts), so a start does not grow with them.
  const chunks =
    ids.length >= CHUNK_FROM
      ? await buildChunks(
          esbuild,
          root,
          routeSources.map(([, source]) => source),
          build.external,
          build.options,
        ).catch(() => undefined)
      : undefined
  // The routes' classes as getters of one object literal: a thousand `Object.defineProperty` calls cost each
  // start some 2 ms at 1000 commands, a literal's accessors about half of that.
  const lines = [
    `export { runFast } from ${JSON.stringify(join(framework, 'dist/fast/run.js'))}`,
    ...(chunks
      ? chunkEntry(chunks, routeSources, join(framework, 'dist/fast/chunk.js'))
      : [
          'export const commands = {',
          ...routeSources.map(
            ([id, source]) =>
              `  get ${JSON.stringify(id)}() { return require(${JSON.stringify(source.file)})[${JSON.stringify(source.name)}] },`,
          ),
          '}',
        ]),
  ]
  const unexpected = new Set<string>()
  // A fast route whose modules import from `@oclif/core` what the lite one does not export fails this build:
  // that is no fast path (said on stderr; the fast-path tests fail), never a failed tool build.
  const result = await esbuild
    .build({
      ...build.options,
      stdin: { contents: `${lines.join('\n')}\n`, resolveDir: root, sourcefile: 'agentcli-fast-entry.js' },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile,
      external: build.external,
      // Every start reads, hashes and deserialises the whole file: without comments and indentation it is a third
      // of the size and all ASCII (a one-byte string). Names stay, so a stack trace still names its functions.
      minifyWhitespace: true,
      plugins: [
        liteOclif(join(framework, 'dist/fast'), unexpected),
        pureFramework(join(framework, 'dist')),
        lazySemver(),
        lazyBuiltins([...LAZY_BUILTINS, 'fs/promises']),
      ],
      logLevel: 'silent',
      metafile: true,
    })
    .catch((error: { errors?: Array<{ text: string }> }) => {
      process.stderr.write(`agentcli-build: no fast path: ${error.errors?.[0]?.text ?? String(error)}\n`)
      return undefined
    })
  if (!result) {
    rmSync(outfile, { force: true })
    rmSync(join(root, CHUNK_DIR), { recursive: true, force: true })
    return none
  }
  if (unexpected.size > 0) {
    rmSync(outfile, { force: true })
    rmSync(join(root, CHUNK_DIR), { recursive: true, force: true })
    process.stderr.write(
      `agentcli-build: no fast path: the fast bundle would evaluate oclif's ${[...unexpected].join(', ')}\n`,
    )
    return none
  }
  writeFileSync(table, tableText(routes))
  const bytes = Object.values(result.metafile?.outputs ?? {}).reduce((sum, output) => sum + output.bytes, 0)
  return { routes: ids, skipped, bytes }
}

/**
 * The framework's modules do their work in functions and classes; a module none of whose exports a fast route
 * uses (the write path, jobs, the fleet…) is left out of the fast bundle, where esbuild would otherwise keep it
 * for a top-level call such as `Flags.boolean(…)`.
 */
function pureFramework(dist: string): Plugin {
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
 * evaluated, and a run reads the update notice with them only when there is a notice to read.
 */
function lazySemver(): Plugin {
  const filter = /^semver\/functions\/(valid|gt)\.js$/
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

/**
 * `@oclif/core` → the lite one (`src/fast/oclif-lite.ts`); inside the oclif modules it keeps, each import of
 * the rest of oclif → its shim. Any other oclif module that gets in is recorded in `unexpected`.
 */
function liteOclif(fastDir: string, unexpected: Set<string>): Plugin {
  const oclifFile = /^(.*[\\/]@oclif[\\/]core)[\\/](lib[\\/].*)$/
  return {
    name: 'agentcli-lite-oclif',
    setup(build) {
      build.onResolve({ filter: /^@oclif\/core$/ }, () => ({ path: join(fastDir, 'oclif-lite.js') }))
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        const from = oclifFile.exec(args.importer)
        if (!from) return undefined
        const target = relative(from[1]!, resolve(dirname(args.importer), args.path))
          .split(sep)
          .join('/')
          .replace(/(\/index)?\.js$/, '')
        const shim = SHIMS[target]
        return shim ? { path: join(fastDir, shim) } : undefined
      })
      build.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, (args) => {
        const path = oclifFile.exec(args.path)![2]!.split(sep).join('/')
        if (!KEPT.has(path)) unexpected.add(path)
        return undefined
      })
    },
  }
}
