import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { REFERENCE_OUTPUT_DIGEST, REFERENCE_OUTPUT_SCHEMA } from '../../../src/describe/_reference-schema.js'
import type { CommandDescription } from '../../../src/describe/command.js'
import { compactReference } from '../../../src/describe/compact.js'
import { expandReference } from '../../../src/describe/expand.js'
import type { Reference } from '../../../src/describe/reference.js'

const DIALECT = 'https://json-schema.org/draft/2020-12/schema'

function command(path: string, output_schema: Record<string, unknown>, extra: Partial<CommandDescription> = {}) {
  return {
    path,
    type: 'read',
    summary: `Do ${path}`,
    description: `Do ${path}`,
    params: [],
    output_schema,
    result_schema: null,
    schema_version: '1.0',
    errors: ['E_CONFIG', 'E_INTERNAL', 'E_INTERRUPTED', 'E_USAGE', 'E_VALIDATION'],
    examples: [`tool ${path}`],
    stream: false,
    raw: false,
    async: false,
    fields: { paths: ['*'], item_shorthand: [] },
    pagination: null,
    hints: { destructive: false, idempotent: false, open_world: false },
    ...extra,
  } as CommandDescription
}

function reference(commands: CommandDescription[]): Reference {
  return {
    tool: 'tool',
    version: '1.0.0',
    schema_version: '1.0',
    contract_version: 1,
    description: '',
    risk_tier: 'low',
    release_readiness: {} as Reference['release_readiness'],
    global_flags: [],
    command_kinds: { read: 'r', local: 'l', write: 'w' },
    commands,
    exit_codes: { '0': 'ok' },
    error_codes: { E_USAGE: { exit: 2, retryable: false, description: 'usage' } },
  }
}

const roundTrip = (ref: Reference) => expandReference(JSON.parse(JSON.stringify(compactReference(ref))))

describe('compactReference / expandReference', () => {
  it('shares a repeated subschema under $defs and puts it back', () => {
    const item = {
      type: 'object',
      properties: { id: { type: 'string' }, title: { type: 'string', description: 'The title of it.' } },
      required: ['id', 'title'],
      additionalProperties: false,
    }
    const ref = reference([
      command('a', { $schema: DIALECT, ...item }, { fields: { paths: ['id', 'title'], item_shorthand: [] } }),
      command(
        'b',
        { $schema: DIALECT, type: 'array', items: item },
        { fields: { paths: ['id', 'title'], item_shorthand: [] } },
      ),
    ])
    const compact = compactReference(ref)
    expect(Object.keys(compact.$defs)).toHaveLength(1)
    expect(JSON.stringify(compact.commands)).toContain('"$ref":"#/$defs/')
    expect(roundTrip(ref)).toEqual(ref)
  })

  it('an original $ref, a schema without the dialect and an open object survive exactly', () => {
    const ref = reference([
      command('a', {
        $schema: DIALECT,
        $defs: { n: { type: 'string', description: 'a long enough description to be shared' } },
        type: 'object',
        properties: { x: { $ref: '#/$defs/n' }, y: { $ref: '#/$defs/n' } },
      }),
      command('b', { properties: { z: { type: 'number' } } }),
    ])
    const compact = compactReference(ref)
    // `properties` with neither `type` nor `additionalProperties` reads as the shorthand: so it is off here.
    expect(compact.closed_objects).toBe(false)
    expect(roundTrip(ref)).toEqual(ref)
  })

  it('a command the rules cannot rebuild is written verbatim', () => {
    // Fewer error codes than every command raises, and no hints: nothing the rules can derive.
    const { hints: _, ...odd } = command('odd', {}, { errors: ['E_USAGE'] })
    const ref = reference([odd as CommandDescription])
    const compact = compactReference(ref)
    expect(compact.commands[0]).toMatchObject({ verbatim: true })
    expect(roundTrip(ref)).toEqual(ref)
  })

  it('leaves defaults out and shares parameters by index (never by a name the redactor blanks)', () => {
    const key = {
      name: 'api-key',
      kind: 'flag',
      type: 'string',
      required: true,
      multiple: false,
      default: null,
      options: null,
      description: 'The key.',
      env: null,
      char: null,
    } as const
    const ref = reference([command('a', {}, { params: [key] }), command('b', {}, { params: [key] })])
    const compact = compactReference(ref)
    expect(compact.param_defs).toEqual([{ name: 'api-key', required: true, description: 'The key.' }])
    expect(compact.commands.map((c) => c.params)).toEqual([[0], [0]])
    expect(compact.commands[0]).toEqual({ path: 'a', summary: 'Do a', params: [0] })
    expect(roundTrip(ref)).toEqual(ref)
  })

  it('a full document passes through expandReference unchanged', () => {
    const ref = reference([command('a', {})])
    expect(expandReference(ref)).toBe(ref)
  })

  it('derives examples, upstream codes, deprecation messages and readiness, and keeps what differs', () => {
    const upstream = ['E_AUTH', 'E_CONFLICT', 'E_FORBIDDEN', 'E_NETWORK', 'E_NOT_FOUND', 'E_RATE_LIMITED']
    const base = ['E_CONFIG', 'E_INTERNAL', 'E_INTERRUPTED', 'E_USAGE', 'E_VALIDATION']
    const world = { destructive: false, idempotent: false, open_world: true }
    const ref = reference([
      command(
        'a',
        {},
        {
          examples: ['tool a', 'tool a --x 1', 'tool b --y', 'tool a tool b'],
          errors: [...base, ...upstream, 'E_SERVER', 'E_TIMEOUT'].sort(),
          hints: world,
          deprecated: { message: "command 'a' is deprecated; use tool b", replaced_by: 'tool b', removed_in: null },
        },
      ),
      command('b', {}, { examples: ['echo 1 | tool b'], errors: [...base, 'E_NETWORK'].sort(), hints: world }),
    ])
    ref.release_readiness = {
      level: 'beta',
      fcc_required: true,
      fcc_status: 'verified',
      mock_upstream_required: false,
      mock_upstream_status: 'not_applicable',
      live_smoke_required_for_stable: true,
      live_smoke_status: 'missing',
      reason: 'Stable requires recorded live smoke/E2E evidence (live_smoke_status is missing).',
      required_evidence: ['functional_contract_coverage_100', 'recorded_live_smoke_for_stable'],
    }
    ref.error_codes.E_TIMEOUT = { exit: 8, retryable: true, description: 'late' }
    ref.error_codes.E_ODD = { exit: 8, retryable: false, description: 'odd' }
    const compact = compactReference(ref)
    const [a, b] = compact.commands
    expect(a).toMatchObject({
      examples: ['', '--x 1', 'tool b --y', 'tool a tool b'],
      deprecated: { replaced_by: 'tool b' },
    })
    expect(a).not.toHaveProperty('errors')
    expect(a?.deprecated).not.toHaveProperty('message')
    // Not every upstream code: the list is written, and says the rule does not hold.
    expect(b).toMatchObject({ examples: ['echo 1 | tool b'], examples_relative: false, upstream_errors: false })
    expect(compact.release_readiness).toEqual({
      level: 'beta',
      fcc_status: 'verified',
      mock_upstream_status: 'not_applicable',
      live_smoke_status: 'missing',
    })
    expect(compact.error_codes.E_TIMEOUT).toEqual({ exit: 8, description: 'late' })
    expect(compact.error_codes.E_ODD).toEqual({ exit: 8, retryable: false, description: 'odd' })
    expect(roundTrip(ref)).toEqual(ref)
  })

  it('writes the dry-run preview once, literal types implied, the reference schema by a digest name', () => {
    const preview = {
      type: 'object',
      properties: { confirm_token: { type: 'string' } },
      required: ['confirm_token'],
      additionalProperties: false,
    }
    const done = {
      type: 'object',
      properties: { ok: { type: 'boolean', const: true } },
      required: ['ok'],
      additionalProperties: false,
    }
    const write = {
      type: 'write',
      errors: [
        'E_CONFIG',
        'E_CONFIRMATION_REQUIRED',
        'E_CONFLICT',
        'E_INTERNAL',
        'E_INTERRUPTED',
        'E_IO',
        'E_TIMEOUT',
        'E_USAGE',
        'E_VALIDATION',
      ],
      hints: { destructive: true, idempotent: false, open_world: false },
    } satisfies Partial<CommandDescription>
    const ref = reference([
      command('a', { $schema: DIALECT, anyOf: [done, preview] }, write),
      command('b', { $schema: DIALECT, ...preview }, write),
      command('reference', REFERENCE_OUTPUT_SCHEMA),
    ])
    const compact = compactReference(ref)
    expect(compact.dry_run_schema).toEqual({ properties: { confirm_token: { type: 'string' } } })
    expect(compact.commands[0]?.output_schema).toEqual({ properties: { ok: { const: true } } })
    expect(compact.commands[1]).not.toHaveProperty('output_schema')
    expect(compact.commands[2]?.output_schema).toEqual({
      $ref: expect.stringMatching(/^agentcli:reference-output@[0-9a-f]{12}$/),
    })
    expect(roundTrip(ref)).toEqual(ref)
    // Another version's reference schema is not guessed at.
    const other = JSON.parse(JSON.stringify(compact))
    other.commands[2].output_schema.$ref = 'agentcli:reference-output@000000000000'
    expect(() => expandReference(other)).toThrow(/cannot expand/)
  })

  it("the reference schema's written-out digest is the SHA-256 of the schema as it is now", () => {
    const digest = createHash('sha256').update(JSON.stringify(REFERENCE_OUTPUT_SCHEMA)).digest('hex').slice(0, 12)
    expect(REFERENCE_OUTPUT_DIGEST).toBe(digest)
  })

  it('a literal without its type keeps every type in the document', () => {
    const ref = reference([command('a', { $schema: DIALECT, properties: { s: { enum: ['x', 'y'] } } })])
    const compact = compactReference(ref)
    expect(compact.implied_literal_types).toBe(false)
    expect(roundTrip(ref)).toEqual(ref)
  })

  it("leaves out zod's date-time pattern, and keeps every pattern when one date-time schema has another or none", () => {
    const when = { type: 'string', format: 'date-time', pattern: z.toJSONSchema(z.iso.datetime()).pattern }
    const ref = reference([command('a', { $schema: DIALECT, properties: { at: when, again: when } })])
    const compact = compactReference(ref)
    expect(compact.implied_formats).toBe(true)
    expect(JSON.stringify(compact)).not.toContain('02-29')
    expect(roundTrip(ref)).toEqual(ref)
    const bare = { type: 'string', format: 'date-time' }
    const mixed = reference([command('a', { $schema: DIALECT, properties: { at: when, other: bare } })])
    expect(compactReference(mixed).implied_formats).toBe(false)
    expect(roundTrip(mixed)).toEqual(mixed)
  })
})
