import type { ZodType } from 'zod'
import type { ZodNamespace } from '../schema/output.js'

/** JSON Schema 2020-12 of a zod schema; types JSON cannot express are left open rather than failing. */
export function toJsonSchema(z: ZodNamespace, schema: ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output' }) as Record<
    string,
    unknown
  >
}
