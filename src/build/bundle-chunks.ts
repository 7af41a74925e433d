import { join, relative, resolve } from 'node:path'
import type { Plugin } from 'esbuild'

/** Where one command class is: a module file and the export that holds it. */
type Source = { file: string; name: string }

/** The specifiers a chunk takes from the bundle instead of bundling: the framework and oclif. */
const SHARED = ['agentcli', '@oclif/core'] as const
/** From this many commands on, each command module is a chunk of its own (see {@link chunkEntry}). */
export const CHUNK_FROM = 32

/** What the chunked bundle's entry needs: the chunks it loads, and what they import from the framework. */
export type Chunks = { files: Map<string, string>; names: Map<string, Set<string>>; dir: string }

/**
 * Every start reads, deserialises and evaluates the whole bundle; with every command module in it, that grows
 * with the number of commands (≈ 9 ms at 1000: the file, its code cache, each module's wrapper). Past
 * {@link CHUNK_FROM} commands each self-contained command module (no module of the tool but its own) is built into
 * `dist/chunks/<n>.cjs` instead, with its imports of `agentcli` and `@oclif/core` left to the bundle's own (so its
 * class extends the bundle's `AgentCommand`), and a run evaluates the one chunk it routes to. A module that
 * imports the framework other than by named imports of `agentcli`/`@oclif/core` stays in the bundle. Undefined:
 * no chunk at all.
 */
export async function buildChunks(
  esbuild: typeof import('esbuild'),
  root: string,
  sources: Source[],
  external: string[],
  options: Pick<import('esbuild').BuildOptions, 'define' | 'banner' | 'target' | 'charset' | 'plugins'>,
  where: { dir: string; bundle: string },
): Promise<Chunks | undefined> {
  const all = new Map<string, string>()
  for (const { file } of sources) if (!all.has(file)) all.set(file, `${all.size}`)
  const common = {
    ...options,
    bundle: true,
    platform: 'node' as const,
    external: [...external, ...SHARED],
    plugins: [...(options.plugins ?? []), onlyShared()],
    logLevel: 'silent' as const,
    absWorkingDir: root,
  }
  // First as ES modules, to read which names each chunk imports from the framework (and what else it holds).
  const analysis = await esbuild.build({
    ...common,
    entryPoints: Object.fromEntries([...all].map(([file, name]) => [name, file])),
    format: 'esm',
    write: false,
    metafile: true,
    outdir: '/',
  })
  const names = new Map<string, Set<string>>(SHARED.map((spec) => [spec, new Set<string>()]))
  const files = new Map<string, string>()
  for (const output of analysis.outputFiles) {
    const meta = analysis.metafile.outputs[relative(root, output.path)] ?? analysis.metafile.outputs[output.path]
    const entry = meta?.entryPoint ? resolve(root, meta.entryPoint) : undefined
    if (!entry || !all.has(entry)) return undefined
    // One process may load several commands (mcp): a module two chunks held would be two modules.
    if (Object.keys(meta!.inputs).length !== 1) continue
    // A module reaching the framework by a subpath stays in the bundle, as does one importing it other than by name.
    if (/"(agentcli|@oclif\/core)\//.test(output.text) || !importedNames(output.text, names)) continue
    files.set(entry, `${all.get(entry)}.cjs`)
  }
  if (files.size === 0) return undefined
  await esbuild.build({
    ...common,
    entryPoints: Object.fromEntries([...files].map(([file, name]) => [name.replace(/\.cjs$/, ''), file])),
    format: 'cjs',
    outdir: join(root, where.dir),
    outExtension: { '.js': '.cjs' },
    minifyWhitespace: true,
    // `import.meta.url` is the bundle's URL, as for the modules the bundle holds (a chunk sits one level below).
    banner: {
      js: `var __agentcli_bundle_url = require("node:url").pathToFileURL(require("node:path").join(__dirname, ${JSON.stringify(relative(where.dir, where.bundle))})).href;`,
    },
  })
  return { files, names, dir: where.dir }
}

/**
 * Add the names `text` (an ES module bundle) imports from each shared specifier; false when it uses one in any
 * other way (a namespace or default import, a re-export, a dynamic import), which the bundle could not provide.
 */
function importedNames(text: string, names: Map<string, Set<string>>): boolean {
  for (const spec of SHARED) {
    const quoted = JSON.stringify(spec)
    const uses = text.split(quoted).length - 1
    const named = [...text.matchAll(new RegExp(`^import\\s*\\{([^}]*)\\}\\s*from\\s*${literal(quoted)};?$`, 'gm'))]
    if (named.length !== uses) return false
    for (const [, list] of named)
      for (const item of list!.split(',')) {
        const name = item.trim().split(/\s+as\s+/)[0]!
        if (!/^[A-Za-z_$][\w$]*$/.test(name)) return false
        names.get(spec)!.add(name)
      }
  }
  return true
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}

/** The framework's and oclif's subpaths stay outside a chunk's analysis: such a module is no chunk (above). */
function onlyShared(): Plugin {
  return {
    name: 'agentcli-chunk-shared',
    setup(build) {
      build.onResolve({ filter: /^(agentcli|@oclif\/core)\/./ }, (args) => ({ path: args.path, external: true }))
    },
  }
}

/**
 * The entry lines of a chunked bundle: the framework's specifiers the chunks import, each required when a chunk
 * first asks (the bundle holds them anyway), and the commands' classes as getters that evaluate their chunk (or
 * their module in the bundle) on first read.
 */
export function chunkEntry(
  chunks: Chunks,
  routes: Array<[id: string, source: Source]>,
  chunkModule: string,
  target: { name: string; access: (id: string, source: Source) => string },
): string[] {
  const lines = [`import { loadChunk } from ${JSON.stringify(chunkModule)}`]
  const members = [...chunks.names.keys()].map(
    (spec) => `get ${JSON.stringify(spec)}() { return require(${JSON.stringify(spec)}) }`,
  )
  lines.push(`const shared = { ${members.join(', ')} }`)
  lines.push(`export const ${target.name} = {`)
  for (const [id, source] of routes) {
    const chunk = chunks.files.get(source.file)
    const load = chunk
      ? `loadChunk(__dirname, ${JSON.stringify(chunks.dir)}, ${JSON.stringify(chunk)}, shared)`
      : `require(${JSON.stringify(source.file)})`
    lines.push(
      `  get ${JSON.stringify(id)}() { return ${load}[${JSON.stringify(source.name)}]${target.access(id, source)} },`,
    )
  }
  lines.push('}')
  return lines
}
