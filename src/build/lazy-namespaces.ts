/**
 * Move each module's namespace object into the module's own initialiser. esbuild fills the namespace of every
 * lazily initialised ES module (`var x_exports = {}; __export(x_exports, { name: () => name, … })`) at the bundle's
 * top level, so every start builds the namespaces of the MCP server, the updater, the fleet and every built-in (79
 * objects, ≈ 300 getters in the example) before its command runs. Inside `init_x()` each is built when its module
 * is first used; every read of a namespace esbuild writes is after that module's `init_x()` (a `require`, an
 * `import()`, an `import * as` in another module's initialiser), and the initialiser builds it first, before it
 * initialises what it imports, so a circular import sees it as before.
 *
 * Works on esbuild's unminified CommonJS output, where a `// <path>` comment starts each module and its
 * initialiser is `var init_x = __esm({ "<path>"() {`: a namespace moves only into the initialiser of its own
 * path; one of a module without an initialiser (the entry) stays where it is.
 */
export function lazyNamespaces(text: string): string {
  const lines = text.split('\n')
  const initialised = new Set<string>()
  for (let i = 1; i < lines.length; i++) {
    const key = ESM_KEY.exec(lines[i]!)
    if (key && ESM_START.test(lines[i - 1]!)) initialised.add(key[1]!)
  }
  const moved = new Map<string, string[]>()
  const out: string[] = []
  let path: string | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    path = MODULE_COMMENT.exec(line)?.[1] ?? path
    const end = path !== undefined && initialised.has(JSON.stringify(path)) ? statementEnd(lines, i) : -1
    if (end >= 0) {
      const key = JSON.stringify(path)
      moved.set(key, [...(moved.get(key) ?? []), ...lines.slice(i, end + 1)])
      i = end
      continue
    }
    out.push(line)
    const key = ESM_KEY.exec(line)?.[1]
    const statements = key && ESM_START.test(lines[i - 1] ?? '') ? moved.get(key) : undefined
    if (!statements) continue
    // After the initialiser's "use strict", which must stay its first statement.
    if (lines[i + 1]?.trim() === '"use strict";') out.push(lines[++i]!)
    out.push(...statements)
    moved.delete(key!)
  }
  if (moved.size > 0) throw new Error(`lazyNamespaces: no initialiser after the namespace of ${[...moved.keys()][0]}`)
  return out.join('\n')
}

const MODULE_COMMENT = /^\/\/ (\S+)$/
const ESM_START = /^var [\w$]+ = __esm\(\{$/
const ESM_KEY = /^ {2}("(?:[^"\\]|\\.)*")\(\) \{$/
const EXPORT_START = /^__export\([\w$]+, \{$/
const GETTER = /^ {2}(?:[\w$]+|"(?:[^"\\]|\\.)*"): \(\) => [\w$]+,?$/

/** The last line of the `__export(x, { … });` statement starting at `i`, or -1 when none starts there. */
function statementEnd(lines: string[], i: number): number {
  if (!EXPORT_START.test(lines[i]!)) return -1
  for (let j = i + 1; j < lines.length; j++) {
    if (lines[j] === '});') return j
    if (!GETTER.test(lines[j]!)) return -1
  }
  return -1
}
