/*
 * The output schema of the builtins plugin's `reference` command (src/builtins/schemas.ts) as its full
 * document prints it. The compact form names it instead of repeating ~3 KB an agent reading the document already
 * holds an instance of; test/cli/describe/reference-compact.test.ts fails when this copy and the plugin drift apart
 * (regenerate it from `tasks reference`). Compaction uses the name only for a schema equal to this one, and the
 * name carries a digest of it, so a document is never expanded with another version's schema.
 */

/** The `reference` command's output schema, as JSON Schema 2020-12. */
export const REFERENCE_OUTPUT_SCHEMA: Record<string, unknown> = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  anyOf: [
    {
      type: 'object',
      properties: {
        tool: { type: 'string' },
        version: { type: 'string' },
        schema_version: { type: 'string' },
        contract_version: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        description: { type: 'string' },
        risk_tier: { type: 'string' },
        release_readiness: {
          type: 'object',
          properties: {
            level: { type: 'string', enum: ['stable', 'beta', 'unpublishable'] },
            fcc_required: { type: 'boolean' },
            fcc_status: { type: 'string', enum: ['verified', 'missing', 'not_applicable', 'unknown'] },
            mock_upstream_required: { type: 'boolean' },
            mock_upstream_status: { type: 'string', enum: ['verified', 'missing', 'not_applicable', 'unknown'] },
            live_smoke_required_for_stable: { type: 'boolean' },
            live_smoke_status: { type: 'string', enum: ['verified', 'missing', 'not_applicable', 'unknown'] },
            reason: { type: 'string' },
            required_evidence: { type: 'array', items: { type: 'string' } },
          },
          required: [
            'level',
            'fcc_required',
            'fcc_status',
            'mock_upstream_required',
            'mock_upstream_status',
            'live_smoke_required_for_stable',
            'live_smoke_status',
            'reason',
            'required_evidence',
          ],
          additionalProperties: false,
        },
        global_flags: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              kind: { type: 'string', enum: ['flag', 'arg'] },
              type: { type: 'string', enum: ['boolean', 'string', 'integer', 'enum'] },
              required: { type: 'boolean' },
              multiple: { type: 'boolean' },
              default: {},
              options: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
              description: { type: 'string' },
              env: { type: ['string', 'null'] },
              char: { type: ['string', 'null'] },
              minimum: { type: 'number' },
              maximum: { type: 'number' },
              deprecated: {
                type: 'object',
                properties: {
                  message: { type: 'string' },
                  replaced_by: { type: ['string', 'null'] },
                  removed_in: { type: ['string', 'null'] },
                },
                required: ['message', 'replaced_by', 'removed_in'],
                additionalProperties: false,
              },
            },
            required: [
              'name',
              'kind',
              'type',
              'required',
              'multiple',
              'default',
              'options',
              'description',
              'env',
              'char',
            ],
            additionalProperties: false,
          },
        },
        command_kinds: {
          type: 'object',
          properties: { read: { type: 'string' }, local: { type: 'string' }, write: { type: 'string' } },
          required: ['read', 'local', 'write'],
          additionalProperties: false,
        },
        commands: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              path: { type: 'string' },
              type: { type: 'string', enum: ['read', 'local', 'write'] },
              summary: { type: 'string' },
              description: { type: 'string' },
              params: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    name: { type: 'string' },
                    kind: { type: 'string', enum: ['flag', 'arg'] },
                    type: { type: 'string', enum: ['boolean', 'string', 'integer', 'enum'] },
                    required: { type: 'boolean' },
                    multiple: { type: 'boolean' },
                    default: {},
                    options: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
                    description: { type: 'string' },
                    env: { type: ['string', 'null'] },
                    char: { type: ['string', 'null'] },
                    minimum: { type: 'number' },
                    maximum: { type: 'number' },
                    deprecated: {
                      type: 'object',
                      properties: {
                        message: { type: 'string' },
                        replaced_by: { type: ['string', 'null'] },
                        removed_in: { type: ['string', 'null'] },
                      },
                      required: ['message', 'replaced_by', 'removed_in'],
                      additionalProperties: false,
                    },
                  },
                  required: [
                    'name',
                    'kind',
                    'type',
                    'required',
                    'multiple',
                    'default',
                    'options',
                    'description',
                    'env',
                    'char',
                  ],
                  additionalProperties: false,
                },
              },
              output_schema: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} },
              result_schema: {
                anyOf: [
                  { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} },
                  { type: 'null' },
                ],
              },
              schema_version: { type: 'string' },
              errors: { type: 'array', items: { type: 'string' } },
              examples: { minItems: 1, type: 'array', items: { type: 'string' } },
              stream: { type: 'boolean' },
              raw: { type: 'boolean' },
              async: { type: 'boolean' },
              fields: {
                type: 'object',
                properties: {
                  paths: { type: 'array', items: { type: 'string' } },
                  item_shorthand: { type: 'array', items: { type: 'string' } },
                },
                required: ['paths', 'item_shorthand'],
                additionalProperties: false,
              },
              pagination: {
                anyOf: [
                  {
                    type: 'object',
                    properties: {
                      cursor_param: { type: 'string', const: '--cursor' },
                      repeat_filters: { type: 'boolean', const: true },
                      order: { type: 'string', const: 'keyset' },
                    },
                    required: ['cursor_param', 'repeat_filters', 'order'],
                    additionalProperties: false,
                  },
                  { type: 'null' },
                ],
              },
              hints: {
                type: 'object',
                properties: {
                  destructive: { type: 'boolean' },
                  idempotent: { type: 'boolean' },
                  open_world: { type: 'boolean' },
                },
                required: ['destructive', 'idempotent', 'open_world'],
                additionalProperties: false,
              },
              risk: {
                type: 'object',
                properties: {
                  action: { type: 'string', enum: ['create', 'update', 'delete', 'execute'] },
                  blast_radius: { type: 'string', enum: ['one', 'set', 'all'] },
                  reversible: { type: 'boolean' },
                  undo: { type: ['string', 'null'] },
                  cost: { type: ['string', 'null'] },
                },
                required: ['action', 'blast_radius', 'reversible', 'undo', 'cost'],
                additionalProperties: false,
              },
              deprecated: {
                type: 'object',
                properties: {
                  message: { type: 'string' },
                  replaced_by: { type: ['string', 'null'] },
                  removed_in: { type: ['string', 'null'] },
                },
                required: ['message', 'replaced_by', 'removed_in'],
                additionalProperties: false,
              },
              deprecated_fields: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    message: { type: 'string' },
                    replaced_by: { type: ['string', 'null'] },
                    removed_in: { type: ['string', 'null'] },
                    path: { type: 'string' },
                  },
                  required: ['message', 'replaced_by', 'removed_in', 'path'],
                  additionalProperties: false,
                },
              },
            },
            required: [
              'path',
              'type',
              'summary',
              'description',
              'params',
              'output_schema',
              'result_schema',
              'schema_version',
              'errors',
              'examples',
              'stream',
              'raw',
              'async',
              'fields',
              'pagination',
            ],
            additionalProperties: false,
          },
        },
        exit_codes: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string' } },
        error_codes: {
          type: 'object',
          propertyNames: { type: 'string' },
          additionalProperties: {
            type: 'object',
            properties: {
              exit: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
              retryable: { type: 'boolean' },
              description: { type: 'string' },
            },
            required: ['exit', 'retryable', 'description'],
            additionalProperties: false,
          },
        },
      },
      required: [
        'tool',
        'version',
        'schema_version',
        'contract_version',
        'description',
        'risk_tier',
        'release_readiness',
        'global_flags',
        'command_kinds',
        'commands',
        'exit_codes',
        'error_codes',
      ],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: {
        compact: { type: 'boolean', const: true },
        commands: {
          type: 'array',
          items: {
            type: 'object',
            properties: { path: { type: 'string' } },
            required: ['path'],
            additionalProperties: {},
          },
        },
        param_defs: {
          type: 'array',
          items: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} },
        },
        $defs: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} },
      },
      required: ['compact', 'commands', 'param_defs', '$defs'],
      additionalProperties: {},
    },
  ],
}

const PREFIX = 'agentcli:reference-output@'

/**
 * The first 12 hex digits of the SHA-256 of `JSON.stringify(REFERENCE_OUTPUT_SCHEMA)`: written out, so a compact
 * `reference` does not load node:crypto (≈ 5 ms of a start) for a constant. `test/unit/describe/reference-compact.test.ts`
 * computes it again and fails when the schema changes without it.
 */
export const REFERENCE_OUTPUT_DIGEST = '40e58179f105'

/** The `$ref` the compact form writes for {@link REFERENCE_OUTPUT_SCHEMA}: its name and a digest of its content. */
export function referenceSchemaRef(): string {
  return `${PREFIX}${REFERENCE_OUTPUT_DIGEST}`
}

/**
 * The schema a compact document's framework `$ref` names. A name this version does not know (another framework
 * version's schema) is an error, never a guess.
 */
export function referenceSchemaOf(name: string): Record<string, unknown> {
  if (name !== referenceSchemaRef())
    throw new Error(`cannot expand: the document names ${name}, this agentcli knows ${referenceSchemaRef()}`)
  return structuredClone(REFERENCE_OUTPUT_SCHEMA)
}

/** Whether `schema` is a compact document's reference to a framework schema. */
export function isFrameworkRef(schema: unknown): schema is { $ref: string } {
  if (typeof schema !== 'object' || schema === null) return false
  const keys = Object.keys(schema)
  const $ref = (schema as { $ref?: unknown }).$ref
  return keys.length === 1 && typeof $ref === 'string' && $ref.startsWith(PREFIX)
}
