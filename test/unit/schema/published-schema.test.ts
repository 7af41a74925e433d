import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { toJsonSchema } from '../../../src/describe/json-schema.js'
import { deprecatedField, deprecatedFields, publishedSchema } from '../../../src/schema/deprecation.js'

// A deprecated output field: standard keywords in what is published (strict validators compile it), the structured
// replacement and removal kept for `reference`'s deprecated_fields.
describe('deprecated output fields in published schemas', () => {
  const schema = toJsonSchema(
    z,
    z.object({
      env: z.string(),
      environment: deprecatedField(z.string().describe('Where it runs.'), { replacedBy: 'env', removedIn: '2.0' }),
      mode: deprecatedField(z.string()),
    }),
  )

  it('says so in the standard way: deprecated: true, and the description', () => {
    const published = publishedSchema(schema) as { properties: Record<string, Record<string, unknown>> }
    expect(published.properties.environment).toEqual({
      type: 'string',
      deprecated: true,
      description: 'Where it runs. Deprecated: goes away in 2.0; use env.',
    })
    expect(published.properties.mode).toMatchObject({ deprecated: true, description: 'Deprecated.' })
    expect(JSON.stringify(published)).not.toContain('x-deprecation')
  })

  it('keeps the structured deprecation for reference, read before publishing', () => {
    expect(deprecatedFields(schema)).toEqual([
      {
        path: 'environment',
        message: 'field environment is deprecated and goes away in 2.0; use env',
        replaced_by: 'env',
        removed_in: '2.0',
      },
      { path: 'mode', message: 'field mode is deprecated', replaced_by: null, removed_in: null },
    ])
  })

  it('removes the mark only where a schema keyword can be: a property of that name stays', () => {
    const odd = { type: 'object', properties: { 'x-deprecation': { type: 'string' } }, required: ['x-deprecation'] }
    expect(publishedSchema(odd)).toEqual(odd)
    const nested = {
      anyOf: [{ items: { 'x-deprecation': {}, deprecated: true } }],
      $defs: { a: { 'x-deprecation': 1 } },
    }
    expect(publishedSchema(nested)).toEqual({ anyOf: [{ items: { deprecated: true } }], $defs: { a: {} } })
  })
})
