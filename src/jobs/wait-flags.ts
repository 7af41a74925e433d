import * as OclifFlags from '@oclif/core/flags'
import { Flags } from '../flags.js'

/**
 * The flags every async command (`static async = true`) gets: block until the job settles and answer with its
 * final envelope, instead of the submission. They change how the answer is delivered, never what is written, so a
 * confirm token does not bind them.
 */
export const WAIT_FLAGS = {
  wait: OclifFlags.boolean({
    helpGroup: 'ASYNC',
    description: "Block until the job settles and return the job's final envelope (its result, or its error).",
  }),
  'wait-timeout': Flags.integer({
    helpGroup: 'ASYNC',
    min: 1,
    max: 86_400,
    default: 600,
    description:
      'Seconds --wait waits at most; then E_TIMEOUT with the job id and the poll command (the job keeps running).',
  }),
}

/**
 * Make a command class's `baseFlags` include {@link WAIT_FLAGS} whenever the subclass is async, so the parser,
 * `--help`, the manifest and `reference` all see them without the author declaring them.
 */
export function addWaitFlags(base: object, flags: Record<string, unknown>): void {
  Object.defineProperty(base, 'baseFlags', {
    configurable: true,
    enumerable: true,
    get(this: { async?: boolean }) {
      return this.async ? { ...flags, ...WAIT_FLAGS } : flags
    },
    // A subclass that assigns its own baseFlags gets a plain property of its own.
    set(this: object, value: unknown) {
      Object.defineProperty(this, 'baseFlags', { value, writable: true, configurable: true, enumerable: true })
    },
  })
}
