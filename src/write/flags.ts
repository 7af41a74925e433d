import type { Interfaces } from '@oclif/core'
import { usageError } from '../errors/agent-error.js'
import { Flags } from '../flags.js'
import { WAIT_FLAGS } from '../jobs/wait-flags.js'
import { GLOBAL_FLAGS } from '../universal-flags/globals.js'

/** Flags every write command has. */
export const WRITE_FLAGS = {
  'dry-run': Flags.boolean({
    helpGroup: 'WRITE',
    description: 'Preview the change and get a confirm token; change nothing.',
  }),
  confirm: Flags.string({
    helpGroup: 'WRITE',
    helpValue: 'token',
    description: 'Apply the change previewed by --dry-run, with its token.',
  }),
}

/** `--idempotency-key` (alias `--request-id`) for create-like commands. */
export function idempotencyFlags(): { 'idempotency-key': Interfaces.OptionFlag<string | undefined> } {
  return {
    'idempotency-key': Flags.string({
      aliases: ['request-id'],
      helpGroup: 'WRITE',
      description: 'Make retries safe: a retry with the same key and arguments returns the first result.',
    }),
  }
}

// How the answer is delivered (`--wait`), not what is written: a token never binds it.
const PRESENTATION = new Set([...Object.keys(GLOBAL_FLAGS), ...Object.keys(WAIT_FLAGS), 'dry-run', 'confirm'])

/** What a parsed write call asks for: the mode, the token, the idempotency key, and the arguments a token binds. */
export type WriteRequest = {
  dryRun: boolean
  token: string | undefined
  key: string | undefined
  bound: Record<string, unknown>
}

/** Read a write's flags; `--dry-run` with `--confirm` is `E_USAGE`. */
export function writeRequest(flags: Record<string, unknown>, args: Record<string, unknown>): WriteRequest {
  const dryRun = flags['dry-run'] === true
  const token = typeof flags.confirm === 'string' ? flags.confirm : undefined
  if (dryRun && token !== undefined)
    throw usageError('--dry-run and --confirm cannot be combined', { got: ['--dry-run', '--confirm'] })
  const bound: Record<string, unknown> = { ...args }
  for (const [name, value] of Object.entries(flags))
    if (!PRESENTATION.has(name) && value !== undefined) bound[name] = value
  const key = typeof flags['idempotency-key'] === 'string' ? (flags['idempotency-key'] as string) : undefined
  return { dryRun, token, key, bound }
}
