import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { BUNDLE_FILE } from '../boot/bundle-file.js'
import { BUNDLE_CHUNK_DIR } from '../runtime/bundle-chunk.js'
import { loadOptional } from '../runtime/optional-peers.js'
import { asciiOnly } from './bundle-ascii.js'
import { bundleEntry } from './bundle-entry.js'
import { lazyBuiltins, lazySemver, pureFramework, sourcePatches } from './bundle-plugins.js'
import { directFrameworkImports } from './direct-imports.js'
import { lazyNamespaces } from './lazy-namespaces.js'
import { SOURCE_PATCHES, type SourcePatch } from './source-patches.js'
import { buildZodChunk, ZOD_CHUNK, zodFromChunk } from './zod-chunk.js'

/** `"agentcli": {"bundle": …}` in a tool's package.json: `true`, or options. */
export type BundleSettings = boolean | { external?: string[] }

type ToolPjson = {
  oclif?: { commands?: unknown; plugins?: string[] }
  agentcli?: { bundle?: BundleSettings }
}

/**
 * agentcli's own dependencies stay outside the bundle and load from node_modules when first used: they are the
 * heavy, lazily loaded ones (zod, Sigstore, the keychain binding, tar…). These run on every command, and the
 * built-ins are commands of the tool (each evaluated only when it runs); fast-sha256 is every write's SHA-256
 * and HMAC (`src/confirm/sha256.ts`, ≈ 15 KB of source), which from node_modules would cost each write a module
 * load and, outside the bundle's code cache, compiling its functions on every run (≈ 0.7 ms and more of a
 * dry-run's CPU).
 */
const INLINED = new Set(['@oclif/core', 'semver', 'fast-sha256'])
/**
 * Never bundled: development-only loaders oclif looks for, native or optional packages, and the state-store
 * drivers and queue engines (loaded only when a state URL is set, and pg's optional native binding unresolvable).
 */
const ALWAYS_EXTERNAL = ['typescript', 'ts-node', 'tsx', 'esbuild', 'pg', 'pg-native', 'pg-boss', 'ioredis', 'bullmq']

/** How to bundle; the defaults are what `agentcli-build` does (`patches` is for measuring one patch's gain). */
export type BundleOptions = { patches?: readonly SourcePatch[] }

/** What a bundle build wrote. */
/** What {@link bundleTool} wrote: `id` is the bundle's own name for itself (see {@link BUNDLE_ID_PLACEHOLDER}). */
export type BundleReport = { file: string; bytes: number; external: string[]; id: string }

/**
 * Written into the main bundle's first line as `__agentcli_bundle_id`, then replaced by the first 32 hex digits of
 * the SHA-256 of the text that holds it: the same sources give the same bundle, and code that knows it runs from
 * this bundle (`bundleId()`) can tell a file written beside it by the same build from one of another build.
 */
export const BUNDLE_ID_PLACEHOLDER = '__agentcli_bundle_id_placeholder__'

/**
 * Bundle the tool, agentcli, its agentcli plugins and oclif into `dist/bundle.cjs` with esbuild, entered through
 * the tool's explicit command target. One file means one module instance of agentcli (its run state and audit
 * are shared by every command) and no module resolution at start-up.
 */
export async function bundleTool(dir: string, options: BundleOptions = {}): Promise<BundleReport | undefined> {
  const root = resolve(dir)
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as ToolPjson
  const settings = pjson.agentcli?.bundle
  if (!settings) return undefined
  const commands = pjson.oclif?.commands as { strategy?: string; target?: string; identifier?: string } | undefined
  if (typeof commands !== 'object' || commands.strategy !== 'explicit' || !commands.target)
    throw new Error(
      'agentcli.bundle needs oclif.commands to use the explicit strategy ({"strategy": "explicit", "target": "./dist/index.js", "identifier": "COMMANDS"})',
    )
  const require = createRequire(join(root, 'package.json'))
  const agentcliPlugins = (pjson.oclif?.plugins ?? []).filter((name) => dependsOnAgentcli(require, name))
  if (agentcliPlugins.length > 0)
    throw new Error(
      `agentcli.bundle cannot bundle oclif plugins built on agentcli (${agentcliPlugins.join(', ')}): each would load a second agentcli. Remove them from oclif.plugins and spread their COMMANDS into yours`,
    )
  const frameworkPjson = require.resolve('agentcli/package.json')
  const framework = dirname(frameworkPjson)
  const frameworkDeps = JSON.parse(readFileSync(frameworkPjson, 'utf8')) as {
    dependencies?: Record<string, string>
    peerDependencies?: Record<string, string>
  }
  // The optional peers (drivers, the keychain binding, Sigstore) too: loaded only when a tool installed them.
  const external = [
    ...Object.keys({ ...frameworkDeps.dependencies, ...frameworkDeps.peerDependencies }).filter(
      (name) => !INLINED.has(name),
    ),
    ...ALWAYS_EXTERNAL,
    ...(typeof settings === 'object' ? (settings.external ?? []) : []),
  ]
  const identifier = commands.identifier ?? 'default'
  const esbuild = await loadEsbuild()
  const outfile = join(root, BUNDLE_FILE)
  const shared = {
    target: 'node22',
    // Strings and identifiers escaped to ASCII; asciiOnly escapes the rest (comments, regular expressions).
    charset: 'ascii' as const,
    // `import.meta.url` in an ES module becomes the bundle's own URL; only createRequire uses it, for externals.
    define: { 'import.meta.url': '__agentcli_bundle_url' },
    banner: { js: 'var __agentcli_bundle_url = require("node:url").pathToFileURL(__filename).href;' },
  }
  rmSync(join(root, BUNDLE_CHUNK_DIR), { recursive: true, force: true })
  rmSync(join(root, ZOD_CHUNK), { force: true })
  const zod = await buildZodChunk(esbuild, root, shared)
  const contents = await bundleEntry(esbuild, root, resolve(root, commands.target), identifier, external, {
    ...shared,
    plugins: zod ? [zodFromChunk(root, BUNDLE_CHUNK_DIR)] : [],
  })
  // The banner is the minifying step's (below), so it stays the bundle's first line as written.
  const { banner, ...unbannered } = shared
  const result = await esbuild.build({
    ...unbannered,
    stdin: { contents, resolveDir: root, sourcefile: 'agentcli-bundle-entry.js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile,
    external,
    // Unminified first: lazyNamespaces reads the module comments (see below).
    plugins: [
      ...(zod ? [zodFromChunk(root, dirname(BUNDLE_FILE))] : []),
      pureFramework(join(framework, 'dist')),
      lazySemver(),
      lazyBuiltins(),
      sourcePatches(options.patches ?? SOURCE_PATCHES),
      // Last: a module another plugin loads (a patched one) is not the tool's and is left to that plugin.
      directFrameworkImports(root, join(framework, 'dist')),
    ],
    logLevel: 'silent',
    write: false,
  })
  for (const warning of result.warnings) process.stderr.write(`agentcli-build: esbuild: ${warning.text}\n`)
  const [output] = result.outputFiles
  if (!output || result.outputFiles.length !== 1) throw new Error('esbuild wrote no single bundle file')
  // Every start reads and deserialises the whole file: without comments and indentation it is a third of the
  // size. Names stay, so a stack trace still names its functions.
  const minified = await esbuild.transform(lazyNamespaces(output.text), {
    charset: shared.charset,
    banner: `${banner.js} var __agentcli_bundle_id = "${BUNDLE_ID_PLACEHOLDER}";`,
    minifyWhitespace: true,
    logLevel: 'silent',
  })
  // The boot reads an ASCII bundle as latin1: a one-byte string, decoded without UTF-8 validation.
  const placeheld = asciiOnly(minified.code)
  const id = createHash('sha256').update(placeheld).digest('hex').slice(0, 32)
  const text = placeheld.replace(`"${BUNDLE_ID_PLACEHOLDER}"`, `"${id}"`)
  mkdirSync(dirname(outfile), { recursive: true })
  writeFileSync(outfile, text)
  return { file: outfile, bytes: text.length, external, id }
}

function dependsOnAgentcli(require: NodeRequire, name: string): boolean {
  try {
    const plugin = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
      dependencies?: Record<string, string>
      peerDependencies?: Record<string, string>
    }
    return Boolean(plugin.dependencies?.agentcli ?? plugin.peerDependencies?.agentcli)
  } catch {
    return false
  }
}

/** esbuild, the tool's development dependency: missing, `E_CONFIG` naming the install; broken, its own error. */
function loadEsbuild(): Promise<typeof import('esbuild')> {
  return loadOptional('build', () => import('esbuild'))
}
