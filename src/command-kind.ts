/**
 * What a call can change, declared by every command (`static kind`) and shown in `reference`, SKILL.md and
 * `--help`, so an agent knows which calls are safe to make blind and which leave an audit line.
 */
export const COMMAND_KINDS = {
  read: 'Reads only: changes nothing outside the cache dir; safe to call and retry blind.',
  local:
    'Changes local state (a session, stored credentials, a job) without a confirm token; audited. Call it only when that change is wanted.',
  write: 'Changes state through dry-run → confirm: run it with --dry-run, then --confirm <token>; audited.',
} as const

/** `read`, `local` or `write`: see {@link COMMAND_KINDS}. */
export type CommandKind = keyof typeof COMMAND_KINDS

/** Whether `value` names a kind (a command class or manifest entry may carry anything). */
export function isCommandKind(value: unknown): value is CommandKind {
  return typeof value === 'string' && Object.hasOwn(COMMAND_KINDS, value)
}

/**
 * The kind of a command class or manifest entry: undeclared is `read` (the base class's default); anything else
 * that is not a kind is a tool bug, reported rather than guessed, so a typo never passes as a safe command.
 */
export function kindOf(command: { id?: string; kind?: unknown }): CommandKind {
  if (command.kind === undefined) return 'read'
  if (isCommandKind(command.kind)) return command.kind
  throw new Error(
    `${command.id ?? 'a command'} declares kind ${JSON.stringify(command.kind)}; use one of ${Object.keys(COMMAND_KINDS).join(', ')}`,
  )
}
