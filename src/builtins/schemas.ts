import { deprecatedField, type ZodNamespace } from '../index.js'
import { riskSchema } from '../write/risk.js'

const evidence = (z: ZodNamespace) => z.enum(['verified', 'missing', 'not_applicable', 'unknown'])

const deprecation = (z: ZodNamespace) =>
  z.object({ message: z.string(), replaced_by: z.string().nullable(), removed_in: z.string().nullable() })

const param = (z: ZodNamespace) =>
  z.object({
    name: z.string(),
    kind: z.enum(['flag', 'arg']),
    type: z.enum(['boolean', 'string', 'integer', 'enum']),
    required: z.boolean(),
    multiple: z.boolean(),
    default: z.unknown(),
    options: z.array(z.string()).nullable(),
    description: z.string(),
    env: z.string().nullable(),
    char: z.string().nullable(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    deprecated: deprecation(z).optional(),
  })

/** Output of `reference`: the full document, or with `--compact` its compact form (`expandReference` restores it). */
export const referenceSchema = (z: ZodNamespace) => z.union([fullReferenceSchema(z), compactReferenceSchema(z)])

/**
 * `reference --compact`: defaults and derivable keys left out, shared parameters under `param_defs`, shared
 * subschemas under `$defs` (docs/contract.md); the keys not listed are those of the full document.
 */
const compactReferenceSchema = (z: ZodNamespace) =>
  z
    .object({
      compact: z.literal(true),
      commands: z.array(z.object({ path: z.string() }).catchall(z.unknown())),
      param_defs: z.array(z.record(z.string(), z.unknown())),
      $defs: z.record(z.string(), z.unknown()),
    })
    .catchall(z.unknown())

const fullReferenceSchema = (z: ZodNamespace) =>
  z.object({
    tool: z.string(),
    version: z.string(),
    schema_version: z.string(),
    contract_version: z.number().int(),
    description: z.string(),
    risk_tier: z.string(),
    release_readiness: z.object({
      level: z.enum(['stable', 'beta', 'unpublishable']),
      fcc_required: z.boolean(),
      fcc_status: evidence(z),
      mock_upstream_required: z.boolean(),
      mock_upstream_status: evidence(z),
      live_smoke_required_for_stable: z.boolean(),
      live_smoke_status: evidence(z),
      reason: z.string(),
      required_evidence: z.array(z.string()),
    }),
    global_flags: z.array(param(z)),
    command_kinds: z.object({ read: z.string(), local: z.string(), write: z.string() }),
    commands: z.array(
      z.object({
        path: z.string(),
        type: z.enum(['read', 'local', 'write']),
        summary: z.string(),
        description: z.string(),
        params: z.array(param(z)),
        output_schema: z.record(z.string(), z.unknown()),
        result_schema: z.record(z.string(), z.unknown()).nullable(),
        schema_version: z.string(),
        errors: z.array(z.string()),
        examples: z.array(z.string()).min(1),
        stream: z.boolean(),
        raw: z.boolean(),
        async: z.boolean(),
        fields: z.object({ paths: z.array(z.string()), item_shorthand: z.array(z.string()) }),
        pagination: z
          .object({ cursor_param: z.literal('--cursor'), repeat_filters: z.literal(true), order: z.literal('keyset') })
          .nullable(),
        hints: z.object({ destructive: z.boolean(), idempotent: z.boolean(), open_world: z.boolean() }).optional(),
        risk: riskSchema(z).optional(),
        deprecated: deprecation(z).optional(),
        deprecated_fields: z.array(deprecation(z).extend({ path: z.string() })).optional(),
      }),
    ),
    exit_codes: z.record(z.string(), z.string()),
    error_codes: z.record(
      z.string(),
      z.object({ exit: z.number().int(), retryable: z.boolean(), description: z.string() }),
    ),
  })

/** Output of `context`. */
export const contextSchema = (z: ZodNamespace) =>
  z.object({
    tool: z.string(),
    version: z.string(),
    contract_version: z.number().int(),
    env: z.string(),
    environment: deprecatedField(z.string(), { replacedBy: 'env', removedIn: '2.0' }),
    account: z.string().nullable(),
    paths: z.object({ config_dir: z.string(), data_dir: z.string(), cache_dir: z.string() }),
    config: z.record(z.string(), z.unknown()),
    credentials: z.object({
      configured: z.boolean(),
      valid: z.boolean(),
      expires_at: z.iso.datetime().nullable(),
      refreshable: z.boolean(),
      source: z.enum(['env', 'keychain', 'file']).nullable(),
    }),
    node_version: z.string(),
    platform: z.string(),
    update_check: z
      .object({ latest: z.string(), checked_at: z.string() })
      .nullable()
      .describe('The latest release the last `update --check` saw, and when; null when no check is cached.'),
  })

/** Output of `doctor`. */
export const doctorSchema = (z: ZodNamespace) =>
  z.object({
    checks: z.array(
      z.object({
        check: z.string(),
        status: z.enum(['pass', 'warn', 'fail']),
        message: z.string(),
        fix: z.string().nullable(),
      }),
    ),
    summary: z.object({ pass: z.number().int(), warn: z.number().int(), fail: z.number().int() }),
    trusted_root: z
      .object({
        source: z.enum(['pinned', 'tuf_cache', 'tuf_seed']),
        path: z.string().nullable(),
        mirror: z.string().nullable(),
        fetched_at: z.iso.datetime().nullable(),
        expires_at: z.iso.datetime().nullable(),
        offline_until: z.iso.datetime().nullable(),
        age_days: z.number().int().nullable(),
      })
      .nullable(),
  })

const changeList = (z: ZodNamespace) => z.array(z.string())

/** Output of `changelog`. */
export const changelogSchema = (z: ZodNamespace) =>
  z.object({
    current_version: z.string(),
    since: z.string().nullable(),
    entries: z.array(
      z.object({
        version: z.string(),
        date: z.string().nullable(),
        yanked: z.boolean(),
        changes: z.object({
          added: changeList(z),
          changed: changeList(z),
          fixed: changeList(z),
          deprecated: changeList(z),
          removed: changeList(z),
          security: changeList(z),
        }),
      }),
    ),
  })
