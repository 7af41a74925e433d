import { describe, expect, it } from 'vitest'
import { addSensitiveKeys, REDACTED, redactForOutput as redact } from '../../../src/output/redact.js'

describe('redact, remembering its verdicts per key', () => {
  it('judges keys the same after thousands of distinct ones, and after a tool adds its own', () => {
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`item_${i}`, 'x']))
    expect(Object.values(redact(many)).every((v) => v === 'x')).toBe(true)
    expect(redact({ api_key: 'k', note: 'n', shipping_code: 'c' })).toEqual({
      api_key: REDACTED,
      note: 'n',
      shipping_code: 'c',
    })
    addSensitiveKeys(['shipping_code'])
    expect(redact({ shipping_code: 'c' })).toEqual({ shipping_code: REDACTED })
  })
})

describe('redact, remembering its scrubbed key names', () => {
  it('scrubs a key name again once a tool declares a key that makes it sensitive', () => {
    const key = 'x pin=12345678'
    expect(Object.keys(redact({ [key]: 1 }))).toEqual([key])
    addSensitiveKeys(['pin'])
    const [name] = Object.keys(redact({ [key]: 1 }))
    expect(name).not.toContain('12345678')
  })
})
