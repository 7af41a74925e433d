import type { CommandDescription } from '../describe/command.js'

/** MCP tool annotations (hints for clients; they change nothing in how a call runs). */
export type ToolHints = {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

/**
 * The annotations of a command's tool, from what it declares. The one place they are derived: `type` is the
 * command's kind (`read`, `local` or `write`); a read only reads (so it is idempotent), a write is destructive
 * unless its author declared it is not, a command that takes an idempotency key is idempotent, and only a command
 * declared to call an upstream is open-world.
 */
export function toolAnnotations(c: Pick<CommandDescription, 'type' | 'params'> & { hints?: Hints }): ToolHints {
  const kind = String(c.type)
  const hints = c.hints ?? { destructive: true, idempotent: false, open_world: false }
  const readOnly = kind === 'read'
  return {
    readOnlyHint: readOnly,
    destructiveHint: kind === 'write' && hints.destructive,
    idempotentHint: readOnly || hints.idempotent || c.params.some((p) => p.name === 'idempotency-key'),
    openWorldHint: hints.open_world,
  }
}

type Hints = NonNullable<CommandDescription['hints']>
