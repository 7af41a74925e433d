import { describe, expect, it } from 'vitest'
import { envelopeViolations } from '../../../src/testing/envelope.js'

const catalogue = { entries: {}, extensions: [], lookup: () => undefined }
const envelope = (data: unknown) =>
  `${JSON.stringify({ ok: true, schema_version: '1.0', data, meta: { duration_ms: 1 } })}\n`

describe('envelopeViolations: key names', () => {
  it("accepts JSON Schema's own keywords where a document carries schemas (the compact reference's $defs)", () => {
    expect(envelopeViolations(envelope({ commands: [], $defs: { '1': { type: 'string' } } }), 0, catalogue)).toEqual([])
  })

  it('flags any other key that is not snake_case, wherever it is', () => {
    expect(envelopeViolations(envelope({ $other: 1, nested: { camelCase: 2 } }), 0, catalogue)).toEqual([
      { rule: 'snake_case_keys', evidence: '$.data.$other' },
      { rule: 'snake_case_keys', evidence: '$.data.nested.camelCase' },
    ])
  })
})
