import type { ZodType } from 'zod'
import type { CommandKind } from '../command-kind.js'
import { dryRunSchema } from '../confirm/preview.js'
import { submittedSchema } from '../jobs/schema.js'
import type { OutputSchema, ZodNamespace } from './output.js'

/** What a command declares about its output (a command class is one). */
export type Declares = { kind?: CommandKind; async?: boolean; output?: OutputSchema | undefined }

/**
 * Everything a command can print as `data`: its declared output (for an async command, the submission; the
 * declared output is then the job's result, which is what a call with `--wait` prints), and for a write the
 * dry-run preview too.
 */
export function effectiveOutput(
  command: Declares,
  z: ZodNamespace,
  options: { waits?: boolean } = {},
): ZodType | undefined {
  const declared = command.async && !options.waits ? submittedSchema(z) : command.output?.(z)
  if (command.kind !== 'write') return declared
  return declared ? z.union([declared, dryRunSchema(z)]) : dryRunSchema(z)
}
