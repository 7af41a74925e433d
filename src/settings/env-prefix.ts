/** Prefixes by bin: the same bin always has the same prefix, and a server running many calls asks for it on each. */
const prefixes = new Map<string, string>()

/**
 * The prefix of a tool's environment variables: `TASKS_` for bin `tasks`. The one place it is computed; everything
 * else asks `toolEnv` (its `prefix`, `name()`, `raw()`), or this function where no environment is read.
 */
export function envPrefix(bin: string): string {
  let prefix = prefixes.get(bin)
  if (prefix === undefined) {
    // `@` is dropped, as oclif drops it (`@acme/tool`: `ACME_TOOL_`); any other character not a letter or digit is `_`.
    const name = bin.replaceAll('@', '')
    prefix = `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`
    if (prefixes.size >= 64) prefixes.clear()
    prefixes.set(bin, prefix)
  }
  return prefix
}
