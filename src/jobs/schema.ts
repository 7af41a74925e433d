import type { ZodNamespace } from '../schema/output.js'

/** The `data` of a submission (spec 002 §15.2). */
export const submittedSchema = (z: ZodNamespace) =>
  z.object({ job_id: z.string(), status: z.literal('pending'), poll: z.string(), result: z.string() })
