import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import type { Plugin } from 'esbuild'

/** Where one name of agentcli's index comes from: a module (a path or a package) and its export there. */
type Origin = { from: string; name: string }

/**
 * `import { … } from 'agentcli'` in the tool's modules, and the built-ins' imports of agentcli's index, pointed
 * at the modules that define each name. In the bundle every module is evaluated on first use, and evaluating
 * agentcli's index evaluates every module it re-exports: a `list` evaluated the write path (`WriteCommand`, the
 * confirm flow, batches, locks: 23 modules more than it uses) because its command imports `AgentCommand` from
 * the same index, and `job list`, `context` or `changelog` the same through `../index.js`. Importing each name
 * from its own module evaluates what the command uses and nothing else; the names and their values are the
 * same. A statement this cannot read whole (a namespace or default import, a name the index does not
 * re-export) is left as written.
 */
export function directFrameworkImports(root: string, frameworkDist: string): Plugin {
  const index = join(frameworkDist, 'index.js')
  return {
    name: 'agentcli-direct-imports',
    setup(build) {
      let table: Map<string, Origin> | undefined | null = null
      const origins = () => {
        if (table === null) table = indexOrigins(readFileSync(index, 'utf8'))
        return table
      }
      build.onLoad({ filter: /\.m?js$/ }, async (args) => {
        if (args.path === index || !rewritable(args.path, root, frameworkDist)) return undefined
        const source = await readFile(args.path, 'utf8')
        if (!source.includes('agentcli') && !source.includes('index.js')) return undefined
        const known = origins()
        if (!known) return undefined
        const isIndex = (specifier: string) =>
          specifier === 'agentcli' || (specifier.startsWith('.') && resolve(dirname(args.path), specifier) === index)
        const resolved = new Map<string, string>()
        // A package the index re-exports from (`@oclif/core/args`) resolves as it does from agentcli itself.
        for (const { from } of known.values())
          if (!from.startsWith('.') && !resolved.has(from)) {
            const found = await build.resolve(from, { kind: 'import-statement', resolveDir: frameworkDist })
            if (found.errors.length > 0 || !found.path) return undefined
            resolved.set(from, found.path)
          }
        const where = (from: string) =>
          from.startsWith('.') ? join(frameworkDist, from) : (resolved.get(from) ?? from)
        const contents = directImports(source, known, where, isIndex)
        return contents === undefined ? undefined : { contents, loader: 'js' }
      })
    },
  }
}

/**
 * Each name agentcli's index (its compiled `dist/index.js`) re-exports, and from where; undefined when the index
 * holds anything but re-exports, so nothing is rewritten against an index this does not understand.
 */
export function indexOrigins(index: string): Map<string, Origin> | undefined {
  const code = index.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const origins = new Map<string, Origin>()
  for (const raw of code.split(';')) {
    const statement = raw.trim()
    if (statement === '') continue
    const namespace = /^export\s*\*\s*as\s+([\w$]+)\s+from\s*(['"])([^'"]+)\2$/.exec(statement)
    if (namespace) {
      origins.set(namespace[1] as string, { from: namespace[3] as string, name: '*' })
      continue
    }
    const named = /^export\s*\{([^}]*)\}\s*from\s*(['"])([^'"]+)\2$/.exec(statement)
    if (!named) return undefined
    for (const specifier of specifiers(named[1] as string)) {
      if (!specifier) return undefined
      origins.set(specifier.local, { from: named[3] as string, name: specifier.imported })
    }
  }
  return origins
}

/**
 * `source` with each `import { … } from <the index>` at the start of a line (`isIndex` tells a specifier naming
 * agentcli's index) replaced by imports of the same names from their own modules (`where` turns an origin's module
 * into the path to import), on the same lines, so line numbers do not move; undefined when nothing changed.
 */
export function directImports(
  source: string,
  origins: Map<string, Origin>,
  where: (from: string) => string,
  isIndex: (specifier: string) => boolean = (specifier) => specifier === 'agentcli',
): string | undefined {
  let changed = false
  const out = source.replace(
    /^([ \t]*)import\s*\{([^}]*)\}\s*from\s*(['"])([^'"\n]+)\3[ \t]*;?/gm,
    (statement, indent: string, list: string, _quote: string, specifier: string) => {
      if (!isIndex(specifier)) return statement
      const wanted = specifiers(list)
      if (wanted.length === 0 || wanted.some((s) => !s || !origins.has(s.imported))) return statement
      const byModule = new Map<string, string[]>()
      const namespaces: string[] = []
      for (const specifier of wanted as Specifier[]) {
        const origin = origins.get(specifier.imported) as Origin
        const path = JSON.stringify(where(origin.from))
        if (origin.name === '*') namespaces.push(`import * as ${specifier.local} from ${path};`)
        else
          byModule.set(path, [
            ...(byModule.get(path) ?? []),
            origin.name === specifier.local ? origin.name : `${origin.name} as ${specifier.local}`,
          ])
      }
      changed = true
      const imports = [...byModule].map(([path, names]) => `import { ${names.join(', ')} } from ${path};`)
      const newlines = '\n'.repeat(statement.split('\n').length - 1)
      return `${indent}${[...imports, ...namespaces].join(' ')}${newlines}`
    },
  )
  return changed ? out : undefined
}

type Specifier = { imported: string; local: string }

/** `a, b as c,` into its names; a null entry for one this does not read (a string name, say). */
function specifiers(list: string): (Specifier | null)[] {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const match = /^([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(part)
      return match ? { imported: match[1] as string, local: (match[2] ?? match[1]) as string } : null
    })
}

/** agentcli's own modules (the built-ins among them) and the tool's: under its root, outside its node_modules. */
function rewritable(file: string, root: string, frameworkDist: string): boolean {
  const inFramework = relative(frameworkDist, file)
  if (!inFramework.startsWith('..') && !isAbsolute(inFramework)) return true
  const inRoot = relative(root, file)
  return !inRoot.startsWith('..') && !isAbsolute(inRoot) && !inRoot.split(/[\\/]/).includes('node_modules')
}
