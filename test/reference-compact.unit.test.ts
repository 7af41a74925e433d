import { describe, expect, it } from 'vitest'
import type { CommandDescription } from '../src/describe/command.js'
import { compactReference } from '../src/describe/compact.js'
import { expandReference } from '../src/describe/expand.js'
import type { Reference } from '../src/describe/reference.js'

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
    expect(compact.commands[0]).toEqual({ path: 'a', type: 'read', summary: 'Do a', params: [0] })
    expect(roundTrip(ref)).toEqual(ref)
  })

  it('a full document passes through expandReference unchanged', () => {
    const ref = reference([command('a', {})])
    expect(expandReference(ref)).toBe(ref)
  })
})
