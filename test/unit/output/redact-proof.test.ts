import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  addSensitiveKeys,
  REDACTED,
  redactedJson,
  redactForOutput,
  registerSecret,
  resetRedaction,
} from '../../../src/output/redact.js'
import { sensitiveKeysSignature } from '../../../src/output/redact-keys.js'
import { provenUnder, vouchClean } from '../../../src/output/redact-proof.js'

// Other files of the tier share this module's state: each test starts, and leaves, with no secret and no declared key.
beforeEach(() => resetRedaction())
afterEach(() => resetRedaction())

// A value the redactor would change, vouched for anyway: what is printed shows whether the walk skipped it. (The
// build vouches only for what it proved clean; this shows where a proof is honoured and where it is not.)
const vouched = (keys = sensitiveKeysSignature()) => {
  const data = { note: 'a token field', nested: { password: 'hunter22', list: ['Bearer abcdef0123456789xyz'] } }
  vouchClean(data, keys)
  return data
}
const envelope = <T>(data: T, meta: Record<string, unknown> = { duration_ms: 1 }) => ({ ok: true, data, meta })

describe('a value the build proved clean', () => {
  it("is not walked as an envelope's data under the same rules", () => {
    const data = vouched()
    expect(JSON.parse(redactedJson(envelope(data))).data).toEqual(data)
    expect(provenUnder(data)).toBe('[]')
  })

  it('is walked with the rest when anything else in the envelope is redacted (the copying walk skips nothing)', () => {
    const out = JSON.parse(redactedJson(envelope(vouched(), { password: 'p4ssw0rd!' })))
    expect(out.meta).toEqual({ password: REDACTED })
    expect(out.data.nested.password).toBe(REDACTED)
  })

  it('is walked once a secret is registered, or under other declared keys', () => {
    const data = vouched()
    registerSecret('a-secret-value')
    expect(JSON.parse(redactedJson(envelope(data))).data.nested.password).toBe(REDACTED)
    resetRedaction()
    addSensitiveKeys(['shipping_code'])
    expect(JSON.parse(redactedJson(envelope(data))).data.nested.password).toBe(REDACTED)
    expect(JSON.parse(redactedJson(envelope(vouched()))).data.nested.password).toBe('hunter22')
  })

  it("is walked anywhere but as an envelope's data, and by every copying walk", () => {
    const data = vouched()
    expect(JSON.parse(redactedJson(data)).nested.password).toBe(REDACTED)
    expect(JSON.parse(redactedJson({ data: { data } })).data.data.nested.password).toBe(REDACTED)
    expect(JSON.parse(redactedJson({ properties: data })).properties.nested.password).toBe(REDACTED)
    expect(JSON.parse(redactedJson({ data: JSON.stringify(data) })).data).not.toContain('hunter22')
    expect(redactForOutput(envelope(data)).data.nested.password).toBe(REDACTED)
  })

  it('is frozen whole when vouched for, so what is walked later is what was proven', () => {
    const data = vouched()
    expect(() => {
      ;(data.nested as Record<string, unknown>).password = 'changed'
    }).toThrow(TypeError)
    expect(() => data.nested.list.push('more')).toThrow(TypeError)
    expect(provenUnder({})).toBeUndefined()
  })
})
