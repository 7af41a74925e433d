/**
 * The prefix of a tool's environment variables: `TASKS_` for bin `tasks`. The one place it is computed; everything
 * else asks `toolEnv` (its `prefix`, `name()`, `raw()`), or this function where no environment is read.
 */
export function envPrefix(bin: string): string {
  // `@` is dropped, as oclif drops it (`@acme/tool`: `ACME_TOOL_`); any other character not a letter or digit is `_`.
  const name = bin.replaceAll('@', '')
  return `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`
}
