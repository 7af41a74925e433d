import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BUNDLE_FILE } from '../boot/bundle-file.js'
import { BUNDLE_CHUNK_DIR } from '../runtime/bundle-chunk.js'
import { ALIASES_EXPORT, HIDDEN_EXPORT, isHidden } from '../runtime/own-commands.js'
import { buildChunks, CHUNK_FROM, chunkEntry } from './bundle-chunks.js'
import { toolPrefilter } from './tool-keys.js'

/** Where a command class is defined: a module file and the export that holds it. */
type Source = { file: string; name: string }

/**
 * The source of the bundle: the framework's `run`, and the tool's commands as getters that evaluate a command's
 * module the first time oclif asks for that command. A run then evaluates one command module, not all of them.
 * A command whose module cannot be told apart (defined inline in the target, say) is read from the target.
 */
export async function bundleEntry(
  esbuild: typeof import('esbuild'),
  root: string,
  target: string,
  identifier: string,
  external: string[],
  chunking?: Pick<import('esbuild').BuildOptions, 'define' | 'banner' | 'target' | 'charset' | 'plugins'>,
): Promise<string> {
  const commands = (await import(pathToFileURL(target).href))[identifier] as Record<string, unknown> | undefined
  if (!commands || typeof commands !== 'object') throw new Error(`${target} does not export ${identifier}`)
  const sources = await findSources(esbuild, root, target, external, commands)
  const name = identifier === 'default' ? '__commands' : identifier
  const routes = Object.keys(commands).map(
    (id) => [id, sources.get(id) ?? { file: target, name: identifier }] as [string, Source],
  )
  const access = (id: string, source: Source) => (source.file === target ? `[${JSON.stringify(id)}]` : '')
  // Many commands: the self-contained ones (no module of the tool but their own) as chunks, see ./bundle-chunks.ts.
  const framework = dirname(createRequire(join(root, 'package.json')).resolve('agentcli/package.json'))
  const candidates = routes.map(([, source]) => source).filter((source) => source.file !== target)
  const chunks =
    chunking && routes.length >= CHUNK_FROM
      ? await buildChunks(esbuild, root, candidates, external, chunking, {
          dir: BUNDLE_CHUNK_DIR,
          bundle: BUNDLE_FILE,
        }).catch(() => undefined)
      : undefined
  // The entry module by path: agentcli's public entry points do not include it.
  const lines = [`export { run } from ${JSON.stringify(join(framework, 'dist/runtime/entry.js'))}`]
  lines.push(...startMemos(root, framework))
  if (chunks)
    lines.push(...chunkEntry(chunks, routes, join(framework, 'dist/runtime/bundle-chunk.js'), { name, access }))
  else {
    // Getters of one object literal: a thousand `Object.defineProperty` calls cost each start some 2 ms at 1000
    // commands, a literal's accessors (as enumerable and configurable) about half of that.
    lines.push(`export const ${name} = {`)
    for (const [id, source] of routes)
      lines.push(
        `  get ${JSON.stringify(id)}() { return require(${JSON.stringify(source.file)})[${JSON.stringify(source.name)}]${access(id, source)} },`,
      )
    lines.push('}')
  }
  // Every alias, so the entry's router sends an alias to oclif's Config without evaluating every command module.
  lines.push(`export const ${ALIASES_EXPORT} = ${JSON.stringify(aliasesOf(commands))}`)
  // And the hidden ones, so that words naming no command are answered from the map, without oclif's Config.
  lines.push(
    `export const ${HIDDEN_EXPORT} = ${JSON.stringify(Object.keys(commands).filter((id) => isHidden(commands[id])))}`,
  )
  if (identifier === 'default') lines.push('export default __commands')
  return `${lines.join('\n')}\n`
}

/**
 * What every run of the tool computes alike, computed once here and registered when the bundle loads: the
 * redaction prefilter of the tool's key words (src/build/tool-keys.ts), keyed by those words, so a run whose
 * words differ (keys edited after the build) or that knows a secret builds its own.
 */
function startMemos(root: string, framework: string): string[] {
  const prefilter = toolPrefilter(root)
  if (!prefilter) return []
  return [
    `import { rememberPrefilter } from ${JSON.stringify(join(framework, 'dist/output/redact.js'))}`,
    `rememberPrefilter(${JSON.stringify(prefilter)})`,
  ]
}

/**
 * Match each command class to the module that exports it, among the modules the target imports (two levels:
 * the tool's commands, and a plugin's index and its commands). Importing them is free: the target already did.
 */
export async function findSources(
  esbuild: typeof import('esbuild'),
  root: string,
  target: string,
  external: string[],
  commands: Record<string, unknown>,
): Promise<Map<string, Source>> {
  const analysis = await esbuild.build({
    entryPoints: [target],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    external: [...external, '@oclif/core'],
    plugins: [frameworkExternal()],
    logLevel: 'silent',
    absWorkingDir: root,
  })
  const inputs = new Map(Object.entries(analysis.metafile.inputs).map(([key, input]) => [resolve(root, key), input]))
  const ids = new Map<unknown, string[]>()
  for (const [id, value] of Object.entries(commands)) ids.set(value, [...(ids.get(value) ?? []), id])
  const sources = new Map<string, Source>()
  let level = [resolve(root, target)]
  const seen = new Set(level)
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: string[] = []
    for (const file of level) {
      for (const imported of inputs.get(file)?.imports ?? []) {
        if (imported.external || !/\.m?js$/.test(imported.path)) continue
        const path = resolve(root, imported.path)
        if (seen.has(path)) continue
        seen.add(path)
        next.push(path)
        const namespace = (await import(pathToFileURL(path).href)) as Record<string, unknown>
        for (const [name, value] of Object.entries(namespace))
          for (const id of ids.get(value) ?? []) if (!sources.has(id)) sources.set(id, { file: path, name })
      }
    }
    level = next
  }
  return sources
}

/**
 * The framework's modules stay out of the analysis (the tool's commands never live there), except
 * `agentcli/builtins`: the built-ins' command modules are reached through it. esbuild's `external` cannot say
 * this: marking `agentcli` external marks every subpath external too.
 */
function frameworkExternal(): import('esbuild').Plugin {
  return {
    name: 'agentcli-framework-external',
    setup(build) {
      build.onResolve({ filter: /^agentcli(\/.*)?$/ }, (args) =>
        args.path === 'agentcli/builtins' ? undefined : { path: args.path, external: true },
      )
    },
  }
}

function aliasesOf(commands: Record<string, unknown>): string[] {
  const all = new Set<string>()
  for (const command of Object.values(commands)) {
    const c = command as { aliases?: unknown; hiddenAliases?: unknown } | undefined
    for (const alias of [c?.aliases, c?.hiddenAliases].flat()) if (typeof alias === 'string') all.add(alias)
  }
  return [...all].sort()
}
