import type { ZodNamespace } from 'agentcli'

/** The printed form of a note, shared by the commands' output schemas. */
export const noteSchema = (z: ZodNamespace) =>
  z.object({ name: z.string(), text: z.string(), version: z.number().int(), updated_at: z.string() })
