import type { ZodNamespace } from '../schema/output.js'

/** One change a write would make (spec 002 §7). */
export type Change = {
  /** What happens to the resource (`create`, `update`, `delete`, …). */
  action: string
  /** The kind of resource changed (`note`, `file`, …). */
  resource: string
  /** The resource's id, or null when it has none yet (a create). */
  id: string | null
  /** The resource before the change (null when it does not exist yet). */
  before: unknown
  /** The resource after the change (null when it is deleted). */
  after: unknown
}

/** The `data` of a `--dry-run`, as a schema (added to every write command's `output_schema`). */
export const dryRunSchema = (z: ZodNamespace) =>
  z.object({
    preview: z.object({
      changes: z.array(
        z.object({
          action: z.string(),
          resource: z.string(),
          id: z.string().nullable(),
          before: z.unknown(),
          after: z.unknown(),
        }),
      ),
      rejected: z
        .array(z.object({ id: z.string(), error: z.object({ code: z.string(), message: z.string() }) }))
        .optional(),
      already_applied: z
        .array(z.object({ id: z.string(), action: z.string() }))
        .optional()
        .describe(
          'Items of this batch that landed in an earlier run with the same idempotency key: not applied again.',
        ),
      impact: z
        .object({
          action: z.string(),
          blast_radius: z.string(),
          target_count: z.number().int(),
          targets: z.array(z.string()),
          targets_more: z.number().int().optional(),
          reversible: z.boolean(),
          undo: z.string().nullable(),
          cost: z.string().nullable(),
        })
        .describe('How many targets, which ones, whether it can be undone.'),
    }),
    approval: z
      .object({
        request_id: z.string(),
        rule: z.string(),
        required: z.number().int(),
        request: z.string(),
        approve_command: z.string(),
      })
      .optional()
      .describe('A person must approve before --confirm applies it.'),
    confirm_token: z.string().regex(/^ct_/),
    expires_at: z.iso.datetime(),
  })

/** One item of a batch result (spec 002 §9). */
export type BatchItem =
  | { id: string; ok: true; action: string; already_applied?: boolean }
  | { id: string; ok: false; error: { code: string; message: string } }

/** The `data` of a batch write. */
export const batchSchema = (z: ZodNamespace) =>
  z.object({
    results: z.array(
      z.union([
        z.object({
          id: z.string(),
          ok: z.literal(true),
          action: z.string(),
          already_applied: z.boolean().optional().describe('Landed in an earlier run of this batch (same key).'),
        }),
        z.object({ id: z.string(), ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
      ]),
    ),
    summary: z.object({
      ok_count: z.number().int(),
      error_count: z.number().int(),
      already_applied_count: z.number().int().optional(),
    }),
  })
