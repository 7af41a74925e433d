import type { CommandClass } from '../runtime/base-command.js'

/**
 * The optional built-ins a tool chooses. `reference`, `context`, `doctor` and `changelog` are always shipped: they
 * are how an agent discovers and diagnoses any tool. `update` (self-update from signed releases), the `job`
 * commands (async jobs) and `mcp` (the MCP server) are on unless turned off. `approve` is always shipped too: any
 * write may be held for a person's approval by a policy.
 */
export type BuiltinsChoice = {
  /** Ship `update`. Turn off for a tool that is not released with checksums and signatures. */
  update?: boolean
  /** Ship `job list|status|result|cancel|worker`. Turn off for a tool without async commands. */
  jobs?: boolean
  /** Ship `mcp` (serve the tool over the Model Context Protocol). Turn off for a tool that must not be an MCP server. */
  mcp?: boolean
}

/**
 * Pick the built-ins a tool ships from `all` (the built-ins' `COMMANDS`). A command left out is not in the tool's
 * manifest, `reference` or SKILL.md, and not in its bundle: the bundle holds only the modules of the commands it lists.
 */
export function pickBuiltins(
  all: Readonly<Record<string, CommandClass>>,
  choice: BuiltinsChoice = {},
): Readonly<Record<string, CommandClass>> {
  const keep = (id: string) => {
    if (id === 'update') return choice.update !== false
    if (id === 'mcp') return choice.mcp !== false
    if (id === 'job' || id.startsWith('job:')) return choice.jobs !== false
    return true
  }
  return Object.fromEntries(Object.entries(all).filter(([id]) => keep(id)))
}
