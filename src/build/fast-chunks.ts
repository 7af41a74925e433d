import { join } from 'node:path'
import type { Plugin } from 'esbuild'
import { CHUNK_DIR } from '../fast/chunk.js'

/** Where one fast route's command class is: a module file and the export that holds it. */
type Source = { file: string; name: string }

/** The specifiers a chunk takes from the fast bundle instead of bundling: the framework and (lite) oclif. */
const SHARED = ['agentcli', '@oclif/core'] as const
/** From this many fast routes on, each route's command module is a chunk of its own (see {@link chunkEntry}). */
export const CHUNK_FROM = 32

/** What the chunked fast bundle's entry needs: the chunks it loads, and what they import from the framework. */
export type Chunks = { files: Map<string, string>; names: Map<string, Set<string>> }

/**
 * Every start reads, deserialises and evaluates the whole fast bundle; with every route's command module in it,
 * that grows with the number of commands (≈ 9 ms at 1000: the file, its code cache, each module's wrapper).
 * Past {@link CHUNK_FROM} routes each command module is built into `dist/fast-chunks/<n>.cjs` instead, with its
 * imports of `agentcli` and `@oclif/core` left to the bundle's own (so its class extends the bundle's
 * `AgentCommand`), and a run evaluates the one chunk it routes to. Undefined (one bundle, as below the threshold)
 * when a chunk imports the framework other than by named imports: the bundle must provide exactly those names.
 */
export async function buildChunks(
  esbuild: typeof import('esbuild'),
  root: string,
  sources: Source[],
  external: string[],
  options: Pick<import('esbuild').BuildOptions, 'define' | 'banner' | 'target' | 'charset'>,
): Promise<Chunks | undefined> {
  const files = new Map<string, string>()
  for (const { file } of sources) if (!files.has(file)) files.set(file, `${files.size}.cjs`)
  const entryPoints = Object.fromEntries([...files].map(([file, out]) => [out.replace(/\.cjs$/, ''), file]))
  const common = {
    ...options,
    entryPoints,
    bundle: true,
    platform: 'node' as const,
    external: [...external, ...SHARED],
    plugins: [onlyShared()],
    logLevel: 'silent' as const,
    absWorkingDir: root,
  }
  // First as ES modules, to read which names each chunk imports from the framework.
  const analysis = await esbuild.build({ ...common, format: 'esm', write: false, outdir: '/' })
  const names = new Map<string, Set<string>>(SHARED.map((spec) => [spec, new Set<string>()]))
  for (const output of analysis.outputFiles) if (!importedNames(output.text, names)) return undefined
  await esbuild.build({
    ...common,
    format: 'cjs',
    outdir: join(root, CHUNK_DIR),
    outExtension: { '.js': '.cjs' },
    minifyWhitespace: true,
  })
  return { files, names }
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

/** A chunk that reaches the framework or oclif by any other specifier (a subpath, a file) is not a chunk. */
function onlyShared(): Plugin {
  return {
    name: 'agentcli-chunk-shared',
    setup(build) {
      build.onResolve({ filter: /^(agentcli|@oclif\/core)\/./ }, (args) => ({
        errors: [{ text: `a fast chunk imports ${args.path}` }],
      }))
    },
  }
}

/**
 * The entry lines of a chunked fast bundle: the framework names the chunks import, gathered as `shared`, and the
 * routes' classes as getters that evaluate their chunk on first read.
 */
export function chunkEntry(chunks: Chunks, routes: Array<[id: string, source: Source]>, chunkModule: string): string[] {
  const lines = [`import { loadChunk } from ${JSON.stringify(chunkModule)}`]
  const members: string[] = []
  let n = 0
  for (const [spec, set] of chunks.names) {
    const local = [...set].map((name) => [name, `__shared${n++}`] as const)
    if (local.length > 0)
      lines.push(`import { ${local.map(([name, as]) => `${name} as ${as}`).join(', ')} } from ${JSON.stringify(spec)}`)
    members.push(`${JSON.stringify(spec)}: { ${local.map(([name, as]) => `${name}: ${as}`).join(', ')} }`)
  }
  lines.push(`const shared = { ${members.join(', ')} }`)
  lines.push('export const commands = {')
  for (const [id, source] of routes)
    lines.push(
      `  get ${JSON.stringify(id)}() { return loadChunk(__dirname, ${JSON.stringify(chunks.files.get(source.file))}, shared)[${JSON.stringify(source.name)}] },`,
    )
  lines.push('}')
  return lines
}
